"""`posenc rope freqs|apply|explain`: every flag, against the peer goldens
where one exists (torch-compat must match HF bit for bit; precise within the
README tolerances: 1e-5 near position 0, 2e-4 near 1000), and every bad-input
case of issue 3 (message naming the value, non-zero exit, nothing written)."""
import json
import os
import shutil
import struct

import numpy as np

from common import GOLDEN, Checks, require_golden, run, tmpdir


def gguf(kvs, version=3):
    """A GGUF header with the given (key, type, value) triples, no tensors."""
    out = b"GGUF" + struct.pack("<IQQ", version, 0, len(kvs))
    for k, t, v in kvs:
        out += struct.pack("<Q", len(k)) + k.encode() + struct.pack("<I", t)
        if t == 8:
            out += struct.pack("<Q", len(v)) + v.encode()
        elif t == 4:
            out += struct.pack("<I", v)
        elif t == 6:
            out += struct.pack("<f", v)
        else:
            out += v
    return out


def main():
    t = Checks()
    d = tmpdir()
    out = os.path.join(d, "out.npy")
    have_golden = require_golden()

    rc, so, _ = run("rope", "--help")
    t.check(rc == 0 and all(s in so for s in ("freqs", "apply", "explain")), "rope --help lists freqs/apply/explain")
    rc, so, _ = run("rope", "freqs", "--help")
    flags = ["--dim", "--config", "--base", "--scaling", "--factor", "--original-max", "--max-pos", "--seq-len",
             "--beta-fast", "--beta-slow", "--mscale", "--mscale-all-dim", "--attention-factor", "--no-truncate",
             "--low-freq-factor", "--high-freq-factor", "--short-factors", "--long-factors", "--longrope",
             "--rotary-dim", "--partial", "--torch-compat", "--precise", "--json"]
    t.check(rc == 0 and all(f in so for f in flags), "rope freqs --help documents every flag")
    rc, so, _ = run("rope", "apply", "--help")
    t.check(rc == 0 and all(f in so for f in ["--in", "--start", "--positions", "--layout", "--inverse", "--shift", "--bf16"]),
            "rope apply --help documents every flag")
    rc, _, se = run("rope")
    t.check(rc == 2 and "usage" in se, "rope without a subcommand: exit 2")
    rc, _, se = run("rope", "rotate")
    t.check(rc == 2 and "unknown subcommand 'rotate'" in se, "rope rotate: unknown subcommand, exit 2")

    def freqs(*args):
        rc, so, se = run("rope", "freqs", *args, "--json")
        if rc != 0:
            return None, se
        return json.loads(so), se

    j, _ = freqs("--dim", 8)
    t.check(j is not None and j["inv_freq"] == [1, 0.1, 0.01, 0.001] and j["attention_factor"] == 1,
            f"freqs --dim 8 --json: {j and j['inv_freq']}")

    # every HF inv_freq golden through the CLI flags, torch-compat bit for bit
    if have_golden:
        man = json.load(open(os.path.join(GOLDEN, "manifest.json")))
        worst = 0.0
        n = 0
        for e in man["entries"]:
            if not e["file"].startswith("hf_rope_invfreq_"):
                continue
            cfg, p = e["params"]["config"], e["params"]
            rs = cfg.get("rope_scaling") or {}
            args = ["--dim", cfg["head_dim"], "--base", cfg["rope_theta"], "--torch-compat"]
            if cfg.get("partial_rotary_factor"):
                args += ["--partial", cfg["partial_rotary_factor"]]
            typ = p["rope_type"]
            maxp = cfg["max_position_embeddings"]
            if typ != "default":
                args += ["--scaling", typ]
            if typ in ("linear", "dynamic", "llama3") or (typ == "yarn"):
                args += ["--factor", rs["factor"]]
            if typ == "dynamic":
                args += ["--max-pos", maxp]
            if typ == "yarn":
                args += ["--original-max", maxp, "--beta-fast", rs.get("beta_fast", 32), "--beta-slow", rs.get("beta_slow", 1)]
                if "attention_factor" in rs:
                    args += ["--attention-factor", rs["attention_factor"]]
            if typ == "llama3":
                args += ["--original-max", rs["original_max_position_embeddings"], "--low-freq-factor", rs["low_freq_factor"],
                         "--high-freq-factor", rs["high_freq_factor"]]
            if typ == "longrope":
                sf, lf = os.path.join(d, "s.npy"), os.path.join(d, "l.npy")
                np.save(sf, np.array(rs["short_factor"]))
                np.save(lf, np.array(rs["long_factor"]))
                orig = cfg.get("original_max_position_embeddings")
                factor = maxp / orig if orig else rs["factor"]
                args += ["--short-factors", sf, "--long-factors", lf, "--original-max", orig or maxp, "--factor", factor]
            if p.get("seq_len"):
                args += ["--seq-len", p["seq_len"]]
            j, se = freqs(*args)
            want = np.load(os.path.join(GOLDEN, e["file"]))
            ok = j is not None and np.array_equal(np.array(j["inv_freq"], dtype=np.float32), want) and \
                abs(j["attention_factor"] - e["attention_factor"]) <= 1e-15 * e["attention_factor"]
            if j is not None:
                worst = max(worst, float(np.max(np.abs(np.array(j["inv_freq"]) - want))))
            n += ok
            if not ok:
                t.check(False, f"{e['file']}: {se.strip()}")
        t.check(n == 60, f"all 60 HF inv_freq goldens via CLI flags: {n} bit-identical (--torch-compat), attention factors match")

    # -o writes float64 [R/2], --rotary-dim, --precise
    rc, _, _ = run("rope", "freqs", "--dim", 64, "--rotary-dim", 32, "--precise", "-o", out)
    a = np.load(out)
    t.check(rc == 0 and a.dtype == np.float64 and a.shape == (16,) and abs(a[1] - 10000 ** (-2 / 32)) < 1e-17,
            "freqs -o inv.npy: float64 [16] for --rotary-dim 32")
    rc, so, _ = run("rope", "freqs", "--dim", 8)
    t.check(rc == 0 and "wavelength" in so and len(so.splitlines()) == 6, "freqs without -o/--json prints a table")
    j, _ = freqs("--dim", 128, "--scaling", "yarn", "--factor", 4, "--original-max", 4096, "--no-truncate")
    t.check(j is not None and abs(j["inv_freq"][21] - 4.861255519e-02) < 1e-11, "--no-truncate: yarn inv_21 = 4.861255519e-02")
    j, _ = freqs("--dim", 64, "--scaling", "yarn", "--factor", 40, "--original-max", 4096, "--mscale", 0.707,
                 "--mscale-all-dim", 0.707)
    t.check(j is not None and j["attention_factor"] == 1.0, "--mscale = --mscale-all-dim: attention factor exactly 1")
    j, _ = freqs("--dim", 64, "--scaling", "yarn", "--factor", 40, "--original-max", 4096, "--mscale", 1, "--mscale-all-dim", 0.5)
    want = (0.1 * np.log(40) + 1) / (0.05 * np.log(40) + 1)
    t.check(j is not None and abs(j["attention_factor"] - want) < 1e-15, f"--mscale 1 --mscale-all-dim 0.5: {want:.9f}")
    j, _ = freqs("--dim", 8, "--scaling", "ntk", "--factor", 2)
    t.check(j is not None and abs(j["inv_freq"][3] - 0.0005) < 1e-15, "--scaling ntk: last pair divided by the factor")
    s8, l8 = os.path.join(d, "s8.npy"), os.path.join(d, "l8.npy")
    np.save(s8, np.array([1, 1.1, 1.2, 1.3]))
    np.save(l8, np.array([1, 2, 3, 4], dtype=np.float32))
    for sel, want3 in (("short", 0.001 / 1.3), ("long", 0.00025)):
        j, _ = freqs("--dim", 8, "--scaling", "longrope", "--factor", 32, "--original-max", 4096, "--short-factors", s8,
                     "--long-factors", l8, "--longrope", sel)
        t.check(j is not None and abs(j["inv_freq"][3] - want3) < 1e-15, f"--longrope {sel}: inv_3 = {want3:.9g}")
    j, _ = freqs("--dim", 8, "--scaling", "longrope", "--factor", 32, "--original-max", 4096, "--short-factors", s8,
                 "--long-factors", l8, "--seq-len", 5000)
    t.check(j is not None and abs(j["inv_freq"][3] - 0.00025) < 1e-15, "--longrope by-seq-len: seq 5000 > 4096 takes long")

    # --config: config.json and GGUF
    cfg = os.path.join(d, "config.json")
    json.dump({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
               "rope_theta": 500000.0, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                       "original_max_position_embeddings": 8192, "rope_type": "llama3"}},
              open(cfg, "w"))
    j, _ = freqs("--config", cfg)
    t.check(j is not None and j["head_dim"] == 128 and j["scaling"] == "llama3" and abs(j["inv_freq"][29] - 2.166570764e-03) < 1e-11,
            "freqs --config Llama 3.1 config.json: llama3, inv_29 = 2.166570764e-03")
    j, _ = freqs("--config", cfg, "--factor", 16)
    t.check(j is not None and abs(j["inv_freq"][63] - 3.068925989e-07 / 2) < 1e-15, "flags override the config (--factor 16)")
    gg = os.path.join(d, "model.gguf")
    open(gg, "wb").write(gguf([("general.architecture", 8, "qwen2"), ("qwen2.rope.freq_base", 6, 1e6),
                               ("qwen2.attention.key_length", 4, 128), ("qwen2.rope.scaling.type", 8, "yarn"),
                               ("qwen2.rope.scaling.factor", 6, 4.0), ("qwen2.rope.scaling.original_context_length", 4, 32768),
                               ("qwen2.context_length", 4, 131072)]))
    j, _ = freqs("--config", gg)
    t.check(j is not None and j["scaling"] == "yarn" and abs(j["attention_factor"] - 1.138629436111989) < 1e-15,
            "freqs --config model.gguf: yarn f4, attention 1.1386294")

    # one RoPE flag list: rope freqs, rope apply, report and plot print the same help line for each
    shared = ["--scaling", "--factor", "--original-max", "--beta-fast", "--beta-slow", "--mscale", "--mscale-all-dim",
              "--attention-factor", "--no-truncate", "--low-freq-factor", "--high-freq-factor", "--short-factors",
              "--long-factors", "--longrope", "--rotary-dim", "--partial", "--torch-compat", "--precise"]
    helps = {}
    for cmd in (("rope", "freqs"), ("rope", "apply"), ("report",), ("plot",)):
        rc, so, _ = run(*cmd, "--help")
        helps[" ".join(cmd)] = {f: next((ln.strip() for ln in so.splitlines() if ln.strip().startswith(f + " ")
                                         or ln.strip() == f), None) for f in shared}
    first = helps["rope freqs"]
    t.check(all(first[f] for f in shared) and all(h == first for h in helps.values()),
            f"{len(shared)} RoPE flags with identical help in rope freqs, rope apply, report and plot")
    xr = os.path.join(d, "r.svg")
    rc, _, se = run("plot", "heatmap", "--kind", "rope", "--len", 16, "--dim", 16, "--scaling", "yarn", "--factor", 4,
                    "--beta-fast", 16, "--torch-compat", "-o", xr)
    t.check(rc == 0 and os.path.exists(xr), f"plot --kind rope takes the shared flags (--beta-fast, --torch-compat) {se.strip()}")
    rc, _, se = run("plot", "rope-bands", "--beta-fast", 16, "-o", xr + "2.svg")
    t.check(rc == 2 and "--beta-fast does not apply to the rope-bands chart" in se and not os.path.exists(xr + "2.svg"),
            "plot rope-bands refuses a RoPE flag it would ignore")
    rc, _, se = run("report", "--kind", "learned", "--mscale", 2, "-o", os.path.join(d, "r.html"))
    t.check(rc == 2 and "--mscale applies to --kind rope" in se, "report --kind learned --mscale: refused, not ignored")

    # the flags go through the same derivation as --config (posenc_rope_resolve)
    s48, l48 = os.path.join(d, "s48.npy"), os.path.join(d, "l48.npy")
    np.save(s48, np.ones(48))
    np.save(l48, np.linspace(1, 40, 48))
    j, se = freqs("--dim", 96, "--scaling", "longrope", "--original-max", 4096, "--max-pos", 131072,
                  "--short-factors", s48, "--long-factors", l48)
    t.check(j is not None and j["factor"] == 32 and abs(j["attention_factor"] - 1.1902380714238083) < 1e-15,
            f"flags longrope --original-max 4096 --max-pos 131072: factor {j and j['factor']}, attention "
            f"{j and j['attention_factor']} (the config path and HF: 32, 1.1902380714) {se.strip()}")
    j, se = freqs("--dim", 128, "--scaling", "yarn", "--factor", 4, "--max-pos", 32768)
    t.check(j is not None and j["attention_factor"] == freqs("--dim", 128, "--scaling", "yarn", "--factor", 4,
                                                             "--original-max", 32768)[0]["attention_factor"]
            and "max-pos 32768 in its place" in se,
            "flags yarn --factor 4 --max-pos 32768 without --original-max: L0 = 32768, as HF (and a note)")
    models = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "models")
    rc, so, _ = run("rope", "explain", "--config", os.path.join(models, "deepseek_v3.json"))
    t.check(rc == 0 and "1/sqrt(192) x 1.873854207 = 0.1352337789" in so and "the LAST 64 channels" in so and
            "channels 128..191" in so, "explain DeepSeek-V3: softmax over qk_head_dim 192, rotated = the last 64 channels")
    # Kimi K2's published config.json (remote code, architectures DeepseekV3ForCausalLM): DeepSeek-V3's MLA RoPE
    kimi = os.path.join(models, "kimi_k2_instruct.json")
    rc, so, se = run("rope", "explain", "--config", kimi)
    t.check(rc == 0 and "read with posenc's 'kimi_k2' family rules" in so and "the LAST 64 channels" in so and
            "channels 128..191" in so and "base (rope_theta): 50000" in so and "yarn (written as 'yarn'), factor 32" in so
            and "trained 4096, max position embeddings 131072" in so and "1/sqrt(192) x 1.813260434 = " in so and
            "layers 0-60: RoPE base 50000, interleaved, 64 of 192 channels, yarn x32 [61 layers]" in so,
            f"explain Kimi K2: 61 layers, interleaved, the last 64 of 192 channels, base 50000, yarn x32 {se.strip()[:160]}")
    rc, so, se = run("rope", "explain", "--config", kimi, "--json")
    j = json.loads(so) if rc == 0 else {"layers": []}
    t.check(len(j["layers"]) == 61 and all(
        (x["scheme"], x["layout"], x["head_dim"], x["rotary_dim"], x["rotary_offset"], x["base"], x["scaling"],
         x["factor"], x["original_max_position"]) == ("rope", "interleaved", 192, 64, 128, 50000, "yarn", 32, 4096)
        for x in j["layers"]) and not j.get("assumed"),
        f"explain --json Kimi K2: 61 rope layers, interleaved, rotary 64 at offset 128 of 192, yarn x32 from 4096 {se.strip()[:160]}")
    rc, so, _ = run("rope", "explain", "--config", os.path.join(models, "no_model_type_llama.json"))
    t.check(rc == 0 and "LlamaForCausalLM -- read with posenc's 'llama' family rules" in so,
            "explain without model_type: the family comes from architectures[0]")
    rc, so, _ = run("rope", "explain", "--config", os.path.join(models, "gemma3_4b_it.json"))
    t.check(rc == 0 and "rope_theta=1000000" in so and "rope_local_base_freq=10000" in so and
            "full_attention, 5 layers" in so and "sliding_attention, 29 layers, window 1024: base 10000, scaling none" in so,
            "explain Gemma-3-4b-it: class defaults named, 5 global + 29 local layers with their bases")
    rc, so, se = run("rope", "freqs", "--config", os.path.join(models, "gemma3_4b_it.json"), "--layer-type",
                     "sliding_attention", "--json")
    j = json.loads(so) if rc == 0 else None
    t.check(j is not None and j["base"] == 10000 and j["scaling"] == "none", "freqs --layer-type sliding_attention: base 1e4")
    dup = os.path.join(d, "dup.json")
    open(dup, "w").write('{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
                         '"rope_theta": 10000, "rope_theta": 500000}')
    j, se = freqs("--config", dup)
    t.check(j is not None and j["base"] == 500000 and "'rope_theta' more than once" in se,
            "config.json with rope_theta twice: the last (500000) is used, with a warning naming the key")
    contra = os.path.join(d, "contra.json")
    json.dump({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000,
               "rope_parameters": {"rope_type": "default", "rope_theta": 500000}}, open(contra, "w"))
    for sub, extra in (("freqs", []), ("apply", ["--in", os.path.join(d, "x8.npy")])):
        np.save(os.path.join(d, "x8.npy"), np.zeros((2, 128), dtype=np.float32))
        if os.path.exists(out):
            os.remove(out)
        rc, _, se = run("rope", sub, "--config", contra, *extra, "-o", out)
        t.check(rc == 1 and "'rope_theta' 10000 contradicts" in se and not os.path.exists(out),
                f"rope {sub} with contradictory rope_theta: exit {rc}, names the key, writes nothing")

    # apply: HF goldens bit for bit in torch-compat
    x_in = os.path.join(d, "x.npy")
    if have_golden:
        x = np.load(os.path.join(GOLDEN, "input_formula_T37_H3_D64.npy"))
        np.save(x_in, x)
        cases = [("hf_neox_apply_q_default_hd64_base10000_pos1000.npy", ["--layout", "neox", "--start", 1000]),
                 ("hf_neox_apply_q_yarn_f4_hd64_base10000_pos0.npy", ["--scaling", "yarn", "--factor", 4, "--original-max", 4096]),
                 ("hf_neox_apply_q_llama3_f8_orig8192_hd64_base500000_pos1000.npy",
                  ["--start", 1000, "--base", 500000, "--scaling", "llama3", "--factor", 8, "--original-max", 8192]),
                 ("hf_gptj_apply_q_rotarydim32_pos1000.npy", ["--layout", "gptj", "--rotary-dim", 32, "--start", 1000])]
        for f, args in cases:
            want = np.load(os.path.join(GOLDEN, f))
            rc, _, se = run("rope", "apply", "--in", x_in, *args, "--torch-compat", "-o", out)
            got = np.load(out) if rc == 0 else None
            t.check(rc == 0 and got.dtype == np.float32 and np.array_equal(got, want), f"apply --torch-compat == {f} (bit for bit) {se.strip()}")
            rc, _, _ = run("rope", "apply", "--in", x_in, *args, "-o", out)
            diff = float(np.max(np.abs(np.load(out) - want)))
            tol = 2e-4 if "1000" in " ".join(map(str, args)) else 1e-5
            t.check(rc == 0 and diff <= tol, f"apply (precise) vs {f}: max diff {diff:.3g}; tol {tol}")
        # pass-through bits, inverse round trip, rank-2 input, positions file, shift
        rc, _, _ = run("rope", "apply", "--in", x_in, "--rotary-dim", 16, "--layout", "interleaved", "-o", out)
        y = np.load(out)
        t.check(rc == 0 and np.array_equal(y[..., 16:].view(np.uint32), x[..., 16:].view(np.uint32)) and not np.array_equal(y, x),
                "--rotary-dim 16: channels 16..63 bit-identical")
        back = os.path.join(d, "back.npy")
        rc, _, _ = run("rope", "apply", "--in", out, "--rotary-dim", 16, "--layout", "interleaved", "--inverse", "-o", back)
        t.check(rc == 0 and np.max(np.abs(np.load(back) - x)) < 4e-7, f"--inverse undoes apply: max diff {np.max(np.abs(np.load(back) - x)):.2g}")
        x2 = os.path.join(d, "x2.npy")
        np.save(x2, x[:, 0, :])
        rc, _, _ = run("rope", "apply", "--in", x2, "--start", 1000, "--torch-compat", "-o", out)
        t.check(rc == 0 and np.array_equal(np.load(out), np.load(os.path.join(GOLDEN, "hf_neox_apply_q_default_hd64_base10000_pos1000.npy"))[:, 0, :]),
                "[T,D] input (rank 2) == head 0 of the golden")
        pos = os.path.join(d, "pos.npy")
        np.save(pos, np.arange(1000, 1037, dtype=np.int64))
        rc, _, _ = run("rope", "apply", "--in", x_in, "--positions", pos, "--torch-compat", "-o", out)
        t.check(rc == 0 and np.array_equal(np.load(out), np.load(os.path.join(GOLDEN, "hf_neox_apply_q_default_hd64_base10000_pos1000.npy"))),
                "--positions int64 file == --start 1000")
        rc, _, _ = run("rope", "apply", "--in", x_in, "-o", back)
        np.save(pos, np.full(37, 1000, dtype=np.int64))
        rc2, _, _ = run("rope", "apply", "--in", back, "--positions", pos, "--shift", "-o", out)
        rc3, _, _ = run("rope", "apply", "--in", x_in, "--start", 1000, "-o", back)
        diff = float(np.max(np.abs(np.load(out) - np.load(back))))
        t.check(rc == rc2 == rc3 == 0 and diff < 6e-7, f"--shift 1000 after --start 0 == --start 1000: max diff {diff:.2g}")
        # f16 and bf16 inputs
        x16 = os.path.join(d, "x16.npy")
        np.save(x16, x.astype(np.float16))
        rc, _, _ = run("rope", "apply", "--in", x16, "--rotary-dim", 32, "-o", out)
        y = np.load(out)
        t.check(rc == 0 and y.dtype == np.float16 and np.array_equal(y[..., 32:], x.astype(np.float16)[..., 32:]),
                "float16 input -> float16 output, pass-through kept")
        bits = (x.view(np.uint32) + 0x8000 >> 16).astype(np.uint16)
        np.save(x16, bits)
        rc, _, _ = run("rope", "apply", "--in", x16, "--bf16", "-o", out)
        yb = (np.load(out).astype(np.uint32) << 16).view(np.float32)
        ref = np.load(os.path.join(GOLDEN, "hf_neox_apply_q_default_hd64_base10000_pos0.npy"))
        t.check(rc == 0 and np.max(np.abs(yb - ref)) < 2e-2, f"--bf16 bits in/out: max diff vs f32 golden {np.max(np.abs(yb - ref)):.2g} (< bf16 step 2e-2)")

    # explain
    rc, so, _ = run("rope", "explain", "--config", cfg)
    t.check(rc == 0 and "pairs   0-28  kept" in so and "pairs  29-34  blended" in so and "interpolated" in so
            and "factor 8 x original context 8192" in so, "explain Llama 3.1: bands 0-28 kept / 29-34 blended / interpolated, factor warning")
    rc, so, _ = run("rope", "explain", "--config", gg, "--pairs")
    t.check(rc == 0 and "attention factor): 1.138629436" in so and "half split" in so and sum(1 for l in so.split("pair  inv_freq")[-1].splitlines() if len(l.split()) == 4 and l.split()[0].isdigit()) == 64,
            "explain GGUF yarn with --pairs: magnitude, layout, 64 pair rows")
    nt = os.path.join(d, "notheta.json")
    json.dump({"hidden_size": 520, "num_attention_heads": 8, "rotary_dim": 64, "max_position_embeddings": 4096,
               "rope_scaling": {"type": "yarn", "factor": 4}}, open(nt, "w"))
    rc, so, _ = run("rope", "explain", "--config", nt)
    t.check(rc == 0 and "rope_theta is missing" in so and "without an original" in so and "odd number of pass-through channels (1)" in so,
            "explain warns: missing theta, scaling without original context, odd pass-through")

    # bad input: exit code, message naming the value, nothing written
    bad_json = os.path.join(d, "bad.json")
    open(bad_json, "w").write('{"hidden_size": 512, "num_attention_heads": 8, "rope_theta": 1e4')
    hostile = os.path.join(d, "hostile.gguf")
    open(hostile, "wb").write(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 40) + bytes(64))
    s31 = os.path.join(d, "s31.npy")
    np.save(s31, np.ones(31))
    s2d = os.path.join(d, "s2d.npy")
    np.save(s2d, np.ones((4, 8)))
    bad = [
        (["--dim", 64, "--scaling", "ntk-by-parts"], 2, "unknown --scaling 'ntk-by-parts'"),
        (["--dim", 64, "--scaling", "linear", "--factor", 0], 2, "factor must be finite and > 0 for scaling=linear, got 0"),
        (["--dim", 64, "--scaling", "linear", "--factor", -2], 2, "got -2"),
        (["--dim", 64, "--scaling", "linear", "--factor", "nan"], 2, "--factor must be a finite number, got 'nan'"),
        (["--dim", 64, "--scaling", "linear", "--factor", "inf"], 2, "got 'inf'"),
        (["--dim", 64, "--scaling", "yarn", "--factor", 0.5, "--original-max", 4096], 2, "factor must be >= 1 for scaling=yarn"),
        (["--dim", 64, "--scaling", "llama3", "--factor", 0.5, "--original-max", 8192], 2, "got 0.5"),
        (["--dim", 64, "--scaling", "yarn", "--factor", 4, "--original-max", 4096, "--beta-fast", 1, "--beta-slow", 2], 2,
         "beta_fast must be >= beta_slow, got beta_fast=1 beta_slow=2"),
        (["--dim", 64, "--scaling", "yarn", "--factor", 4], 2, "needs original_max_position"),
        (["--dim", 64, "--scaling", "llama3", "--factor", 8], 2, "needs original_max_position"),
        (["--dim", 64, "--scaling", "longrope", "--factor", 8], 2, "needs original_max_position"),
        (["--dim", 64, "--scaling", "dynamic", "--factor", 2], 2, "needs max_position"),
        (["--dim", 64, "--scaling", "longrope", "--factor", 8, "--original-max", 4096, "--short-factors", s31, "--long-factors", s31],
         2, "must have rotary_dim/2 = 32 entries, got 31"),
        (["--dim", 64, "--scaling", "longrope", "--factor", 8, "--original-max", 4096, "--short-factors", s31], 2, "give both"),
        (["--dim", 64, "--scaling", "longrope", "--original-max", 4096, "--short-factors", s2d, "--long-factors", s2d], 2, "rank 2"),
        (["--dim", 64, "--rotary-dim", 33], 2, "rotary_dim must be even and >= 2 (channels rotate in pairs), got 33"),
        (["--dim", 64, "--rotary-dim", 80], 2, "rotary_dim must be <= head_dim (64), got 80"),
        (["--dim", 64, "--partial", 0.3], 2, "got 19"),
        (["--dim", 64, "--partial", 1.5], 2, "partial_rotary_factor must be in (0, 1], got 1.5"),
        (["--dim", 0], 2, "--dim must be > 0, got 0"),
        (["--base", 1e4], 2, "--dim is required"),
        (["--dim", 64, "--base", 1], 2, "base (rope_theta) must be finite and > 1, got 1"),
        (["--dim", 64, "--factor", 4], 2, "--factor 4 has no effect with --scaling none"),
        (["--dim", 64, "--longrope", "medium"], 2, "unknown --longrope 'medium'"),
        (["--dim", 64, "--precise", "--torch-compat"], 2, "not both"),
        (["--config", bad_json], 1, "not valid JSON"),
        (["--config", hostile], 1, "GGUF key of 1099511627776 bytes"),
        (["--config", os.path.join(d, "missing.json")], 1, "cannot open"),
    ]
    for args, want_rc, msg in bad:
        if os.path.exists(out):
            os.remove(out)
        rc, so, se = run("rope", "freqs", *args, "-o", out)
        t.check(rc == want_rc and msg in se and not os.path.exists(out),
                f"freqs {' '.join(map(str, args))[-60:]}: exit {rc}, '{se.strip().splitlines()[0] if se.strip() else ''}'")
    if have_golden:
        x = np.load(x_in)
        paths = {}
        for name, arr in (("r1", x[0, 0]), ("r4", x[None]), ("f64", x.astype(np.float64)), ("i32", x.astype(np.int32))):
            paths[name] = os.path.join(d, name + ".npy")
            np.save(paths[name], arr)
        posf = os.path.join(d, "posf.npy")
        np.save(posf, np.arange(37, dtype=np.float64))
        pos5 = os.path.join(d, "pos5.npy")
        np.save(pos5, np.arange(5, dtype=np.int64))
        trunc = os.path.join(d, "trunc.npy")
        open(trunc, "wb").write(open(x_in, "rb").read()[:-100])
        bad_apply = [
            (["--in", paths["r1"]], 2, "must have shape [T,H,D] or [T,D], got rank 1"),
            (["--in", paths["r4"]], 2, "got rank 4"),
            (["--in", paths["f64"]], 2, "has dtype f64"),
            (["--in", paths["i32"]], 2, "has dtype i32"),
            (["--in", x_in, "--bf16"], 2, "has dtype f32"),
            (["--in", x_in, "--positions", pos5], 2, "has 5 entries but the input has 37 tokens"),
            (["--in", x_in, "--positions", posf], 2, "must be integers"),
            (["--in", x_in, "--start", 3, "--positions", pos5], 2, "not both"),
            (["--in", x_in, "--dim", 128], 2, "--dim 128 does not match the input's last axis (64)"),
            (["--in", x_in, "--config", cfg], 2, "config's head_dim is 128"),
            (["--in", x_in, "--layout", "diagonal"], 2, "unknown --layout 'diagonal'"),
            (["--in", x_in, "--inverse", "--shift"], 2, "not both"),
            (["--in", x_in, "--rotary-dim", 66], 2, "got 66"),
            (["--in", os.path.join(d, "nope.npy")], 1, "cannot open"),
            (["--in", trunc], 1, "truncated"),
            ([], 2, "--in X.npy is required"),
        ]
        for args, want_rc, msg in bad_apply:
            if os.path.exists(out):
                os.remove(out)
            rc, so, se = run("rope", "apply", *args, "-o", out)
            t.check(rc == want_rc and msg in se and not os.path.exists(out),
                    f"apply {' '.join(map(str, args))[-50:]}: exit {rc}, '{se.strip().splitlines()[0] if se.strip() else ''}'")
        rc, _, se = run("rope", "apply", "--in", x_in)
        t.check(rc == 2 and "-o Y.npy is required" in se, "apply without -o: exit 2")
    rc, _, se = run("rope", "explain")
    t.check(rc == 2 and "--config FILE is required" in se, "explain without --config: exit 2")
    rc, _, se = run("rope", "explain", "--config", hostile)
    t.check(rc == 1 and "GGUF" in se, "explain on a hostile GGUF: exit 1")
    t.check(not [f for f in os.listdir(d) if ".tmp." in f], "no temporary files left behind")
    shutil.rmtree(d, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
