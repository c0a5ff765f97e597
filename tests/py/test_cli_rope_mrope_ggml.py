"""`posenc rope apply --mrope S0,S1,S2 [--mrope-kind interleaved] [--positions P.npy]`: multi-axis
RoPE from the CLI, here in `--mode ggml` (ggml_rope_multi's MROPE / IMROPE; the arithmetic is
checked bit for bit against a reference written from ggml's CPU code in
tests/test_rope_ggml_mrope.c). Here: with every axis at the token's position the output equals
1-D ggml NEOX bit for bit (ggml's own goldens back that path); with Qwen2-VL-style [3, T]
positions exactly the pairs of the axes whose positions differ change; bad input is refused by
name."""
import os

import numpy as np

from common import Checks, run, tmpdir


def main():
    t = Checks()
    d = tmpdir()
    T = 40
    rng = np.random.default_rng(0)
    x = rng.standard_normal((T, 2, 128)).astype(np.float32)
    xp = os.path.join(d, "x.npy")
    np.save(xp, x)
    tt = np.arange(T)
    pos = np.stack([tt, tt, tt % 5 + 7]).astype(np.int64)  # t and h at the token, w elsewhere
    pp = os.path.join(d, "p.npy")
    np.save(pp, pos)
    flags = ["--layout", "half", "--mode", "ggml", "--base", "1000000"]
    out = {name: os.path.join(d, name + ".npy") for name in ("one", "same", "grid", "imrope")}
    rc1, _, e1 = run("rope", "apply", "--in", xp, *flags, "-o", out["one"])
    rc2, _, e2 = run("rope", "apply", "--in", xp, *flags, "--mrope", "16,24,24", "-o", out["same"])
    ok = rc1 == 0 and rc2 == 0
    one = np.load(out["one"]) if ok else None
    t.check(ok and np.array_equal(np.load(out["same"]).view(np.uint32), one.view(np.uint32)),
            "MROPE 16,24,24 with every axis at the token's position = 1-D ggml NEOX bit for bit " + e1 + e2)
    rc, _, se = run("rope", "apply", "--in", xp, *flags, "--mrope", "16,24,24", "--positions", pp, "-o", out["grid"])
    if t.check(rc == 0 and one is not None, "MROPE with [3, T] positions: " + se.strip()):
        g = np.load(out["grid"])
        pairs = np.arange(64)
        changed = [k for k in pairs if not (np.array_equal(g[..., k], one[..., k])
                                            and np.array_equal(g[..., k + 64], one[..., k + 64]))]
        t.check(changed == list(range(40, 64)),
                f"only the w section's pairs 40..63 change (the w positions differ): {changed[:3]}..{changed[-3:]}")
    rc, _, se = run("rope", "apply", "--in", xp, *flags, "--mrope", "24,20,20,0", "--mrope-kind", "interleaved",
                    "-o", out["imrope"])
    t.check(rc == 0 and np.array_equal(np.load(out["imrope"]).view(np.uint32), one.view(np.uint32)),
            "IMROPE 24,20,20,0 (4 streams, ggml's e for pairs 61, 62) at one position = 1-D ggml NEOX " + se.strip())
    # bad input
    bad = os.path.join(d, "bad.npy")
    for label, args, words in (
            ("interleaved layout in ggml mode", ["--in", xp, "--layout", "interleaved", "--mode", "ggml",
                                                 "--mrope", "16,24,24"], "give layout half"),
            ("IMROPE leftover pairs with 3 axes", ["--in", xp, *flags, "--mrope", "24,20,20", "--mrope-kind",
                                                   "interleaved"], "pair 61 reads ggml's position stream 3 (e)"),
            ("positions of the wrong shape", ["--in", xp, *flags, "--mrope", "16,24,24", "--positions",
                                              os.path.join(d, "p2.npy")], "must be int [3, 40]"),
            ("a bad section list", ["--in", xp, *flags, "--mrope", "16,x"], "'16,x'"),
            ("sections that do not add up", ["--in", xp, *flags, "--mrope", "16,24,20"], "sections must add up"),
            ("--mrope-kind alone", ["--in", xp, *flags, "--mrope-kind", "interleaved"], "goes with --mrope")):
        if "p2.npy" in " ".join(args):
            np.save(os.path.join(d, "p2.npy"), pos[:2])
        rc, so, se = run("rope", "apply", *args, "-o", bad)
        t.check(rc == 2 and words in se and not os.path.exists(bad), f"{label} refused: {se.strip().splitlines()[0]}")
    return t.finish()


if __name__ == "__main__":
    raise SystemExit(main())
