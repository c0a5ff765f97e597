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

# torch._dynamo makes its cache folder at import, under the temporary folder unless
# TORCHINDUCTOR_CACHE_DIR says where (TMPDIR/torchinductor_<user>), and transformers imports it on
# a model's first forward: a folder of this run instead, removed at exit, so that no test leaves
# files in TMPDIR (test_compile.py also moves inductor's precompiled headers, which follow the
# temporary folder itself)
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile
    _INDUCTOR = tempfile.mkdtemp(prefix="posenc-tests-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = _INDUCTOR
    atexit.register(shutil.rmtree, _INDUCTOR, True)

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


_TORCH_TRIG = []


def torch_trig_is_posencs():
    """Whether this torch's float32 cos/sin give the bits of posenc's torch-compat tables (SLEEF
    u10, what Debian's torch 1.13 ran on AVX2): a probe over HF's llama angles for positions
    0..8191 at base 10000 and 500000. torch 2.13's pip wheel computes float32 cos/sin with
    another kernel (its MKL VML, ~2.5% of values 1 ULP apart), so bit-for-bit comparisons of
    posenc's C torch-compat path with torch's own cos/sin hold only where this is True."""
    if not _TORCH_TRIG:
        import torch
        import posenc
        ok = True
        for base in (10000.0, 500000.0):
            p = posenc.RopeParams(head_dim=128, base=base, mode="torch")
            inv = torch.tensor(posenc.rope_frequencies(p).inv_freq, dtype=torch.float32)
            f = inv[None, :] * torch.arange(8192, dtype=torch.float32)[:, None]
            c, s = posenc.rope_cos_sin(p, positions=8192)
            ok = ok and np.array_equal(f.cos().numpy(), c) and np.array_equal(f.sin().numpy(), s)
        _TORCH_TRIG.append(ok)
    return _TORCH_TRIG[0]


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
