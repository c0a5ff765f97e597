"""Install hook: record where libposenc.so is, so the installed package finds the
library it was built with (pure Python otherwise; nothing is compiled).

Recorded, in order: $POSENC_LIBRARY, then build*/libposenc.so of the checkout
this python/ folder belongs to. At run time posenc/_lib.py still honours
$POSENC_LIBRARY first."""
import glob
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def library_candidates():
    found = []
    if os.environ.get("POSENC_LIBRARY"):
        found.append(os.path.abspath(os.environ["POSENC_LIBRARY"]))
    root = os.path.dirname(HERE)
    found += sorted(glob.glob(os.path.join(root, "build", "libposenc.so")))
    found += sorted(glob.glob(os.path.join(root, "build*", "libposenc.so")))
    return [f for f in dict.fromkeys(found) if os.path.exists(f)]


class BuildPyWithPaths(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "posenc", "_paths.py")
        with open(target, "w") as f:
            f.write('"""Written by setup.py at install time: where libposenc.so was found."""\n')
            f.write("LIBRARY_CANDIDATES = %r\n" % (library_candidates(),))


setup(cmdclass={"build_py": BuildPyWithPaths})
