"""Build hook: compile libposenc.so from the repository's C sources and ship it inside
the package (posenc/libposenc.so, loaded by ctypes from the package folder), so an
installed posenc never points back at the clone it was built from.

Sources: ../include and ../src of the checkout this python/ folder belongs to, or
csrc/ inside an sdist (the sdist command below copies them there). The compile
flags are CMakeLists.txt's Release flags, kept equal by python/tests/test_install.py:
C11 in ISO mode (so no FMA contraction), -O3, -fno-fast-math, and the ISA flags only
on *_avx2.c / *_avx512.c (their functions run after the run-time CPU probe).
Link: SLEEF, cJSON (pkg-config when present), pthread, libm.

Nothing is written into the source folder: build/ and posenc.egg-info/ go to a
temporary folder removed at exit (an explicit --build-base / --egg-base still wins).
The version is the C library's POSENC_VERSION_STRING in include/posenc.h, the one
place it is written; the package checks the loaded library against it at import.
"""
import atexit
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # no wheel package: pip falls back to setup.py install paths
    bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))

# CMakeLists.txt's flags (Release). test_install.py compares these with CMakeLists.txt.
BASE_FLAGS = ["-std=c11", "-O3", "-DNDEBUG", "-fPIC", "-fno-fast-math", "-pthread",
              "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wstrict-prototypes",
              "-Wmissing-prototypes"]
AVX2_FLAGS = ["-mavx2", "-mfma", "-mf16c", "-ffp-contract=off"]
AVX512_FLAGS = ["-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mavx2", "-mfma", "-mf16c",
                "-ffp-contract=off"]
LINK_LIBS = ["-lsleef", "-lcjson", "-lpthread", "-lm"]
C_FILES = ["include", "src", "CMakeLists.txt", "cmake"]  # what an sdist carries in csrc/


def c_root():
    """Where include/posenc.h and src/ are: csrc/ in an sdist, else the checkout."""
    for root in (os.path.join(HERE, "csrc"), os.path.dirname(HERE)):
        if os.path.exists(os.path.join(root, "include", "posenc.h")) and os.path.isdir(os.path.join(root, "src")):
            return root
    sys.exit("posenc setup.py: the C sources are missing: expected include/posenc.h and src/ in %s "
             "(an sdist) or in %s (the checkout)" % (os.path.join(HERE, "csrc"), os.path.dirname(HERE)))


def c_version(root):
    with open(os.path.join(root, "include", "posenc.h")) as f:
        found = re.search(r'^#define POSENC_VERSION_STRING "([0-9]+\.[0-9]+\.[0-9]+)"', f.read(), re.M)
    if not found:
        sys.exit("posenc setup.py: no POSENC_VERSION_STRING in %s/include/posenc.h" % root)
    return found.group(1)


def pkg_config(*args):
    try:
        done = subprocess.run(["pkg-config"] + list(args) + ["sleef", "libcjson"], capture_output=True, text=True)
    except OSError:
        return None
    return done.stdout.split() if done.returncode == 0 else None


def isa_flags(path):
    if sysconfig.get_platform().endswith(("x86_64", "amd64")):
        if path.endswith("_avx512.c"):
            return AVX512_FLAGS
        if path.endswith("_avx2.c"):
            return AVX2_FLAGS
    return []


class BuildLibrary(build_ext):
    """Builds the one 'extension', posenc/libposenc.so: a plain C shared library (no
    Python API in it), compiled file by file in parallel with CMakeLists.txt's flags."""

    def get_ext_filename(self, fullname):
        return os.path.join(*fullname.split(".")) + ".so"

    def build_extension(self, ext):
        root = c_root()
        sources = sorted(os.path.join(d, f) for d, _, files in os.walk(os.path.join(root, "src"))
                         for f in files if f.endswith(".c"))
        cc = os.environ.get("CC", "cc").split()
        cflags = pkg_config("--cflags")
        cflags = cflags if cflags is not None else ["-I/usr/include/cjson"]
        libs = pkg_config("--libs")
        libs = (libs if libs is not None else []) + [f for f in LINK_LIBS if f not in (libs or [])]
        objdir = os.path.join(self.build_temp, "posenc-objects")
        os.makedirs(objdir, exist_ok=True)

        def compile_one(src):
            rel = os.path.relpath(src, root).replace(os.sep, "_")
            obj = os.path.join(objdir, rel[:-2] + ".o")
            cmd = cc + BASE_FLAGS + isa_flags(src) + ["-I" + os.path.join(root, "include")] + cflags + \
                ["-c", src, "-o", obj]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError("compiling %s failed:\n%s\n%s" % (src, " ".join(cmd), done.stderr))
            return obj

        jobs = max(1, min(len(sources), os.cpu_count() or 1))
        print("posenc: compiling %d C files of %s with %d job(s)" % (len(sources), root, jobs))
        with ThreadPoolExecutor(jobs) as pool:
            objects = list(pool.map(compile_one, sources))
        out = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        version = c_version(root)
        soname = "libposenc.so." + ".".join(version.split(".")[:2])
        cmd = cc + ["-shared", "-pthread", "-o", out] + objects + ["-Wl,-soname," + soname, "-Wl,--no-undefined"] + libs
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError("linking %s failed:\n%s\n%s" % (out, " ".join(cmd), done.stderr))


class BuildPy(build_py):
    """Adds posenc/_build_info.py: the version the package was built with (checked at import)."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "posenc", "_build_info.py")
        with open(target, "w") as f:
            f.write('"""Written by setup.py: the C library version this package was built from."""\n')
            f.write("VERSION = %r\n" % c_version(c_root()))


class Sdist(sdist):
    """The sdist carries the C sources in csrc/ (python/ is a subfolder of the repository)."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        root = c_root()
        for name in C_FILES:
            src, dst = os.path.join(root, name), os.path.join(base_dir, "csrc", name)
            if os.path.isdir(src):
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
            elif os.path.exists(src):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)


cmdclass = {"build_ext": BuildLibrary, "build_py": BuildPy, "sdist": Sdist}
if bdist_wheel is not None:
    class BdistWheel(bdist_wheel):
        """py3-none-<platform>: the library holds no Python ABI, only the platform's."""

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = BdistWheel

# Build outside the source tree: a temporary build base and egg-info folder.
_scratch = tempfile.mkdtemp(prefix="posenc-setup-")
atexit.register(shutil.rmtree, _scratch, True)

setup(
    version=c_version(c_root()),
    ext_modules=[Extension("posenc.libposenc", sources=[])],
    cmdclass=cmdclass,
    options={"build": {"build_base": os.path.join(_scratch, "build")},
             "egg_info": {"egg_base": _scratch}},
)
