"""`posenc diff`: peer goldens that should agree agree, those that should not are
diagnosed with the right names, and constructed mismatches (offset 1/2/7, base
500, sin/cos swapped, bf16 angles, transposed, prefix, layout, t2t, per-head
permutation) are each named. Every check prints the evidence it used."""
import json
import os
import sys

import numpy as np

from common import GOLDEN, Checks, require_golden, run, tmpdir


def diff(*args):
    rc, so, se = run("diff", *args, "--json")
    try:
        return rc, json.loads(so), se
    except ValueError:
        return rc, None, se


def keys(rep):
    return [f["key"] for f in rep["findings"]] if rep else []


def bf16(x):
    """Round float32 values to bfloat16 (nearest even), returned as float32."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return b.astype(np.uint32).view(np.float32)


def table(n=64, d=64, base=1e4, start=0, layout="i", freqs="v", form=None):
    """Reference sinusoid table in float64, stored float32."""
    K = d // 2
    k = np.arange(K)
    w = base ** (-2 * k / d) if freqs == "v" else base ** (-k / (K - 1))
    p = np.arange(start, start + n, dtype=np.float64)[:, None]
    th = bf16(bf16(p) * bf16(w)).astype(np.float64) if form == "bf16" else p * w
    out = np.zeros((n, d))
    if layout == "i":
        out[:, 0::2], out[:, 1::2] = np.sin(th), np.cos(th)
    else:
        out[:, :K], out[:, K:] = np.sin(th), np.cos(th)
    return out.astype(np.float32)


def main():
    require_golden()
    t = Checks()
    d = tmpdir()
    G = lambda name: os.path.join(GOLDEN, name + ".npy")
    X = G("input_formula_T37_H3_D64")
    save = lambda name, arr: (np.save(os.path.join(d, name), arr), os.path.join(d, name))[1]

    # ---- peer goldens that should agree (tolerances from golden/README.md) ----
    rc, _, _ = run("table", "--len", 50, "--dim", 64, "-o", os.path.join(d, "ours.npy"))
    for a, b, tol, why in [
        (G("tutorial_pe_d64_len50_float32"), os.path.join(d, "ours.npy"), 1e-5,
         "float32 angle formation in the tutorial, <= 50 rad * 2^-24 + 1 ulp"),
        (G("ggml_rope_neox_plain_ndims64_pos0"), G("hf_neox_apply_q_default_hd64_base10000_pos0"), 1e-5, "README: 3.0e-6"),
        (G("ggml_rope_normal_plain_ndims64_pos0"), G("hf_gptj_apply_q_rotarydim64_pos0"), 1e-5, "README: 2.7e-6"),
        (G("ggml_rope_neox_yarn_ndims64_pos0"), G("hf_neox_apply_q_yarn_f4_hd64_base10000_pos0"), 1e-5, "README: 3.4e-6"),
        (G("ggml_rope_normal_plain_ndims32_pos1000"), G("hf_gptj_apply_q_rotarydim32_pos1000"), 1e-4,
         "README: 4.6e-5 (float32 angles at p ~ 1000)"),
    ]:
        rc, rep, se = diff(a, b, "--tol", tol)
        t.check(rc == 0 and rep and keys(rep) == ["agree"],
                f"agree: {os.path.basename(a)} vs {os.path.basename(b)}: max {rep and rep['max_abs']:.3g} <= {tol} ({why})")
    run("table", "--len", 50, "--dim", 64, "--freqs", "t2t", "--layout", "half", "-o", os.path.join(d, "t2t.npy"))
    rc, rep, _ = diff(G("fairseq_sinusoidal_get_embedding_n50_d64_padNone"), os.path.join(d, "t2t.npy"), "--tol", 1e-5)
    t.check(rc == 0 and keys(rep) == ["agree"] and "tensor2tensor / fairseq" in rep["preset_a"],
            f"fairseq padNone == posenc t2t/half table (max {rep['max_abs']:.3g}); preset: {rep['preset_a'][:60]}")

    # ---- peer goldens that should not agree ----
    f = np.load(G("fairseq_sinusoidal_forward_d64_pad1_tokens2x6"))
    fwd = save("fairseq_fwd0.npy", f[0, :4])  # tokens 5,6,7,8: positions 2..5
    rc, rep, _ = diff(G("tutorial_pe_d64_len50_float32"), fwd)
    off = [x["value"] for x in rep["findings"] if x["key"] == "offset"]
    t.check(rc == 0 and {"layout", "freq_convention", "offset"} <= set(keys(rep)) and off == [2] and rep["explained"]
            and "fairseq convention with padding_idx=1" in rep["preset_b"],
            f"tutorial vs fairseq forward: {keys(rep)}, offset {off}; B: {rep['preset_b'][:50]}")
    rc, rep, _ = diff(G("fairseq_sinusoidal_get_embedding_n50_d64_pad1"), G("fairseq_sinusoidal_get_embedding_n50_d64_padNone"))
    pad = [x for x in rep["findings"] if x["key"] == "padding_rows"]
    t.check(rc == 0 and keys(rep) == ["padding_rows"] and pad[0]["value"] == 1 and "padding_idx=1" in pad[0]["text"],
            f"fairseq pad1 vs padNone: {keys(rep)}: {pad and pad[0]['text'][:90]}")
    for a, b, want in [
        ("hf_neox_apply_q_default_hd64_base10000_pos0", "hf_gptj_apply_q_rotarydim64_pos0", "layout"),
        ("ggml_rope_normal_plain_ndims64_pos1000", "ggml_rope_neox_plain_ndims64_pos1000", "layout"),
        ("ggml_rope_neox_plain_ndims64_pos0", "ggml_rope_neox_linear0.25_ndims64_pos0", "freq_scale"),
    ]:
        rc, rep, _ = diff(G(a), G(b), "--input", X)
        t.check(rc == 0 and want in keys(rep) and rep["explained"],
                f"{a} vs {b} (--input x): {keys(rep)}; fits {rep['fit_a'].get('layout')}/{rep['fit_b'].get('layout')}")
    rc, rep, _ = diff(G("hf_neox_apply_q_default_hd64_base10000_pos1000"), G("ggml_rope_neox_plain_ndims64_pos1000"),
                      "--input", X)
    fa, fb = rep["fit_a"], rep["fit_b"]
    t.check(rc == 0 and keys(rep) == ["angle_precision"] and fa["formation"] == "float32" and fb["formation"] == "float32"
            and "not a convention bug" in rep["findings"][0]["text"] and fa["start"] == 1000 and fb["base"] == 10000,
            f"HF vs ggml NEOX at 1000..: max diff {rep['max_abs']:.3g} = float32 angles (A err {fa['angle_error']:.2g}, "
            f"B err {fb['angle_error']:.2g} rad), start {fa['start']}, base {fb['base']}")
    # "angle generation" vs "apply": the same rotation with its output rounded to bf16
    y = np.load(G("hf_neox_apply_q_default_hd64_base10000_pos1000"))
    yb = (((y.view(np.uint32).astype(np.uint64) + 0x7FFF + ((y.view(np.uint32) >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    rc, rep, _ = diff(G("hf_neox_apply_q_default_hd64_base10000_pos1000"), save("bf16out.npy", yb), "--input", X)
    t.check(rc == 0 and "apply_precision" in keys(rep) and "angle_precision" not in keys(rep) and rep["explained"],
            f"bf16-stored RoPE output: {keys(rep)} (pair norms off by {rep['fit_b'].get('pair_norm_error', 0):.2g})")
    # per-head permutation (llama.cpp's Q/K row permutation turns half-split into interleaved)
    y = np.load(G("hf_gptj_apply_q_rotarydim64_pos0"))
    perm = np.concatenate([np.arange(0, 64, 2), np.arange(1, 64, 2)])
    rc, rep, _ = diff(G("hf_gptj_apply_q_rotarydim64_pos0"), save("perm.npy", y[..., perm]))
    t.check(rc == 0 and keys(rep) == ["permutation"] and "interleaved -> half-split" in rep["findings"][0]["text"],
            f"GPT-J output vs per-head permuted: {rep['findings'][0]['text'][:100]}")

    flat, flatp = y.reshape(37, 192), y[..., perm].reshape(37, 192)
    rc, rep, _ = diff(save("flat.npy", flat), save("flatp.npy", flatp), "--heads", 3)
    t.check(rc == 0 and keys(rep) == ["permutation"] and rep["findings"][0]["value"] == 3,
            f"[T, H*D] with --heads 3: {rep['findings'][0]['text'][:90]}")
    rc, rep, _ = diff(save("flat.npy", flat), save("flatp.npy", flatp))
    t.check(rc == 0 and keys(rep) == ["permutation"] and rep["findings"][0]["value"] == 1
            and "general channel permutation" in rep["findings"][0]["text"],
            f"same without --heads: a general permutation, not named as the Q/K conversion ({rep['findings'][0]['text'][-40:]})")
    for cmd, flags in (("diff", ["--tol", "--input", "--heads", "--json", "--fail-on-diff"]),
                       ("analyze", ["--tensor", "--cos", "--sin", "--len", "--json"]),
                       ("precision", ["--dtype", "--max-pos", "--base", "--json"]), ("signal", ["--json"])):
        rc, so, _ = run(cmd, "--help")
        t.check(rc == 0 and all(f in so for f in flags), f"{cmd} --help documents {' '.join(flags)}")

    # ---- constructed mismatches ----
    A = save("A.npy", table())
    cases = [("offset by 1", table(start=1), "offset", 1), ("offset by 2", table(start=2), "offset", 2),
             ("offset by 7", table(start=7), "offset", 7), ("base 500", table(base=500), "base", 500),
             ("bf16-rounded angles", table(form="bf16"), "angle_precision", None),
             ("transposed", table().T.copy(), "transposed", None), ("prefix", table()[:40], "prefix", 40),
             ("half layout", table(layout="h"), "layout", None), ("t2t frequencies", table(freqs="t"), "freq_convention", None)]
    sw = table()
    sw[:, 0::2], sw[:, 1::2] = table()[:, 1::2], table()[:, 0::2]
    cases.append(("sin/cos swapped", sw, "sin_cos_swapped", None))
    for name, arr, key, value in cases:
        rc, rep, se = diff(A, save("B.npy", arr))
        got = [x["value"] for x in rep["findings"] if x["key"] == key] if rep else []
        ok = rc == 0 and keys(rep) == [key] and rep["explained"] and (value is None or got == [value])
        t.check(ok, f"constructed {name}: findings {keys(rep)} value {got} (want only {key}{'' if value is None else '=' + str(value)})")
    rc, rep, _ = diff(A, save("B.npy", table(form="bf16")))
    t.check(rep["fit_b"]["formation"] == "bfloat16" and rep["fit_b"]["base"] == 10000,
            f"bf16 angles: B formation {rep['fit_b']['formation']}, base {rep['fit_b']['base']} "
            f"(max angle error {rep['fit_b']['angle_error']:.3g} rad)")

    # ---- statistics on a known difference ----
    a = table(n=8, d=8)
    b = a.copy()
    b[5, 3] = np.nextafter(b[5, 3], np.float32(2))  # one ulp
    b[6, 1] += 0.01
    rc, rep, _ = diff(save("a8.npy", a), save("b8.npy", b), "--tol", 1e-6)
    h = rep["ulp_histogram"]
    t.check(rc == 0 and rep["first_beyond_tol"] == [6, 1] and rep["divergence_onset"] == 6 and h["1"] == 1
            and h["0"] == 62 and abs(rep["max_abs"] - 0.01) < 1e-6 and rep["max_abs_at"] == [6, 1],
            f"stats: first beyond tol {rep['first_beyond_tol']}, onset {rep['divergence_onset']}, ulp hist {h}, "
            f"max {rep['max_abs']:.4g} at {rep['max_abs_at']}")
    cm = rep["channel_max_abs"]
    t.check(len(cm) == 8 and abs(cm[1] - 0.01) < 1e-6 and cm[0] == 0 and cm[3] > 0 and len(rep["bands"]) == 1
            and rep["bands"][0]["end"] == 8 and abs(rep["bands"][0]["max_abs"] - 0.01) < 1e-6,
            f"per-channel max |A-B| {[f'{v:.2g}' for v in cm]}, bands {rep['bands']}")
    big = table(n=3000, d=8)
    big2 = big.copy()
    big2[2500, 0] += 1e-3
    rc, rep, _ = diff(save("big.npy", big), save("big2.npy", big2))
    t.check([b["end"] for b in rep["bands"]] == [256, 2048, 3000] and rep["bands"][1]["max_abs"] == 0
            and abs(rep["bands"][2]["max_abs"] - 1e-3) < 1e-6 and rep["divergence_onset"] == 2500,
            f"position bands {[(b['end'], round(b['max_abs'], 6)) for b in rep['bands']]}, onset {rep['divergence_onset']}")
    rc, so, _ = run("diff", os.path.join(d, "a8.npy"), os.path.join(d, "b8.npy"), "--fail-on-diff")
    t.check(rc == 3 and "DIAGNOSIS" in so and "divergence onset: position 6" in so, f"--fail-on-diff exits 3 ({rc}); text report")

    # ---- bad input ----
    rc, _, se = run("diff", A, save("C.npy", np.zeros((30, 32), np.float32)))
    t.check(rc == 2 and "[64 x 64]" in se and "[30 x 32]" in se, f"shape mismatch names both shapes: {se.strip()[:120]}")
    nan = table()
    nan[3, 5] = np.nan
    rc, rep, _ = diff(A, save("nan.npy", nan))
    t.check(rc == 0 and rep["nonfinite_b"] == 1 and rep["ulp_histogram"]["non-finite"] == 1,
            f"NaN in B: reported (nonfinite_b {rep['nonfinite_b']}), no crash")
    rc, _, se = run("diff", A, save("empty.npy", np.zeros((0, 64), np.float32)))
    t.check(rc == 1 and "empty" in se, f"empty table: exit {rc}: {se.strip()[:90]}")
    with open(os.path.join(d, "bad.npy"), "wb") as fh:
        fh.write(b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'")
    rc, _, se = run("diff", A, os.path.join(d, "bad.npy"))
    t.check(rc == 1 and "bad.npy" in se, f"malformed .npy: exit {rc}: {se.strip()[:90]}")
    rc, _, se = run("diff", A)
    t.check(rc == 2, f"one file: usage error ({se.strip()[:60]})")
    t.finish()


if __name__ == "__main__":
    main()
