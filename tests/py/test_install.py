"""`cmake --install` into a temporary prefix, then build two small consumers from a folder
outside the repository: one with pkg-config (shared, and static through the .a), one with
find_package(posenc) (posenc::posenc and posenc::posenc_static). Each must build and print
pe[1][0] = sin(1) and pe[1][1] = cos(1) from the library. Everything lives in one temporary
folder, removed at the end."""
import os
import shutil
import subprocess
import tempfile

from common import Checks

BUILD = os.environ.get("POSENC_BUILD_DIR", os.path.join(os.path.dirname(__file__), "../../build"))
CMAKE = os.environ.get("POSENC_CMAKE", "cmake")

CONSUMER_C = r"""#include <posenc.h>
#include <stdio.h>
int main(void) {
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 8);
    posenc_positions pos = posenc_positions_range(0, 2);
    float t[2 * 8];
    posenc_error err;
    if (posenc_sinusoid_table_f32(&p, &pos, t, 2 * 8, &err) != POSENC_OK) return fprintf(stderr, "%s\n", err.message), 1;
    printf("%.6f %.6f\n", t[8], t[9]);
    return 0;
}
"""
WANT = "0.841471 0.540302"  # sin(1), cos(1)

CONSUMER_CMAKE = """cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(posenc 0.3 REQUIRED)
add_executable(shared_demo main.c)
target_link_libraries(shared_demo PRIVATE posenc::posenc)
add_executable(static_demo main.c)
target_link_libraries(static_demo PRIVATE posenc::posenc_static)
"""


def sh(args, cwd=None, env=None):
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    t = Checks()
    root = tempfile.mkdtemp(prefix="posenc-install-")
    try:
        prefix = os.path.join(root, "prefix")
        rc, out = sh([CMAKE, "--install", BUILD, "--prefix", prefix])
        t.check(rc == 0, f"cmake --install {BUILD} --prefix <tmp>: exit {rc}" + ("" if rc == 0 else "\n" + out))
        want = ["bin/posenc", "include/posenc.h", "lib/libposenc.a", "lib/libposenc.so", "lib/pkgconfig/posenc.pc",
                "lib/cmake/posenc/posencConfig.cmake", "lib/cmake/posenc/posencConfigVersion.cmake",
                "lib/cmake/posenc/posencTargets.cmake"]
        missing = [f for f in want if not os.path.exists(os.path.join(prefix, f))]
        t.check(not missing, f"installed: {', '.join(want)} (missing: {missing or 'none'})")
        rc, out = sh(["objdump", "-p", os.path.join(prefix, "lib/libposenc.so")])
        soname = [line.split()[-1] for line in out.splitlines() if "SONAME" in line]
        needed = [line.split()[-1] for line in out.splitlines() if "NEEDED" in line]
        t.check(soname == ["libposenc.so.0.3"] and os.path.islink(os.path.join(prefix, "lib/libposenc.so.0.3")),
                f"soname {soname} (major.minor: the ABI may change in any 0.x minor release), symlink in place; NEEDED {needed}")
        rc, out = sh([os.path.join(prefix, "bin/posenc"), "table", "--len", "2", "--dim", "4", "-o", "-"])
        t.check(rc == 0 and out.count("\n") >= 2, f"the installed tool runs: posenc table ... -o - -> exit {rc}")

        consumer = os.path.join(root, "consumer")
        os.makedirs(consumer)
        with open(os.path.join(consumer, "main.c"), "w") as f:
            f.write(CONSUMER_C)
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"))
        rc, cflags = sh(["pkg-config", "--cflags", "--libs", "posenc"], env=env)
        rc2, libdir = sh(["pkg-config", "--variable=libdir", "posenc"], env=env)
        t.check(rc == 0 and rc2 == 0 and os.path.samefile(libdir.strip(), os.path.join(prefix, "lib")),
                f"pkg-config posenc: {cflags.strip()} (libdir resolves to the prefix's lib/)")
        rc, out = sh(["cc", "main.c", "-o", "pc_shared", *cflags.split(), f"-Wl,-rpath,{libdir.strip()}"], cwd=consumer, env=env)
        rc_run, got = sh(["./pc_shared"], cwd=consumer) if rc == 0 else (rc, out)
        t.check(rc == 0 and rc_run == 0 and got.strip() == WANT, f"pkg-config consumer (shared): prints '{got.strip()}' (want '{WANT}')")
        rc, ldd = sh(["ldd", "./pc_shared"], cwd=consumer)
        t.check(os.path.join(prefix, "lib") in ldd.replace("/pkgconfig/../..", ""),
                "it loads libposenc.so from the prefix: " + next((l.strip() for l in ldd.splitlines() if "posenc" in l), "?"))
        rc, static_libs = sh(["pkg-config", "--static", "--libs-only-l", "--libs-only-other", "posenc"], env=env)
        libs = [x for x in static_libs.split() if x != "-lposenc"]
        rc, out = sh(["cc", "main.c", "-o", "pc_static", f"-I{prefix}/include", os.path.join(prefix, "lib/libposenc.a"), *libs],
                     cwd=consumer)
        rc_run, got = sh(["./pc_static"], cwd=consumer) if rc == 0 else (rc, out)
        t.check(rc == 0 and rc_run == 0 and got.strip() == WANT,
                f"static consumer (libposenc.a + pkg-config --static deps {' '.join(libs)}): '{got.strip()}'")

        with open(os.path.join(consumer, "CMakeLists.txt"), "w") as f:
            f.write(CONSUMER_CMAKE)
        rc, out = sh([CMAKE, "-S", consumer, "-B", os.path.join(consumer, "build"), f"-DCMAKE_PREFIX_PATH={prefix}"])
        if rc == 0:
            rc, out = sh([CMAKE, "--build", os.path.join(consumer, "build")])
        t.check(rc == 0, "find_package(posenc 0.3) consumer configures and builds both targets"
                + ("" if rc == 0 else "\n" + out[-2000:]))
        for exe in ("shared_demo", "static_demo"):
            path = os.path.join(consumer, "build", exe)
            rc_run, got = sh([path]) if os.path.exists(path) else (1, "(not built)")
            t.check(rc_run == 0 and got.strip() == WANT, f"find_package consumer {exe}: '{got.strip()}'")
        rc, out = sh(["objdump", "-p", os.path.join(consumer, "build", "static_demo")])
        t.check(rc == 0 and "libposenc" not in out, "posenc::posenc_static links no libposenc.so")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.check(not os.path.exists(root), "temporary prefix and consumers removed")
    t.finish()


if __name__ == "__main__":
    main()
