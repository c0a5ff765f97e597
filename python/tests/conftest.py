"""Shared fixtures. Run by CTest (python/CMakeLists.txt) with POSENC_LIBRARY, POSENC_BIN
and POSENC_GOLDEN_DIR set; runnable by hand from the repository root:
    PYTHONPATH=python .venv/bin/python -m pytest -q python/tests
A skipped test counts as a failure: nothing here may pass by not running."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

GOLDEN = os.environ.get("POSENC_GOLDEN_DIR") or os.path.join(ROOT, "tests", "golden")
BIN = os.environ.get("POSENC_BIN", os.path.join(ROOT, "build", "posenc"))


def golden(name):
    path = os.path.join(GOLDEN, name if name.endswith(".npy") else name + ".npy")
    assert os.path.exists(path), "golden %s is missing (POSENC_GOLDEN_DIR=%s)" % (name, GOLDEN)
    return np.load(path)


def manifest():
    with open(os.path.join(GOLDEN, "manifest.json")) as f:
        return {e["file"][:-4]: e for e in json.load(f)["entries"]}


def ulp_f32(a, b):
    """Largest float32 ULP distance between two arrays (same shape), and where."""
    a = np.ascontiguousarray(a, np.float32).reshape(-1).view(np.int32).astype(np.int64)
    b = np.ascontiguousarray(b, np.float32).reshape(-1).view(np.int32).astype(np.int64)
    a = np.where(a < 0, -(a & 0x7FFFFFFF), a)  # map to a monotonic integer line
    b = np.where(b < 0, -(b & 0x7FFFFFFF), b)
    d = np.abs(a - b)
    i = int(np.argmax(d)) if d.size else 0
    return (int(d[i]) if d.size else 0), i


def run_cli(*args):
    done = subprocess.run([BIN] + [str(a) for a in args], capture_output=True, text=True)
    assert done.returncode == 0, "posenc %s failed: %s" % (" ".join(map(str, args)), done.stderr)
    return done


def avx2_fma():
    try:
        flags = open("/proc/cpuinfo").read()
        return " avx2" in flags and " fma" in flags
    except OSError:
        return False


@pytest.fixture
def tmp(tmp_path):
    return tmp_path


def pytest_sessionfinish(session, exitstatus):
    """One hook (a second definition of it in this file would replace the first): a skipped
    test fails the run, then the temporary files go. CTest passes --basetemp (a folder of its
    own per test in the build tree); remove it with everything tmp_path made there."""
    import shutil
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if skipped:
        print("\n%d test(s) skipped: a skip is a failure here" % skipped)
        session.exitstatus = 1
    base = session.config.option.basetemp
    if base:
        shutil.rmtree(base, ignore_errors=True)
