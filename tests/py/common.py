"""Shared helpers for posenc's Python tests (run with Debian's /usr/bin/python3)."""
import os
import subprocess
import sys
import tempfile

BIN = os.environ.get("POSENC_BIN", os.path.join(os.path.dirname(__file__), "../../build/posenc"))
GOLDEN = os.environ.get("POSENC_GOLDEN_DIR", os.path.join(os.path.dirname(__file__), "../../../shared/golden"))


class Checks:
    """Counts results, prints evidence, ends with the 'N passed, N failed' line."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, message):
        print(("  ok   " if ok else "  FAIL ") + message, flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)


def run(*args, cwd=None, env=None):
    """Run posenc; return (exit code, stdout, stderr)."""
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env)
    return p.returncode, p.stdout, p.stderr


def tmpdir():
    return tempfile.mkdtemp(prefix="posenc-test-")
