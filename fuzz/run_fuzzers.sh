#!/usr/bin/env bash
# Run every libFuzzer target of a POSENC_FUZZ=ON build for a bounded time and
# fail on any finding (crash, sanitizer report, leak, timeout, broken promise).
#   fuzz/run_fuzzers.sh BUILD_DIR SECONDS_EACH [TARGET...]
# Each target starts from its committed seeds (fuzz/corpus/<target>/, copied to
# a scratch folder so the checkout is not touched). Up to $POSENC_FUZZ_JOBS
# (default: nproc) fuzzers run at once, one process each. Findings are kept
# under BUILD_DIR/fuzz-findings/; replay one with `BUILD_DIR/fuzz/fuzz_T FILE`,
# fix the library, then commit the file to fuzz/corpus/T/ as crash-<what>.
# POSENC_FUZZ_SEED (default 1) fixes libFuzzer's random seed, so a CI run explores
# the same inputs as a longer local run with the same seed: CI fails on a real
# regression, not on the luck of the draw. Set it to 0 for a fresh random seed.
set -euo pipefail
build=$(cd "$1" && pwd); secs=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ]; then targets=("$@"); else
  targets=(); for f in "$build"/fuzz/fuzz_*; do [ -x "$f" ] && targets+=("${f##*/fuzz_}"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "run_fuzzers: no fuzz_* binaries in $build/fuzz (build with POSENC_FUZZ=ON)" >&2; exit 1; }
jobs=${POSENC_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
seed=${POSENC_FUZZ_SEED:-1}
findings="$build/fuzz-findings"; rm -rf "$findings"; mkdir -p "$findings"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/posenc-fuzz-XXXXXX"); trap 'rm -rf "$scratch"' EXIT

run_one() {
  local t=$1 log="$findings/$1.log"
  mkdir -p "$scratch/$t"; cp "$here/corpus/$t"/* "$scratch/$t/" 2>/dev/null || true
  # -timeout: an input slower than 10 s is a hang; -rss_limit_mb: a blow-up is a finding
  if "$build/fuzz/fuzz_$t" -max_total_time="$secs" -seed="$seed" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$findings/$t-" "$scratch/$t" >"$log" 2>&1; then
    echo "fuzz $t: ${secs}s, $(grep -o 'number_of_executed_units: [0-9]*' "$log" | awk '{print $2}') executions, no findings"
  else
    echo "fuzz $t: FINDING (see $log):"; grep -E 'ERROR|FUZZ_REQUIRE|runtime error|SUMMARY|Test unit written' "$log" | head -8
    return 1
  fi
}

status=0; running=0
for t in "${targets[@]}"; do
  run_one "$t" > "$scratch/$t.result" & 
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || status=1; running=$((running - 1)); fi
done
while [ "$running" -gt 0 ]; do wait -n || status=1; running=$((running - 1)); done
for t in "${targets[@]}"; do cat "$scratch/$t.result"; done
exit $status
