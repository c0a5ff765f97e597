"""`pip install ./python` offline into a fresh venv of Debian's Python (system site
packages for NumPy/torch, setuptools from python3-setuptools, no network, no build
isolation), then `import posenc` from outside the checkout finds the library this tree
built. The package is copied first so the install never writes into the source tree."""
import os
import shutil
import subprocess

from conftest import ROOT


def test_pip_install_into_a_venv(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "python"), src, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PIP_NO_INDEX"] = "1"
    lib = os.environ.get("POSENC_LIBRARY", os.path.join(ROOT, "build", "libposenc.so"))
    env["POSENC_LIBRARY"] = lib  # recorded by setup.py into posenc/_paths.py
    done = subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index", str(src)],
                          env=env, capture_output=True, text=True, cwd=str(tmp_path))
    print(done.stdout[-2000:], done.stderr[-2000:])
    assert done.returncode == 0
    env.pop("POSENC_LIBRARY")  # now found through the recorded path only
    probe = ("import posenc, numpy as np; print(posenc.__file__); print(posenc.LIBRARY_PATH); "
             "q = np.ones((2, 1, 4), np.float32); posenc.apply_rope_(q, offset=1); print(round(float(q[1, 0, 0]), 6))")
    done = subprocess.run([py, "-c", probe], env=env, capture_output=True, text=True, cwd=str(tmp_path))
    print(done.stdout, done.stderr[-2000:])
    assert done.returncode == 0
    file_, library, value = done.stdout.split()
    assert str(venv) in file_ and os.path.samefile(library, lib)
    assert abs(float(value) - (-0.416147 - 0.909297)) < 1e-5  # token 1 at position 2: cos 2 - sin 2
