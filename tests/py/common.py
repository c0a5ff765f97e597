"""Shared helpers for posenc's Python tests (run with the test environment's python (.venv/bin/python, scripts/venv))."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ.get("POSENC_BIN", os.path.join(os.path.dirname(__file__), "../../build/posenc"))
GOLDEN = os.environ.get("POSENC_GOLDEN_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")


def require_golden():
    """tests/golden is part of the repository: a missing folder fails the test, never skips it."""
    if not os.path.exists(os.path.join(GOLDEN, "manifest.json")):
        print(f"FAIL: peer goldens not found at {GOLDEN} (tests/golden is part of the repository; "
              "POSENC_GOLDEN_DIR overrides it)", flush=True)
        sys.exit(1)
    return True


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
        if self.failed and under_valgrind():
            # valgrind runs x87 long double arithmetic in 64-bit double, so value checks
            # that rely on extended precision can fail there; that stage judges memory
            # errors only (run() raises on those) and the value checks count in the
            # normal and sanitizer stages.
            print("(value checks not judged under valgrind: it emulates long double as double)")
            sys.exit(0)
        sys.exit(1 if self.failed else 0)


# POSENC_VALGRIND=1 runs every CLI call under valgrind memcheck (scripts/test's
# POSENC_TEST_VALGRIND stage); any memcheck error or definite leak stops the test.
VALGRIND_EXIT = 99
VALGRIND = ["valgrind", f"--error-exitcode={VALGRIND_EXIT}", "-q", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite"]


def under_valgrind():
    return os.environ.get("POSENC_VALGRIND", "0") not in ("", "0")


def run(*args, cwd=None, env=None):
    """Run posenc; return (exit code, stdout, stderr)."""
    wrap = VALGRIND if under_valgrind() else []
    p = subprocess.run([*wrap, BIN, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env)
    if wrap and p.returncode == VALGRIND_EXIT:
        print(p.stderr, file=sys.stderr)
        raise RuntimeError(f"valgrind memcheck found errors in: posenc {' '.join(map(str, args))}")
    return p.returncode, p.stdout, p.stderr


def tmpdir():
    """A fresh folder for one test's files, removed when the test exits (tests
    leave nothing behind; scripts/test checks /tmp under CI)."""
    path = tempfile.mkdtemp(prefix="posenc-test-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def cpu_flags():
    """The x86 feature flags of this CPU (empty elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def torch_capabilities():
    """torch's CPU kernel builds this CPU can run, as ATEN_CPU_CAPABILITY
    values: default always; avx2 with AVX2+FMA; avx512 with AVX-512 F/VL/BW/DQ.
    In a sanitizer build (POSENC_SANITIZED=1) only the widest: the sanitizers look for memory
    and undefined-behaviour errors in posenc's code, which every build of torch drives the same
    way, and each extra build costs ~5 minutes there; the plain build checks the numbers of all."""
    flags = cpu_flags()
    caps = ["default"]
    if {"avx2", "fma"} <= flags:
        caps.append("avx2")
        if {"avx512f", "avx512vl", "avx512bw", "avx512dq"} <= flags:
            caps.append("avx512")
    if os.environ.get("POSENC_SANITIZED") == "1":
        caps = caps[-1:]
    return caps


def import_torch():
    """torch, or exit 77 (ctest: skipped). scripts/test fails a skipped test
    under CI, so torch's absence there is an error, not a pass."""
    try:
        import torch
    except ImportError:
        print("SKIP: torch not installed (the test environment has it: scripts/venv)")
        sys.exit(77)
    return torch


def torch_math_library(torch):
    """Make posenc's torch-compat compute exp/sin/cos as this torch does: a torch built with
    MKL (every x86-64 PyPI wheel) runs them through MKL's VML, which posenc calls from the
    library POSENC_TORCH_MKL names (posenc.h, POSENC_MODE_TORCH_COMPAT): torch's own
    lib/libtorch_cpu.so. Sets the variable for this process and its children; returns the
    path, or None for a torch without MKL (posenc's SLEEF route is then torch's)."""
    if not torch.backends.mkl.is_available():
        os.environ.pop("POSENC_TORCH_MKL", None)
        return None
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    os.environ["POSENC_TORCH_MKL"] = path
    return path


def torch_peer_label(torch):
    """Pin torch to 1 thread (posenc reproduces torch.set_num_threads(1): with more,
    torch's own chunking changes its bits), print and return (label, pick): the label names the
    version and the kernel build torch picked (DEFAULT, AVX2, AVX512)."""
    torch.set_num_threads(1)
    pick = "?"
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage" in line:
            value = line.split(":", 1)[1].strip().lower()
            pick = {"no avx": "default"}.get(value, value)
    label = f"torch {torch.__version__} {pick.upper()}"
    print(f"{label} (ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY', 'unset')}), 1 thread")
    return label, pick


def fixture_files_problems(folder, manifest):
    """The .npy files of a fixture folder against its manifest's {name: sha256}: (problems, unlisted),
    each problem a missing file or one whose sha256 differs, unlisted the .npy files it does not name."""
    import hashlib
    bad = []
    for name, digest in sorted(manifest["files"].items()):
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            bad.append(name + " (missing)")
        else:
            with open(path, "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != digest:
                    bad.append(name + " (sha256 differs)")
    on_disk = {n for n in os.listdir(folder) if n.endswith(".npy")}
    return bad, sorted(on_disk - set(manifest["files"]))


def sanitizer_runtime_env():
    """The environment in which an uninstrumented python can load a sanitized libposenc.so with ctypes: the ASan
    build's library expects the ASan runtime from the executable, so it must be preloaded (leak checks off: python
    itself is not instrumented). Empty outside a sanitizer build (POSENC_SANITIZED=1)."""
    if os.environ.get("POSENC_SANITIZED") != "1" or "asan" in os.environ.get("LD_PRELOAD", ""):
        return {}
    import glob
    import platform
    clang = os.environ.get("POSENC_CLANG", "clang")

    def ask(flag):
        return subprocess.run([clang, flag], capture_output=True, text=True, check=True).stdout.strip()
    # the runtime's name and folder differ between LLVM releases (Debian 12: lib/linux/libclang_rt.asan-x86_64.so;
    # newer: lib/<triple>/libclang_rt.asan.so)
    found = [ask(f"-print-file-name={n}") for n in (f"libclang_rt.asan-{platform.machine()}.so", "libclang_rt.asan.so")]
    found += sorted(glob.glob(os.path.join(ask("-print-runtime-dir"), "libclang_rt.asan*.so")))
    found = [p for p in found if os.path.isabs(p) and os.path.exists(p) and "static" not in os.path.basename(p)]
    if not found:
        raise RuntimeError("the sanitized libposenc.so needs clang's shared ASan runtime, which clang does not list")
    return {"LD_PRELOAD": found[0], "ASAN_OPTIONS": "detect_leaks=0"}


def reexec_for_library():
    """A test that loads libposenc.so through ctypes calls this first: in a sanitizer build it runs itself again
    with the ASan runtime preloaded (sanitizer_runtime_env), so the library is checked there too, not skipped."""
    extra = sanitizer_runtime_env()
    if extra:
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, **extra))
