"""The ctypes structs of posenc/_lib.py against include/posenc.h: a C program compiled
here prints sizeof and every field's offset, which must equal the ctypes layout. This is
the check to rerun when the C API changes (adjust _lib.py until it passes)."""
import ctypes
import os
import re
import shutil
import subprocess
import sys

import posenc
from posenc import _lib
from posenc import config as pconfig
from conftest import ROOT

INCLUDE = os.environ.get("POSENC_INCLUDE_DIR", os.path.join(ROOT, "include"))


def test_struct_layouts_match_the_header(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    assert cc, "a C compiler is needed to check the ctypes layouts"
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "posenc.h"', "int main(void) {"]
    expected = []
    for cls, cname in {**_lib.STRUCTS, **pconfig.STRUCTS}.items():  # posenc_model's structs too
        lines.append('printf("%%zu\\n", sizeof(%s));' % cname)
        expected.append(("sizeof " + cname, ctypes.sizeof(cls)))
        for fname, _ in cls._fields_:
            lines.append('printf("%%zu\\n", offsetof(%s, %s));' % (cname, fname))
            expected.append(("%s.%s" % (cname, fname), getattr(cls, fname).offset))
    lines.append("return 0; }")
    src = tmp_path / "abi.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "abi"
    subprocess.run([cc, "-std=c11", "-I", INCLUDE, str(src), "-o", str(exe)], check=True)
    got = [int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    bad = [(name, want, have) for (name, want), have in zip(expected, got) if want != have]
    print("%d sizes/offsets compared, %d differ %s" % (len(expected), len(bad), bad[:5]))
    assert len(got) == len(expected) and not bad


def test_every_declared_function_exists():
    print("library:", posenc.LIBRARY_PATH, "version", posenc.version())
    assert not _lib.MISSING, "libposenc lacks %s" % _lib.MISSING
    with open(os.path.join(INCLUDE, "posenc.h")) as f:
        header = re.search(r'^#define POSENC_VERSION_STRING "([^"]+)"', f.read(), re.M).group(1)
    assert posenc.version() == posenc.__version__ == header


def _fake_library(tmp_path, version, with_strerror):
    """A shared library that only claims to be libposenc (another version, or missing functions)."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    src = tmp_path / "fake.c"
    body = 'const char *posenc_version(void); const char *posenc_version(void) { return "%s"; }\n' % version
    if with_strerror:
        body += 'const char *posenc_strerror(int s); const char *posenc_strerror(int s) { (void)s; return "x"; }\n'
    src.write_text(body)
    out = tmp_path / ("libfake-%s.so" % version)
    subprocess.run([cc, "-shared", "-fPIC", str(src), "-o", str(out)], check=True)
    return out


def _import_with(library):
    env = dict(os.environ, POSENC_LIBRARY=str(library))
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(posenc.__file__))] +
                                        [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-c", "import posenc"], capture_output=True, text=True, env=env)


def test_import_refuses_another_library_version_by_name(tmp_path):
    """Before: any libposenc.so was loaded, whatever its version, and functions it lacked were
    only noted in _lib.MISSING (an AttributeError at the first call)."""
    fake = _fake_library(tmp_path, "9.9.9", True)
    done = _import_with(fake)
    print(done.stderr[-600:])
    assert done.returncode != 0
    assert "ImportError: posenc: the library %s is version 9.9.9 but this package needs %s" % (
        fake, posenc.__version__) in done.stderr
    fake = _fake_library(tmp_path, posenc.__version__, False)
    done = _import_with(fake)
    print(done.stderr[-600:])
    assert done.returncode != 0 and "lacks posenc_strerror" in done.stderr


def test_status_codes_map_to_classes():
    for status, name in [(1, "InvalidArgumentError"), (3, "BufferTooSmallError"), (6, "PosencIOError"),
                         (7, "FormatError"), (8, "UnsupportedError"), (9, "OutOfRangeError"),
                         (10, "NullPointerError"), (11, "NonFiniteError")]:
        cls = getattr(posenc, name)
        assert cls.status == status and issubclass(cls, posenc.Error)
        generic = _lib.lib.posenc_strerror(status).decode()
        assert generic and generic != "?"
