"""The package installs as a package: `pip install ./python` (offline, Debian's setuptools and
wheel, no build isolation, a fresh venv with system site packages for NumPy/torch) compiles
libposenc.so from the repository's C sources, with no prior cmake build, and ships it inside
the package; the install survives deleting the clone; nothing is written into the checkout;
`setup.py sdist` carries the C sources and `pip wheel` of that sdist gives a platform wheel
holding the library. Each test works on a copy of the clone (include/, src/, CMake files,
python/), never on the checkout itself.

Before (0.3.1 as of issue 25): the install recorded build/libposenc.so's absolute path, so
deleting the clone broke `import posenc`, and the wheel was py3-none-any without a library."""
import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import ROOT

PY = sys.executable  # the test environment's python (scripts/venv): numpy, setuptools


def make_venv(venv, cwd, env):
    """A fresh venv that also sees the test environment's packages (numpy, setuptools) through a
    .pth file: --system-site-packages would reach the base interpreter's, not the test venv's."""
    import sysconfig
    if run([PY, "-m", "venv", venv], cwd, env).returncode != 0:
        return False
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True).stdout.strip()
    with open(os.path.join(site, "posenc_test_env.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    return True


def header_version():
    with open(os.path.join(ROOT, "include", "posenc.h")) as f:
        return re.search(r'^#define POSENC_VERSION_STRING "([^"]+)"', f.read(), re.M).group(1)


def copy_clone(dest):
    """What a user's clone holds for the package: the C sources and python/ (no build/)."""
    dest.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")
    for name in ("include", "src", "cmake", "python"):
        shutil.copytree(os.path.join(ROOT, name), dest / name, ignore=skip)
    shutil.copy2(os.path.join(ROOT, "CMakeLists.txt"), dest / "CMakeLists.txt")
    return dest


def listing(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, files in os.walk(root) for f in files)


def clean_env():
    env = dict(os.environ)
    for name in ("PYTHONPATH", "POSENC_LIBRARY", "POSENC_BIN", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    env["PIP_NO_INDEX"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(cmd, cwd, env):
    done = subprocess.run([str(c) for c in cmd], cwd=str(cwd), env=env, capture_output=True, text=True)
    print("$ %s\n%s\n%s" % (" ".join(map(str, cmd)), done.stdout[-3000:], done.stderr[-3000:]))
    return done


@pytest.fixture
def clone(tmp_path):
    return copy_clone(tmp_path / "clone")


def test_pip_install_builds_the_library_and_survives_deleting_the_clone(tmp_path, clone):
    before = listing(clone)
    venv = tmp_path / "venv"
    env = clean_env()
    assert make_venv(venv, tmp_path, env)
    py = venv / "bin" / "python"
    done = run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index", clone / "python"],
               tmp_path, env)
    assert done.returncode == 0
    assert listing(clone) == before, "pip install wrote into the checkout: %s" % (
        sorted(set(listing(clone)) - set(before)))
    shutil.rmtree(clone)  # no path back to the clone may remain
    probe = ("import os, posenc, numpy as np; print(posenc.__file__); print(posenc.LIBRARY_PATH); "
             "print(posenc.__version__, posenc.version()); "
             "q = np.ones((2, 1, 4), np.float32); posenc.apply_rope_(q, offset=1, tensor_layout='shd', base=10000.0); "
             "print(round(float(q[1, 0, 0]), 6))")
    done = run([py, "-c", probe], tmp_path, env)
    assert done.returncode == 0
    file_, library, version, lib_version, value = done.stdout.split()
    package = os.path.dirname(file_)
    assert package.startswith(str(venv)) and library == os.path.join(package, "libposenc.so")
    assert version == lib_version == header_version()
    assert abs(float(value) - (-0.416147 - 0.909297)) < 1e-5  # token 1 at position 2: cos 2 - sin 2


def test_sdist_carries_the_c_sources_and_builds_a_platform_wheel(tmp_path, clone):
    before = listing(clone)
    env = clean_env()
    dist = tmp_path / "dist"
    done = run([PY, "setup.py", "-q", "sdist", "-d", dist], clone / "python", env)
    assert done.returncode == 0
    assert listing(clone) == before, "setup.py sdist wrote into the checkout: %s" % (
        sorted(set(listing(clone)) - set(before)))
    (sdist,) = list(dist.iterdir())
    version = header_version()
    assert sdist.name == "posenc-%s.tar.gz" % version
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ("setup.py", "pyproject.toml", "posenc/__init__.py", "posenc/rope.py", "csrc/include/posenc.h",
                   "csrc/src/rope/rope_avx2.c", "csrc/src/common/exec.c", "csrc/CMakeLists.txt"):
        assert needed in names, "the sdist lacks %s" % needed
    shutil.rmtree(clone)  # the sdist alone must build
    wheels = tmp_path / "wheels"
    done = run([PY, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-index", "--no-deps", "-w", wheels,
                sdist], tmp_path, env)
    assert done.returncode == 0
    (wheel,) = list(wheels.iterdir())
    assert wheel.name.startswith("posenc-%s-py3-none-linux_" % version), wheel.name  # not py3-none-any
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert "posenc/libposenc.so" in names and "posenc/_build_info.py" in names, sorted(names)
        assert "VERSION = %r" % version in z.read("posenc/_build_info.py").decode()
        z.extract("posenc/libposenc.so", tmp_path / "x")
    probe = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); lib.posenc_version.restype = ctypes.c_char_p; "
             "print(lib.posenc_version().decode())")
    done = run([PY, "-c", probe, tmp_path / "x" / "posenc" / "libposenc.so"], tmp_path, env)
    assert done.returncode == 0 and done.stdout.strip() == version


def _assigned_lists(path):
    tree = ast.parse(open(path).read())
    return {t.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name) and t.id.endswith(("_FLAGS", "_LIBS"))}


def test_setup_py_compiles_with_cmakes_flags():
    """setup.py mirrors CMakeLists.txt's flags (no FMA contraction anywhere, ISA flags only on the
    kernel files): a change to one without the other fails here."""
    flags = _assigned_lists(os.path.join(ROOT, "python", "setup.py"))
    cmake = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    isa = dict(re.findall(r'set_source_files_properties\(\$\{POSENC_(AVX2|AVX512)_SOURCES\} PROPERTIES\s*'
                          r'COMPILE_OPTIONS "([^"]+)"', cmake))
    assert flags["AVX2_FLAGS"] == isa["AVX2"].split(";")
    assert flags["AVX512_FLAGS"] == isa["AVX512"].split(";")
    common = re.search(r"add_compile_options\(([^)]*)\)", cmake).group(1).split()
    # the same warnings and -fno-fast-math; -Werror only in the project's own builds (a user's newer
    # compiler may add a warning; that must not stop an install)
    assert sorted(f for f in common if f != "-Werror") == sorted(f for f in flags["BASE_FLAGS"]
                                                                  if f.startswith("-W") or f == "-fno-fast-math")
    assert "-O3" in flags["BASE_FLAGS"] and "-DNDEBUG" in flags["BASE_FLAGS"]  # CMake's Release flags
    assert re.search(r"set\(CMAKE_C_STANDARD 11\)", cmake) and "-std=c11" in flags["BASE_FLAGS"]
    assert re.search(r"set\(CMAKE_C_EXTENSIONS OFF\)", cmake)  # ISO C: the -std=c11 above, not gnu11
    for lib in ("CJSON", "SLEEF"):
        assert "PkgConfig::%s" % lib in cmake
    assert set(flags["LINK_LIBS"]) == {"-lsleef", "-lcjson", "-lpthread", "-lm"}


def test_the_version_is_written_once():
    """include/posenc.h holds it; pyproject.toml, the package and CMake read it from there."""
    pyproject = open(os.path.join(ROOT, "python", "pyproject.toml")).read()
    assert re.search(r'^dynamic = \["version"\]', pyproject, re.M)
    assert not re.search(r"^version\s*=", pyproject, re.M)
    for name in ("__init__.py", "_lib.py"):
        text = open(os.path.join(ROOT, "python", "posenc", name)).read()
        assert not re.search(r"[\"']\d+\.\d+\.\d+[\"']", text), name
    cmake = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    assert "project(posenc VERSION ${POSENC_VERSION}" in cmake and "POSENC_VERSION_STRING" in cmake
