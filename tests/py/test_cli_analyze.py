"""`posenc analyze` (health statistics, .npy and .safetensors inputs written
here by hand with struct+json, hostile safetensors files), `posenc precision`
(values checked against a direct numpy computation for bf16/f16/f32, and the
numbers of conventions.md section 12), and `posenc signal`."""
import json
import os
import struct

import numpy as np

from common import GOLDEN, Checks, run, tmpdir


def jrun(*args):
    rc, so, se = run(*args, "--json")
    try:
        return rc, json.loads(so), se
    except ValueError:
        return rc, None, se


def bf16_bits(x):
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16(x):
    return (bf16_bits(x).astype(np.uint32) << 16).view(np.float32)


def safetensors(path, tensors, header_override=None, raw_len=None):
    """tensors: name -> (dtype string, shape, raw bytes). Offsets laid out in order."""
    header, data, off = {"__metadata__": {"format": "pt"}}, b"", 0
    for name, (dt, shape, raw) in tensors.items():
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        data += raw
        off += len(raw)
    if header_override:
        header.update(header_override)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h) if raw_len is None else raw_len) + h + data)
    return path


def sinusoid(n, d, base=1e4):
    k = np.arange(d // 2)
    th = np.arange(n)[:, None] * base ** (-2 * k / d)
    out = np.zeros((n, d))
    out[:, 0::2], out[:, 1::2] = np.sin(th), np.cos(th)
    return out


def main():
    t = Checks()
    d = tmpdir()
    P = lambda name: os.path.join(d, name)

    # ---- analyze: a sinusoid table ----
    pe = sinusoid(50, 64).astype(np.float32)
    np.save(P("pe.npy"), pe)
    rc, h, se = jrun("analyze", P("pe.npy"))
    x = pe.astype(np.float64)
    fit = h["fit"]
    t.check(rc == 0 and h["rows"] == 50 and h["channels"] == 64 and h["min"] == x.min() and h["max"] == x.max()
            and abs(h["mean_abs"] - np.abs(x).mean()) < 1e-12, f"analyze: min {h['min']} max {h['max']} mean|x| {h['mean_abs']:.9g}")
    norms = np.linalg.norm(x, axis=1)
    t.check(np.allclose(h["row_norm"], norms, atol=1e-12) and np.allclose(h["row_variance"], x.var(axis=1), atol=1e-12),
            f"per-position norm (all {norms[0]:.6f} = sqrt(32)) and variance match numpy to 1e-12")
    dist = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=2) + np.eye(50) * 1e9
    cp = h["closest_pair"]
    # consecutive rows of a sinusoid table are all (nearly) equally far apart, so
    # compare the distance and check it belongs to the reported pair, not the indices
    t.check(abs(cp["distance"] - dist.min()) < 1e-12 and abs(dist[cp["a"], cp["b"]] - cp["distance"]) < 1e-12,
            f"closest pair ({cp['a']}, {cp['b']}) distance {cp['distance']:.9g} = numpy brute-force minimum {dist.min():.9g}")
    cos = [np.mean([x[p] @ x[p + k] / (norms[p] * norms[p + k]) for p in range(50 - k)]) for k in range(len(h["mean_cosine"]))]
    t.check(np.allclose(h["mean_cosine"], cos, atol=1e-12) and len(cos) == 50,
            f"mean cosine vs offset matches numpy for offsets 0..{len(cos) - 1} (offset 1: {cos[1]:.6f})")
    f0 = h["channel_frequency"][0]
    t.check(abs(f0 - 1) < 0.02 and abs(h["channel_wavelength"][0] - 2 * np.pi) < 0.15 and h["channel_wavelength"][63] is None,
            f"dominant frequency of channel 0 {f0:.4f} ~ 1 (FFT bin 2pi/256, parabolic peak: tol 0.02); channel 63 longer than table")
    t.check(fit["found"] and fit["layout"] == "interleaved" and fit["base"] == 10000 and fit["freqs"] == "vaswani"
            and fit["start"] == 0 and fit["formation"] == "exact",
            f"fit: {fit['layout']} {fit['freqs']} base {fit['base']} start {fit['start']} angles {fit['formation']}")
    lin = h["linearity"]
    t.check(lin["offsets"] == [1, 2, 10] and lin["worst"] < 1e-6,
            f"linearity residual max {lin['worst']:.3g} < 1e-6 (float32 table: 2 roundings of |x|<=1 per channel)")
    rc, g, _ = jrun("analyze", "--len", 200, "--dim", 32, "--freqs", "t2t", "--layout", "half")
    t.check(rc == 0 and g["linearity"]["worst"] < 1e-12 and g["fit"]["freqs"] == "t2t" and g["fit"]["layout"] == "half",
            f"generated t2t/half float64 table: linearity {g['linearity']['worst']:.2g} < 1e-12 (float64 rounding), fit {g['fit']['freqs']}")
    rng = np.random.default_rng(0)
    np.save(P("learned.npy"), (rng.standard_normal((200, 64)) * 0.02).astype(np.float32))
    rc, h, _ = jrun("analyze", P("learned.npy"))
    t.check(rc == 0 and not h["fit"]["found"] and h["linearity"] is None, "learned table: no sinusoid fit, linearity not applicable")
    bad = pe.copy()
    bad[3, 5], bad[7, 1] = np.nan, np.inf
    np.save(P("nan.npy"), bad)
    rc, h, _ = jrun("analyze", P("nan.npy"))
    t.check(rc == 0 and h["nonfinite"] == 2 and h["first_nonfinite"] == [3, 5] and h["max"] == 1.0,
            f"NaN/inf: reported ({h['nonfinite']}, first {h['first_nonfinite']}), statistics over finite values")
    rc, so, _ = run("analyze", P("nan.npy"))
    t.check(rc == 0 and "WARNING: 2 non-finite" in so, "text report warns about non-finite values")
    np.save(P("empty.npy"), np.zeros((0, 8), np.float32))
    rc, _, se = run("analyze", P("empty.npy"))
    t.check(rc == 1 and "empty" in se, f"empty table: exit 1 ({se.strip()[:70]})")

    # ---- analyze RoPE cos/sin caches (peer goldens: HF LlamaRotaryEmbedding) ----
    if os.path.exists(os.path.join(GOLDEN, "manifest.json")):
        cs = lambda c: ("--cos", os.path.join(GOLDEN, f"hf_llama_rotary_cos_{c}.npy"),
                        "--sin", os.path.join(GOLDEN, f"hf_llama_rotary_sin_{c}.npy"))
        rc, h, se = jrun("analyze", *cs("default_hd64_base10000_pos0"))
        f = h["fit"] if h else {}
        t.check(rc == 0 and f["base"] == 10000 and f["start"] == 0 and f["pairs"] == 32 and f["formation"] == "float32"
                and h["linearity"]["worst"] < 1e-5,
                f"HF default caches: base {f.get('base')}, start {f.get('start')}, angles {f.get('formation')}, "
                f"linearity {h and h['linearity']['worst']:.2g} < 1e-5 (float32 angles at p <= 36)")
        rc, h, _ = jrun("analyze", *cs("yarn_f4_hd64_base10000_pos0"))
        amp, want = h["fit"]["amplitude"], 0.1 * np.log(4) + 1
        t.check(abs(amp - want) < 1e-6, f"HF yarn f=4 caches: amplitude {amp:.7f} = attention factor 0.1 ln 4 + 1 = {want:.7f} (tol 1e-6)")
        rc, h, _ = jrun("analyze", *cs("linear_f4_hd64_base10000_pos0"))
        t.check(h["fit"]["scale"] == 0.25 and h["fit"]["base"] == 10000, f"HF linear f=4 caches: scale {h['fit']['scale']}, base {h['fit']['base']}")
        rc, h, _ = jrun("analyze", *cs("llama3_f8_orig8192_hd64_base500000_pos1000"))
        t.check(h["fit"]["start"] == 1000 and h["fit"]["geometric_error"] > 0.1,
                f"HF llama3 caches: start {h['fit']['start']}, frequencies not geometric (deviation {h['fit']['geometric_error']:.2f})")
        rc, _, se = run("analyze", "--cos", os.path.join(GOLDEN, "hf_llama_rotary_cos_default_hd64_base10000_pos0.npy"))
        t.check(rc == 2 and "--sin" in se, "--cos without --sin: usage error")

    # ---- safetensors: several dtypes ----
    src = (rng.standard_normal((16, 8)) * 0.5).astype(np.float32)
    st = safetensors(P("model.safetensors"), {
        "wpe.weight": ("F32", src.shape, src.tobytes()),
        "half": ("F16", src.shape, src.astype(np.float16).tobytes()),
        "brain": ("BF16", src.shape, bf16_bits(src).tobytes()),
        "double": ("F64", src.shape, src.astype(np.float64).tobytes())})
    for name, ref in [("wpe.weight", src), ("half", src.astype(np.float16)), ("brain", bf16(src)), ("double", src.astype(np.float64))]:
        rc, h, se = jrun("analyze", st, "--tensor", name)
        r = ref.astype(np.float64)
        t.check(rc == 0 and h["min"] == r.min() and h["max"] == r.max() and abs(h["mean_abs"] - np.abs(r).mean()) < 1e-12,
                f"safetensors {name}: min {h and h['min']:.6g} max {h and h['max']:.6g} equal numpy's ({se.strip()[:60]})")
    rc, _, se = run("analyze", st, "--tensor", "nope")
    t.check(rc == 1 and "wpe.weight" in se and "nope" in se, f"missing tensor lists names: {se.strip()[:100]}")
    rc, _, se = run("analyze", st)
    t.check(rc == 2 and "--tensor" in se, "safetensors without --tensor: usage error")
    raw = src.tobytes()
    hostile = {
        "header length larger than the file": lambda p: safetensors(p, {"a": ("F32", (16, 8), raw)}, raw_len=10 ** 9),
        "overlapping offsets": lambda p: safetensors(p, {"a": ("F32", (16, 8), raw)}, {"b": {"dtype": "F32", "shape": [4, 8], "data_offsets": [64, 192]}}),
        "negative offsets": lambda p: safetensors(p, {"a": ("F32", (16, 8), raw)}, {"a": {"dtype": "F32", "shape": [16, 8], "data_offsets": [-8, 504]}}),
        "unknown dtype": lambda p: safetensors(p, {"a": ("F8_E4M3", (16, 8), raw)}),
        "size disagrees with shape": lambda p: safetensors(p, {"a": ("F32", (16, 9), raw)}),
        "offsets past the data": lambda p: safetensors(p, {"a": ("F32", (16, 8), raw)}, {"a": {"dtype": "F32", "shape": [16, 8], "data_offsets": [8, 520]}}),
        "not JSON": lambda p: open(p, "wb").write(struct.pack("<Q", 8) + b"{nope!!}"),
        "shorter than 8 bytes": lambda p: open(p, "wb").write(b"\x01\x02"),
        "header is an array": lambda p: open(p, "wb").write(struct.pack("<Q", 8) + b"[1,2,3] "),
        "huge shape": lambda p: safetensors(p, {"a": ("F32", (16, 8), raw)}, {"a": {"dtype": "F32", "shape": [2 ** 40, 2 ** 40], "data_offsets": [0, 512]}}),
    }
    for what, make in hostile.items():
        make(P("bad.safetensors"))
        rc, _, se = run("analyze", P("bad.safetensors"), "--tensor", "a")
        t.check(rc == 1 and "safetensors" in se and len(se) < 600, f"hostile safetensors ({what}): exit {rc}: {se.strip().splitlines()[0][:110]}")

    # ---- precision: direct computation ----
    def direct(dtype, n, dim, base=1e4):
        w = base ** (-2 * np.arange(dim // 2) / dim)
        p = np.arange(n + 1, dtype=np.float64)[:, None]
        if dtype == "bf16":
            formed = bf16(bf16(p) * bf16(w)).astype(np.float64)
            store = lambda v: bf16(v).astype(np.float64)
        elif dtype == "f16":
            with np.errstate(over="ignore"):
                formed = (p.astype(np.float16) * w.astype(np.float16)).astype(np.float64)
            store = lambda v: v.astype(np.float16).astype(np.float64)
        else:
            formed = (p.astype(np.float32) * w.astype(np.float32)).astype(np.float64)
            store = lambda v: v.astype(np.float32).astype(np.float64)
        exact = p * w
        err = np.abs(np.remainder(formed - exact + np.pi, 2 * np.pi) - np.pi)
        th = n * w
        return err.max(axis=0), (2 * np.abs(np.sin(err[-1] / 2))).max(), np.hypot(store(np.cos(th)) - np.cos(th), store(np.sin(th)) - np.sin(th)).max()

    for dtype, n, first, to in [("bf16", 5000, 257, 256), ("f16", 60000, 2049, 2048), ("f32", 100000, -1, None)]:
        rc, r, se = jrun("precision", "--dtype", dtype, "--max-pos", n, "--dim", 16)
        ang, logit, table = direct(dtype, n, 16)
        worst = np.abs(np.array(r["angle_error"]) - ang).max()
        ok = (rc == 0 and r["first_inexact_position"] == first and (to is None or r["first_inexact_rounds_to"] == to)
              and worst < 1e-9 and abs(r["logit_error_angle"] - logit) < 1e-9 and abs(r["logit_error_table"] - table) < 1e-12)
        t.check(ok, f"precision {dtype} 0..{n}: first inexact {r['first_inexact_position']} -> {r['first_inexact_rounds_to']}, "
                    f"per-pair angle errors = numpy (max diff {worst:.2g} < 1e-9: float64 vs extended angles), logit "
                    f"{r['logit_error_angle']:.4g} vs {logit:.4g}, table {r['logit_error_table']:.3g} vs {table:.3g}")
        if dtype != "f32":
            t.check(r["first_angle_collision"] == first and r["angle_collision_with"] == to,
                    f"{dtype}: angles formed in {dtype} collide first at {r['first_angle_collision']} (= {r['angle_collision_with']})")
    # table rows stored in bf16 (exact angles): one pair collides when p ~ q mod 2 pi
    rc, r, _ = jrun("precision", "--dtype", "bf16", "--max-pos", 20000, "--dim", 2)
    rows = np.stack([bf16(np.sin(np.arange(20001.0))), bf16(np.cos(np.arange(20001.0)))], axis=1)
    seen, first = {}, None
    for i, row in enumerate(map(bytes, rows)):
        if row in seen:
            first = (i, seen[row])
            break
        seen[row] = i
    t.check((r["first_table_collision"], r["table_collision_with"]) == first,
            f"bf16 table, d=2: first row collision {r['first_table_collision']} == row {r['table_collision_with']} "
            f"(numpy brute force: {first})")
    rc, r, _ = jrun("precision", "--dtype", "f16", "--max-pos", 70000, "--dim", 8)
    t.check(r["first_overflow_position"] == 65520 and r["bands"][-1]["angle_error"] is None and r["bands"][2]["max_position"] == 65504
            and r["bands"][2]["angle_error"] is not None, "f16: 65520 overflows to inf (angle error null past it); band 65504 finite")
    # conventions.md 12.3: float32 angles (HF: 1/pow then *p), d=128, theta=1e4: 3.2e-5, 5.2e-3, 5.2e-2 rad
    for n, want in [(1000, 3.2e-5), (100000, 5.2e-3), (1000000, 5.2e-2)]:
        rc, r, _ = jrun("precision", "--dtype", "f32", "--max-pos", n, "--dim", 128)
        got = r["logit_error_angle"]  # = 2 sin(err/2) ~ the angle error at exactly n
        t.check(abs(got / want - 1) < 0.05, f"f32 angle error at {n}: {got:.3g} rad vs conventions.md 12.3 {want} (5%: 2-digit doc value)")
    rc, r, _ = jrun("precision", "--dtype", "bf16", "--max-pos", 131072, "--dim", 128, "--base", 500000)
    t.check([b["max_position"] for b in r["bands"]] == [256, 2048, 65504, 131072]
            and [b["positions_exact"] for b in r["bands"]] == [True, False, False, False],
            f"bf16 bands {[b['max_position'] for b in r['bands']]}, exact only up to 256")
    rc, _, se = run("precision", "--dtype", "f8", "--max-pos", 10)
    t.check(rc == 2 and "--dtype" in se, f"bad dtype: exit 2 ({se.strip()[:70]})")
    rc, _, se = run("precision", "--dtype", "bf16", "--max-pos", 2 ** 31, "--dim", 128)
    t.check(rc == 2 and "2^32" in se, f"too much work refused up front: {se.strip()[:90]}")
    rc, _, se = run("precision", "--dtype", "bf16", "--max-pos", 0)
    t.check(rc == 2, f"max-pos 0: exit 2 ({se.strip()[:70]})")

    # ---- signal ----
    tok = (rng.standard_normal((60, 64)) * 0.05).astype(np.float32)
    np.save(P("tok.npy"), tok)
    cases = [("tutorial (x*sqrt(d) + PE)", tok * np.float32(8) + sinusoid(60, 64).astype(np.float32), True, True),
             ("learned", tok + (rng.standard_normal((60, 64)) * 0.1).astype(np.float32), True, False),
             ("none", tok.copy(), False, False)]
    for name, inp, present, sinus in cases:
        np.save(P("inp.npy"), inp.astype(np.float32))
        rc, r, se = jrun("signal", P("tok.npy"), P("inp.npy"))
        t.check(rc == 0 and r["present"] == present and r["sinusoidal"] == sinus
                and (name != "tutorial (x*sqrt(d) + PE)" or (r["scale_is_sqrt_dim"] and r["fit"]["base"] == 10000)),
                f"signal {name}: present {r['present']}, sinusoidal {r['sinusoidal']}, scale {r['token_scale']:.4g}: {r['verdict'][:80]}")
    np.save(P("inp.npy"), np.zeros((10, 64), np.float32))
    rc, _, se = run("signal", P("tok.npy"), P("inp.npy"))
    t.check(rc == 2 and "[60 x 64]" in se and "[10 x 64]" in se, f"[Y2] signal shape mismatch: {se.strip()[:100]}")
    # issue 13.13: a [B, T, D] batch of 8*tokens + sinusoid was called "learned-looking"
    # (the rows were flattened, so the sinusoid restarted every T rows)
    B, T, D = 4, 128, 64
    btok = rng.standard_normal((B, T, D)).astype(np.float32)
    np.save(P("btok.npy"), btok)
    np.save(P("binp.npy"), (8 * btok + sinusoid(T, D)).astype(np.float32))
    rc, r, se = jrun("signal", P("btok.npy"), P("binp.npy"))
    t.check(rc == 0 and r["verdict_code"] == 2 and r["sinusoidal"] and r["token_scale"] == 8 and r["sequences"] == B
            and r["positions"] == T and r["fit"]["base"] == 10000 and r["fit"]["start"] == 0,
            f"signal [4,128,64] = 8*tokens + tutorial PE: sinusoidal, scale {r.get('token_scale')}, "
            f"{r.get('sequences')} x {r.get('positions')}: {r.get('verdict', se)[:70]}")
    t.check(r["verdict"].endswith("(4 sequences of 128 positions)") and "PyTorch tutorial" in r["verdict"],
            f"the verdict is whole: ...{r['verdict'][-90:]}")
    # each sequence with its own positions (e.g. left padding): said, not fitted
    shifted = np.stack([8 * btok[b] + sinusoid(T + 3 * b, D)[3 * b:] for b in range(B)]).astype(np.float32)
    np.save(P("binp.npy"), shifted)
    rc, r, se = jrun("signal", P("btok.npy"), P("binp.npy"))
    t.check(rc == 0 and r["verdict_code"] == 4 and r["sequence_spread"] > 0.05 and "differs between the 4 sequences" in r["verdict"],
            f"signal, positions shifted per sequence: per-sequence verdict (spread {r.get('sequence_spread', 0):.3g})")
    np.save(P("binp.npy"), np.zeros((2, B, T, D), np.float32))
    np.save(P("btok4.npy"), np.zeros((2, B, T, D), np.float32))
    rc, _, se = run("signal", P("btok4.npy"), P("binp.npy"))
    t.check(rc == 2 and "[T, D] or [B, T, D], got rank 4" in se, f"[Y1] signal rank 4 refused: {se.strip()[:90]}")
    bad = 8 * btok + sinusoid(T, D)
    bad[1, 3, 7] = np.nan
    np.save(P("binp.npy"), bad.astype(np.float32))
    rc, _, se = run("signal", P("btok.npy"), P("binp.npy"))
    t.check(rc == 2 and "non-finite value at sequence 1, position 3, channel 7 of the input embeddings" in se,
            f"[Y3] signal NaN named: {se.strip()[:100]}")
    rc, _, se = run("precision", "--dtype", "f64", "--max-pos", 10)
    t.check(rc == 2 and "--dtype f64 has nothing to audit" in se, f"[Y4] precision --dtype f64: {se.strip()[:90]}")
    # never cut mid-word (the library's 150-character preset slot cut this one): a
    # cos-first [cos|sin] t2t table from position 1000 with frequencies x 0.25
    k = np.arange(32)
    w = 0.25 * 10000.0 ** (-k / 31)
    ang = (1000 + np.arange(60))[:, None] * w
    pe = np.concatenate([np.cos(ang), np.sin(ang)], axis=1)
    np.save(P("inp.npy"), (tok * np.float32(8) + pe).astype(np.float32))
    rc, r, se = jrun("signal", P("tok.npy"), P("inp.npy"))
    v = r.get("verdict", se)
    t.check(rc == 0 and r["sinusoidal"] and "frequencies x 0.25; tokens scaled by 8 = sqrt(d), as in the tutorial" in v
            and len(v) > 200, f"long verdict whole ({len(v)} chars): {v}")
    t.finish()


if __name__ == "__main__":
    main()
