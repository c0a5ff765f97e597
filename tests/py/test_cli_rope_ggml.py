"""`posenc rope apply --mode ggml`: the 24 ggml_rope_* goldens (ggml d99724f2
= v0.21.0's own CPU output) reproduced byte for byte by the CLI, and the mode
flag's usage errors (exit 2, message naming the value)."""
import os

import numpy as np

from common import GOLDEN, Checks, require_golden, run, tmpdir


def main():
    t = Checks()
    d = tmpdir()
    out = os.path.join(d, "out.npy")
    require_golden()
    src = os.path.join(GOLDEN, "input_formula_T37_H3_D64.npy")
    same = 0
    for mode, layout in (("normal", "interleaved"), ("neox", "half")):
        for kind, flags in (("plain", []), ("linear0.25", ["--scaling", "linear", "--factor", "4"]),
                            ("yarn", ["--scaling", "yarn", "--factor", "4", "--original-max", "4096"])):
            for nd in (64, 32):
                for start in (0, 1000):
                    name = "ggml_rope_%s_%s_ndims%d_pos%d.npy" % (mode, kind, nd, start)
                    rc, _, se = run("rope", "apply", "--in", src, "--dim", "64", "--rotary-dim", str(nd),
                                    "--layout", layout, "--start", str(start), "--mode", "ggml", *flags, "-o", out)
                    got = np.load(out) if rc == 0 else None
                    want = np.load(os.path.join(GOLDEN, name))
                    ok = rc == 0 and got.dtype == want.dtype and got.tobytes() == want.tobytes()
                    same += ok
                    if not ok:
                        t.check(False, "%s: rc %d %s" % (name, rc, se.strip()))
    t.check(same == 24, "rope apply --mode ggml: %d of 24 ggml goldens byte for byte" % same)
    rc, _, se = run("rope", "apply", "--in", src, "--dim", "64", "--mode", "llama", "-o", out)
    t.check(rc == 2 and "llama" in se, "--mode llama is a usage error naming the value: " + se.strip())
    rc, _, se = run("rope", "apply", "--in", src, "--dim", "64", "--mode", "ggml", "--torch-compat", "-o", out)
    t.check(rc == 2 and "--mode" in se, "--mode with --torch-compat is a usage error: " + se.strip())
    rc, _, se = run("rope", "apply", "--in", src, "--dim", "64", "--mode", "ggml", "--scaling", "dynamic",
                    "--factor", "2", "--max-pos", "2048", "-o", out)
    t.check(rc != 0 and "dynamic" in se, "--mode ggml --scaling dynamic is refused by name: " + se.strip())
    return t.finish()


if __name__ == "__main__":
    raise SystemExit(main())
