#!/bin/sh
# Run the headless-browser test of `posenc report`; exit 77 (skipped, with the
# reason) when node, chromium or the npm packages are missing, never a silent pass.
dir=$(dirname "$0")
if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed (scripts/deps installs nodejs)"; exit 77
fi
if [ ! -d "$dir/node_modules/playwright-core" ]; then
  echo "SKIP: tests/browser/node_modules is missing (scripts/deps runs: npm ci --prefix tests/browser)"; exit 77
fi
exec node "$dir/test_report.mjs"
