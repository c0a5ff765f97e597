"""`posenc table --kind learned|xl|2d|3d|hybrid` and `posenc compose`: every new
kind and flag, the documented RNG rebuilt independently in numpy, the tatp22
goldens through the CLI, and the bad-input cases (clear message naming the
value, non-zero exit, no output file)."""
import json
import os

import numpy as np

from common import GOLDEN, Checks, run, tmpdir

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x):
    """The recipe written in posenc.h, in numpy uint64 (wrapping) arithmetic."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def reference_table(seed, sigma, rows, dim, padding_idx=None):
    n = rows * dim
    pairs = (n + 1) // 2
    with np.errstate(over="ignore"):
        k = np.arange(2 * pairs, dtype=np.uint64)
        z = splitmix64(np.uint64(seed) + k * np.uint64(0x9E3779B97F4A7C15))
    u = ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53
    r = np.sqrt(-2.0 * np.log(u[0::2]))
    t = 2 * np.pi * u[1::2]
    out = np.empty(2 * pairs, dtype=np.float32)
    out[0::2] = (sigma * (r * np.cos(t))).astype(np.float32)
    out[1::2] = (sigma * (r * np.sin(t))).astype(np.float32)
    out = out[:n].reshape(rows, dim)
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


def ulps(a, b):
    """Largest distance in float32 units in the last place (sign-magnitude mapped to a line)."""
    ia = np.asarray(a, np.float32).view(np.int32).astype(np.int64)
    ib = np.asarray(b, np.float32).view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -2 ** 31 - ia, ia)
    ib = np.where(ib < 0, -2 ** 31 - ib, ib)
    return int(np.abs(ia - ib).max())


def lerp_resize(table, new_rows, keep):
    """posenc.h's resize: body row j at x = j*(n-1)/(m-1), blended in float64, endpoints exact."""
    body = table[keep:].astype(np.float64)
    n, m = len(body), new_rows - keep
    x = np.arange(m) * ((n - 1) / (m - 1))
    lo = np.minimum(np.floor(x).astype(int), n - 1)
    hi = np.minimum(lo + 1, n - 1)
    f = (x - lo)[:, None]
    return np.concatenate([table[:keep], (body[lo] + f * (body[hi] - body[lo])).astype(np.float32)])


def main():
    t = Checks()
    d = tmpdir()
    out = os.path.join(d, "out.npy")

    def fails(args, code, *needles, row=""):
        """Run a bad command: exit `code`, message containing every needle, no file written.
        `row` is the docs/errors.md row the case belongs to, printed as [row]."""
        if os.path.exists(out):
            os.remove(out)
        rc, _, se = run(*args)
        msg = se.strip().splitlines()[0] if se.strip() else "(no message)"
        ok = rc == code and all(n in se for n in needles) and not os.path.exists(out)
        tag = f"[{row}] " if row else ""
        t.check(ok, f"{tag}{' '.join(map(str, args[:8]))}...: exit {rc} (want {code}), '{msg}', no output")

    rc, so, _ = run("table", "--help")
    t.check(rc == 0 and all(f in so for f in ["--seed", "--sigma", "--padding-idx", "--table", "--input-ids", "--pad-id",
                                              "--past-end", "--keep-prefix", "--resize", "--learned-dim", "--clamp",
                                              "--attention-mask", "--past-length",
                                              "--grid", "--split", "--freq-scale", "learned | xl | 2d | 3d | hybrid"]),
            "table --help documents every new flag and kind")
    rc, so, _ = run("--help")
    t.check(rc == 0 and "compose" in so, "--help lists compose")

    # ---- learned: create, reproducible RNG --------------------------------------------
    wpe = os.path.join(d, "wpe.npy")
    rc, _, se = run("table", "--kind", "learned", "--len", 514, "--dim", 24, "--seed", 7, "--padding-idx", 1, "-o", wpe)
    a = np.load(wpe)
    ref = reference_table(7, 0.02, 514, 24, padding_idx=1)
    t.check(rc == 0 and a.shape == (514, 24) and a.dtype == np.float32 and a.tobytes() == ref.tobytes(),
            f"learned --seed 7: bytes == numpy rebuild of the documented recipe ({se.strip()})")
    t.check(not a[1].any() and a[0].any(), "--padding-idx 1 zeroes row 1 only")
    run("table", "--kind", "learned", "--len", 514, "--dim", 24, "--seed", 7, "--padding-idx", 1, "-o", out)
    t.check(open(out, "rb").read() == open(wpe, "rb").read(), "same seed twice -> identical files")
    run("table", "--kind", "learned", "--len", 10, "--dim", 24, "--seed", 8, "-o", out)
    t.check(not np.array_equal(np.load(out), a[:10]), "seed 8 differs from seed 7")
    run("table", "--kind", "learned", "--len", 500, "--dim", 400, "--seed", 0, "--sigma", 0.5, "-o", out)
    big = np.load(out).astype(np.float64)
    # 2e5 draws: std errors of mean 0.5/sqrt(N) = 1.1e-3, of std 0.5/sqrt(2N) = 7.9e-4; allow 5 of each
    t.check(abs(big.mean()) < 5.6e-3 and abs(big.std() - 0.5) < 4e-3,
            f"--sigma 0.5: mean {big.mean():.2e} (|.|<5.6e-3), std {big.std():.5f} (0.5+-4e-3)")
    t.check(np.array_equal(big.astype(np.float32), reference_table(0, 0.5, 500, 400)),
            "--sigma 0.5 seed 0 [500x400] also equals the numpy rebuild")

    # ---- learned: gather by positions, input ids, past-the-end -----------------------
    rc, _, _ = run("table", "--kind", "learned", "--table", wpe, "--len", 5, "--start", 2, "-o", out)
    t.check(rc == 0 and np.array_equal(np.load(out), a[2:7]), "--table --len 5 --start 2 gathers rows 2..6 exactly")
    pos = os.path.join(d, "pos.npy")
    np.save(pos, np.array([5, 0, 5, 513], dtype=np.int64))
    rc, _, _ = run("table", "--kind", "learned", "--table", wpe, "--positions", pos, "-o", out)
    t.check(rc == 0 and np.array_equal(np.load(out), a[[5, 0, 5, 513]]), "--positions [5,0,5,513] gathers those rows")
    ids = os.path.join(d, "ids.npy")
    np.save(ids, np.array([[0, 31414, 232, 2, 1, 1], [1, 1, 0, 9, 9, 2]], dtype=np.int64))
    rc, _, _ = run("table", "--kind", "learned", "--table", wpe, "--input-ids", ids, "--pad-id", 1, "-o", out)
    g = np.load(out)
    t.check(rc == 0 and g.shape == (2, 6, 24) and np.array_equal(g[0], a[[2, 3, 4, 5, 1, 1]])
            and np.array_equal(g[1], a[[1, 1, 2, 3, 4, 5]]),
            "--input-ids [0,31414,232,2,1,1] (RoBERTa) -> rows [2,3,4,5,1,1]; left-padded row -> [1,1,2,3,4,5]")
    mask = os.path.join(d, "mask.npy")
    np.save(mask, np.array([[1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1]], dtype=np.int64))
    rc, _, _ = run("table", "--kind", "learned", "--table", wpe, "--input-ids", ids, "--attention-mask", mask,
                   "--past-length", 10, "-o", out)
    g = np.load(out)
    t.check(rc == 0 and np.array_equal(g[0], a[[12, 13, 14, 15, 1, 1]]) and np.array_equal(g[1], a[[1, 1, 12, 13, 14, 15]]),
            "--attention-mask + --past-length 10: real tokens at rows 12.., masked ones at the pad row 1")
    np.save(mask, np.array([[1, 1, 2, 1, 0, 0], [0, 0, 1, 1, 1, 1]], dtype=np.int64))
    fails(("table", "--kind", "learned", "--table", wpe, "--input-ids", ids, "--attention-mask", mask, "-o", out), 2,
          "0 or 1", "got 2 at index 2", row="L8")
    np.save(mask, np.ones((2, 5), dtype=np.uint8))
    fails(("table", "--kind", "learned", "--table", wpe, "--input-ids", ids, "--attention-mask", mask, "-o", out), 2,
          "shape of the input ids", "2 x 6", row="L8")
    fails(("table", "--kind", "learned", "--table", wpe, "--len", 3, "--attention-mask", mask, "-o", out), 2,
          "--attention-mask goes with --input-ids")
    np.save(pos, np.array([3, 600], dtype=np.int64))
    fails(("table", "--kind", "learned", "--table", wpe, "--positions", pos, "-o", out), 1, "600", "514 rows", row="L1")
    rc, _, _ = run("table", "--kind", "learned", "--table", wpe, "--positions", pos, "--past-end", "clamp", "-o", out)
    t.check(rc == 0 and np.array_equal(np.load(out)[1], a[513]), "--past-end clamp: position 600 reads row 513")
    rc, _, _ = run("table", "--kind", "learned", "--table", wpe, "--positions", pos, "--past-end", "resize",
                   "--keep-prefix", 2, "-o", out)
    r = np.load(out)
    want3 = lerp_resize(a, 601, 2)[3]
    t.check(rc == 0 and ulps(r[0], want3) <= 1 and np.array_equal(r[1], a[513]),
            "--past-end resize: table resized to 601 rows (keep 2); position 3 reads the lerped row, 600 the old last row")

    # ---- learned: resize ----------------------------------------------------------------
    rc, _, _ = run("table", "--kind", "learned", "--table", wpe, "--resize", 1026, "--keep-prefix", 2, "-o", out)
    rz = np.load(out)
    want = lerp_resize(a, 1026, 2)
    t.check(rc == 0 and rz.shape == (1026, 24) and np.array_equal(rz[:2], a[:2]) and np.array_equal(rz[2], a[2])
            and np.array_equal(rz[-1], a[-1]), "--resize 1026 --keep-prefix 2: rows 0,1 and both body endpoints exact")
    u = ulps(rz[2:], want[2:])
    t.check(u <= 1, f"resized body = lerp at x=j*511/1023: max {u} ULP (<= 1: numpy forms x in float64, "
                    "posenc as an exact fraction, which may flip one rounding)")

    # ---- xl ------------------------------------------------------------------------------
    rc, _, _ = run("table", "--kind", "xl", "--len", 40, "--dim", 16, "--dtype", "f64", "-o", out)
    R = np.load(out)
    dist = np.arange(39, -1, -1.0)[:, None]
    w = 10000.0 ** (-np.arange(0, 16, 2) / 16)
    want = np.concatenate([np.sin(dist * w), np.cos(dist * w)], axis=1)
    t.check(rc == 0 and R.shape == (40, 16) and np.abs(R - want).max() < 1e-14,
            f"xl klen 40: rows = distances 39..0, [sin|cos] (max diff {np.abs(R - want).max():.1e} < 1e-14)")
    rc, _, _ = run("table", "--kind", "xl", "--len", 40, "--dim", 16, "--clamp", 10, "--dtype", "f64", "-o", out)
    Rc = np.load(out)
    dc = np.minimum(dist, 10)
    want = np.concatenate([np.sin(dc * w), np.cos(dc * w)], axis=1)
    t.check(rc == 0 and np.abs(Rc - want).max() < 1e-14, "xl --clamp 10: distances above 10 become 10")
    try:
        import torch  # XL's own float32 code, written out: torch is in the test environment
        from common import torch_math_library
        torch_math_library(torch)  # posenc's torch-compat runs sin/cos as this torch does
        inv = 1 / (10000 ** (torch.arange(0.0, 16, 2.0) / 16))
        ps = torch.arange(39, -1, -1.0)
        si = torch.ger(ps, inv)
        tref = torch.cat([si.sin(), si.cos()], dim=-1).numpy()
        rc, _, _ = run("table", "--kind", "xl", "--len", 40, "--dim", 16, "--torch-compat", "-o", out)
        diff = np.abs(np.load(out) - tref).max()
        t.check(rc == 0 and diff == 0, f"xl --torch-compat vs torch float32 XL code: max diff {diff:.2e} "
                                       "(tol 0: same float32 steps, SLEEF = torch's vectorized sin/cos/pow)")
    except ImportError:
        print("  (torch not importable: XL torch cross-check skipped)")

    # ---- 2d / 3d: tatp22 goldens bit for bit ---------------------------------------------
    for name, kind, grid, ch in (("tatp22_pe2d_6x5_ch12", "2d", "6x5", 12), ("tatp22_pe2d_6x5_ch10", "2d", "6x5", 10),
                                 ("tatp22_pe3d_4x3x2_ch18", "3d", "4x3x2", 18), ("tatp22_pe3d_4x3x2_ch20", "3d", "4x3x2", 20)):
        path = os.path.join(GOLDEN, name + ".npy")
        if not t.check(os.path.exists(path), f"golden {name} exists"):
            continue
        gold = np.load(path)[0]
        rc, _, _ = run("table", "--kind", kind, "--grid", grid, "--dim", ch, "--torch-compat", "-o", out)
        ours = np.load(out)
        t.check(rc == 0 and ours.shape == gold.shape and ours.tobytes() == gold.tobytes(),
                f"{name}: --kind {kind} --grid {grid} --torch-compat is bit-identical ({ours.shape})")
        rc, _, _ = run("table", "--kind", kind, "--grid", grid, "--dim", ch, "-o", out)
        diff = np.abs(np.load(out) - gold).max()
        t.check(rc == 0 and diff <= 2e-6, f"{name} precise: max diff {diff:.2e} (<= 2e-6: torch's float32 angle, p < 6)")
    rc, _, _ = run("table", "--kind", "3d", "--grid", "3x4x5", "--dim", 24, "--split", "even", "--dtype", "f64", "-o", out)
    v = np.load(out)
    w8 = 10000.0 ** (-np.arange(0, 8, 2) / 8)

    def emb(p):
        e = np.empty(8)
        e[0::2], e[1::2] = np.sin(p * w8), np.cos(p * w8)
        return e

    want = np.concatenate([emb(2), emb(1), emb(4)])
    t.check(rc == 0 and v.shape == (3, 4, 5, 24) and np.abs(v[2, 1, 4] - want).max() < 1e-15,
            "3d --split even: 24 channels = 8 per axis; cell (2,1,4) = [pe8(2) | pe8(1) | pe8(4)]")

    # ---- hybrid -------------------------------------------------------------------------------
    rc, _, _ = run("table", "--kind", "hybrid", "--len", 20, "--dim", 16, "--learned-dim", 6, "--seed", 3, "-o", out)
    h = np.load(out)
    rc2, _, _ = run("table", "--len", 20, "--dim", 16, "-o", os.path.join(d, "s.npy"))
    s = np.load(os.path.join(d, "s.npy"))
    t.check(rc == 0 and rc2 == 0 and np.array_equal(h[:, 6:], s[:, 6:]) and np.array_equal(h[:, :6], reference_table(3, 0.02, 20, 6)),
            "hybrid --learned-dim 6: channels 0..5 = learned table (seed 3), 6..15 = sinusoid, exactly")
    small = os.path.join(d, "small.npy")
    np.save(small, a[:10, :4])
    rc, _, _ = run("table", "--kind", "hybrid", "--len", 8, "--dim", 16, "--table", small, "-o", out)
    t.check(rc == 0 and np.array_equal(np.load(out)[:, :4], a[:8, :4]), "hybrid --table: learned part from the file")
    fails(("table", "--kind", "hybrid", "--len", 12, "--dim", 16, "--table", small, "-o", out), 1, "10", "10 rows", row="L1")
    fails(("table", "--kind", "hybrid", "--len", 12, "--dim", 16, "--table", small, "--learned-dim", 5, "-o", out), 2,
          "--learned-dim 5", "4 columns", row="L4")

    # ---- sinusoid with a frequency scale ------------------------------------------------------
    rc, _, _ = run("table", "--len", 30, "--dim", 8, "--freq-scale", 0.5, "-o", out)
    ws = 0.5 * 10000.0 ** (-np.arange(0, 8, 2) / 8)
    p = np.arange(30)[:, None]
    want = np.empty((30, 8))
    want[:, 0::2], want[:, 1::2] = np.sin(p * ws), np.cos(p * ws)
    t.check(rc == 0 and np.abs(np.load(out) - want).max() < 6e-8, "--freq-scale 0.5: angles p * 0.5 * w_k")

    # ---- compose --------------------------------------------------------------------------------
    tok = os.path.join(d, "tok.npy")
    tokens = reference_table(11, 1.0, 50, 8)
    np.save(tok, tokens)
    cids = os.path.join(d, "cids.npy")
    np.save(cids, np.array([[3, 7, 3, 9, 3], [1, 2, 4, 2, 5]], dtype=np.int64))
    rc, so, _ = run("compose", "--tokens", tok, "--ids", cids, "--check", "-o", out)
    x = np.load(out)
    pe = np.empty((5, 8))
    w4 = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    pe[:, 0::2], pe[:, 1::2] = np.sin(np.arange(5)[:, None] * w4), np.cos(np.arange(5)[:, None] * w4)
    want = tokens[[[3, 7, 3, 9, 3], [1, 2, 4, 2, 5]]].astype(np.float64) * np.sqrt(8) + pe
    rep = json.loads(so)
    t.check(rc == 0 and x.shape == (2, 5, 8) and np.abs(x - want).max() < 1e-6,
            f"compose add: token*sqrt(8) + sinusoid (max diff {np.abs(x - want).max():.1e} < 1e-6, float32 sums)")
    t.check(rep["position_signal"] is True and rep["same_id_pairs"] == 3 and rep["same_id_identical"] == 0,
            f"--check on the composed batch: signal present ({so.strip()})")
    zero_pe = os.path.join(d, "zpe.npy")
    np.save(zero_pe, np.zeros((5, 8), dtype=np.float32))
    rc, so, se = run("compose", "--tokens", tok, "--ids", cids, "--pe", zero_pe, "--check", "-o", out)
    rep = json.loads(so)
    t.check(rc == 0 and rep["position_signal"] is False and rep["first_last_identical"] == 1
            and rep["same_id_identical"] == 3 and "no position signal" in se,
            f"PE forgotten (zero PE): signal absent ({so.strip()})")
    batch = os.path.join(d, "batch.npy")
    np.save(batch, x)
    rc, so, _ = run("compose", "--check", "--batch", batch, "--ids", cids)
    t.check(rc == 0 and json.loads(so)["position_signal"] is True, "--check --batch on a saved batch: present")
    np.save(batch, tokens[[[3, 7, 3, 9, 3]]])
    rc, so, _ = run("compose", "--check", "--batch", batch)
    t.check(rc == 0 and json.loads(so)["position_signal"] is False, "--check --batch of raw token vectors: absent (first == last)")
    proj = os.path.join(d, "proj.npy")
    W = reference_table(12, 0.1, 12, 5)
    np.save(proj, W)
    rc, _, _ = run("compose", "--tokens", tok, "--ids", cids, "--mode", "concat", "--pe-dim", 4,
                   "--projection", proj, "-o", out)  # concat's default token scale is 1
    pe4 = np.empty((5, 4))
    w2 = 10000.0 ** (-np.arange(0, 4, 2) / 4)
    pe4[:, 0::2], pe4[:, 1::2] = np.sin(np.arange(5)[:, None] * w2), np.cos(np.arange(5)[:, None] * w2)
    cat = np.concatenate([tokens[[[3, 7, 3, 9, 3], [1, 2, 4, 2, 5]]].astype(np.float64), np.broadcast_to(pe4, (2, 5, 4))], -1)
    want = cat @ W.astype(np.float64)
    got = np.load(out)
    t.check(rc == 0 and got.shape == (2, 5, 5) and np.abs(got - want).max() < 1e-6,
            f"compose concat + projection [12x5]: max diff {np.abs(got - want).max():.1e} (< 1e-6)")
    rc, _, _ = run("compose", "--tokens", tok, "--ids", cids, "--mode", "concat", "--pe-dim", 4, "--scale", 2, "-o", out)
    got = np.load(out)
    t.check(rc == 0 and got.shape == (2, 5, 12) and np.array_equal(got[..., :8], 2 * tokens[[[3, 7, 3, 9, 3], [1, 2, 4, 2, 5]]])
            and np.abs(got[0, :, 8:] - pe4).max() < 6e-8,
            "compose concat without projection, --scale 2: [2*token | sinusoid(4)] (exact x2; PE to half an ULP)")

    # ---- bad input: message names the value, non-zero exit, nothing written -------------------
    np.save(pos, np.array([1, 2], dtype=np.int64))
    bad_ids = os.path.join(d, "bad_ids.npy")
    np.save(bad_ids, np.array([3, 50, 2], dtype=np.int64))
    fails(("compose", "--tokens", tok, "--ids", bad_ids, "-o", out), 1, "token id 50 at [0, 1]", "[0, 50)", row="L3")
    np.save(bad_ids, np.array([3, -4, 2], dtype=np.int64))
    fails(("compose", "--tokens", tok, "--ids", bad_ids, "-o", out), 1, "token id -4", row="L3")
    pe6 = os.path.join(d, "pe6.npy")
    np.save(pe6, np.zeros((5, 6), dtype=np.float32))
    fails(("compose", "--tokens", tok, "--ids", cids, "--pe", pe6, "-o", out), 2, "dims do not match", "8", "6", row="L4")
    fails(("compose", "--tokens", tok, "--ids", cids, "--mode", "concat", "--pe", pe6, "--projection", proj, "-o", out),
          2, "dims do not match", "12 rows", "8 + 6 = 14", row="L4")
    np.save(pe6, np.zeros((3, 8), dtype=np.float32))
    fails(("compose", "--tokens", tok, "--ids", cids, "--pe", pe6, "-o", out), 2, "3 rows", "5 positions", row="L4")
    fails(("table", "--kind", "learned", "--table", wpe, "--len", 3, "--dim", 32, "-o", out), 2, "--dim 32", "24 columns", row="L4")
    for grid, kind, needle in (("6x", "2d", "'6x'"), ("x5", "2d", "'x5'"), ("6x5x", "2d", "'6x5x'"), ("0x5", "2d", "'0x5'"),
                               ("-1x5", "2d", "'-1x5'"), ("6*5", "2d", "'6*5'"), ("6x5", "3d", "'6x5'"),
                               ("4x3x2x1", "3d", "'4x3x2x1'"), ("99999999999x2", "2d", "99999999999")):
        fails(("table", "--kind", kind, "--grid", grid, "--dim", 12, "-o", out), 2, needle, row="L11")
    fails(("table", "--kind", "3d", "--grid", "4x3x2", "--dim", 20, "--split", "even", "-o", out), 2, "multiple of 6", "got 20", row="L12")
    fails(("table", "--kind", "xl", "--len", 4, "--dim", 7, "-o", out), 2, "got 7", row="L13")
    fails(("table", "--kind", "xl", "--len", 4, "--dim", 8, "--clamp", -1, "-o", out), 2, "--clamp", "'-1'")
    fails(("table", "--kind", "xl", "--len", 0, "--dim", 8, "-o", out), 2, "--len", "'0'")
    fails(("table", "--kind", "learned", "--len", 4, "--dim", 8, "--sigma", -1, "-o", out), 2, "--sigma", "-1", row="L5")
    fails(("table", "--kind", "learned", "--len", 4, "--dim", 8, "--seed", -1, "-o", out), 2, "--seed", "'-1'")
    fails(("table", "--kind", "learned", "--len", 4, "--dim", 8, "--sigma", "nan", "-o", out), 2, "--sigma", "nan")
    fails(("table", "--kind", "learned", "--len", 4, "--dim", 8, "--padding-idx", 4, "-o", out), 2, "--padding-idx", "got 4", row="L6")
    fails(("table", "--kind", "learned", "--len", 4, "--dim", 8, "--positions", pos, "-o", out), 2, "--positions needs --table")
    fails(("table", "--kind", "learned", "--table", wpe, "--resize", 1, "--keep-prefix", 2, "-o", out), 2, "got 1", row="L7")
    fails(("table", "--kind", "learned", "--table", os.path.join(d, "missing.npy"), "--len", 2, "-o", out), 1, "missing.npy")
    np.save(small, np.zeros((2, 3, 4), dtype=np.float32))
    fails(("table", "--kind", "learned", "--table", small, "--len", 2, "-o", out), 2, "rank 3", row="L9")
    fails(("table", "--kind", "learned", "--len", 4, "--dim", 8, "--grid", "2x2", "-o", out), 2, "--grid does not apply", row="L15")
    fails(("table", "--kind", "sinusoidal", "--len", 4, "--dim", 8, "--seed", 3, "-o", out), 2, "--seed does not apply", row="L15")
    fails(("table", "--kind", "index", "--len", 4, "--dim", 8, "--freq-scale", 2, "-o", out), 2, "--freq-scale")
    fails(("table", "--len", 4, "--dim", 8, "--freq-scale", 0, "-o", out), 2, "got 0", row="L14")
    fails(("table", "--kind", "learned", "--len", 100000, "--dim", 100000, "--max-bytes", 1000000, "-o", out), 2, "1000000")
    empty = os.path.join(d, "empty.npy")
    np.save(empty, np.zeros((2, 0), dtype=np.int64))
    fails(("table", "--kind", "learned", "--table", wpe, "--input-ids", empty, "-o", out), 2, "0 elements")
    fails(("compose", "--tokens", tok, "--ids", empty, "-o", out), 2, "0 elements")
    np.save(empty, np.zeros((0, 8), dtype=np.float32))
    fails(("compose", "--tokens", empty, "--ids", cids, "-o", out), 2, "0 elements")
    np.save(pos, np.array([0.5, 1.0]))
    fails(("table", "--kind", "learned", "--table", wpe, "--positions", pos, "-o", out), 2, "integer positions", "floats", row="L10")
    fails(("table", "--kind", "learned", "--table", wpe, "--len", 2 ** 40, "-o", out), 2, str(2 ** 40), "size limit")
    np.save(pos, np.array([0, 900], dtype=np.int64))
    fails(("table", "--kind", "learned", "--table", wpe, "--positions", pos, "--past-end", "resize", "--keep-prefix", 514,
           "-o", out), 2, "keep", "got 514")
    fails(("compose", "--tokens", tok, "--ids", cids, "--projection", proj, "-o", out), 2, "--projection goes with --mode concat")
    np.save(pos, np.array([4, -1], dtype=np.int64))
    fails(("table", "--kind", "learned", "--table", wpe, "--positions", pos, "--past-end", "clamp", "-o", out), 1,
          "position 1 must be >= 0, got -1", row="L2")
    np.save(batch, np.ones((1, 8), dtype=np.float32))
    rc, so, se = run("compose", "--check", "--batch", batch)
    t.check(rc == 2 and "seq >= 2" in se and "1 x 1" in se and so == "",
            f"[L16] --check on a 1-token batch: exit {rc}, '{se.strip().splitlines()[0]}'")
    fails(("table", "--kind", "hybrid", "--len", 4, "--dim", 8, "-o", out), 2, "--learned-dim")
    fails(("table", "--kind", "hybrid", "--len", 4, "--dim", 8, "--learned-dim", 9, "-o", out), 2, "got 9")
    t.finish()


if __name__ == "__main__":
    main()
