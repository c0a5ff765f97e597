"""`posenc rope identify`: caches made by HF's rope formulas (written here in
torch 1.13 from transformers' modeling_rope_utils, as
tests/fixtures/models/reference.py does; transformers is not installed) and by
vLLM's cos_sin_cache construction, in the engines' layouts, for model configs
spanning every scaling; then planted deviations (dropped attention factor,
linear instead of llama3 bands, bf16 cache, positions from 1), each identified
and, with --config, named in words."""
import json
import math
import os
import struct
import sys

import numpy as np

from common import Checks, run, tmpdir, torch_math_library

try:
    import torch
except ImportError:  # Debian's python3-torch is part of the test environment
    print("SKIP: torch not importable")
    sys.exit(77)
torch_math_library(torch)  # torch-compat computes exp/sin/cos as this torch does (MKL VML on x86-64)

T = 4096


def inv_freq(kind, R, base, factor=1.0, L0=4096, lf=1.0, hf=4.0, bf=32, bs=1):
    """HF's ROPE_INIT_FUNCTIONS in float32 torch: (inv_freq, attention_factor)."""
    att = 1.0
    if kind == "ntk":  # dynamic NTK at its trained length is plain; the NTK base change:
        base = base * factor ** (R / (R - 2))
    inv = 1.0 / (base ** (torch.arange(0, R, 2, dtype=torch.int64).float() / R))
    if kind == "linear":
        inv = inv / factor
    if kind == "yarn":
        pos_freqs = base ** (torch.arange(0, R, 2).float() / R)
        extra, inter = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)

        def dim(n):
            return (R * math.log(L0 / (n * 2 * math.pi))) / (2 * math.log(base))

        low, high = max(math.floor(dim(bf)), 0), min(math.ceil(dim(bs)), R - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(R // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
        ext = 1 - ramp
        inv = inter * (1 - ext) + extra * ext
        att = 0.1 * math.log(factor) + 1.0
    if kind == "llama3":
        low_w, high_w = L0 / lf, L0 / hf
        wl = 2 * math.pi / inv
        il = torch.where(wl > low_w, inv / factor, inv)
        sm = (L0 / wl - lf) / (hf - lf)
        smoothed = (1 - sm) * il / factor + sm * il
        mid = ~(wl < high_w) * ~(wl > low_w)
        inv = torch.where(mid, smoothed, il)
    return inv, att


def hf_tables(inv, att, start=0, dtype=torch.float32):
    """LlamaRotaryEmbedding.forward: [T, R] cos and sin (duplicated halves)."""
    pos = torch.arange(start, start + T, dtype=torch.int64)[None, :]
    freqs = (inv[None, :, None].float() @ pos[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * att).to(dtype)[0], (emb.sin() * att).to(dtype)[0]


def vllm_cache(R, base):
    """vLLM RotaryEmbedding._compute_cos_sin_cache: cat(cos, sin) of einsum(t, inv_freq)."""
    inv = 1.0 / (base ** (torch.arange(0, R, 2, dtype=torch.float) / R))
    t = torch.arange(T, dtype=torch.float)
    freqs = torch.einsum("i,j -> ij", t, inv)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1)


def config(d, name, R, base, kind, factor=1.0, L0=4096, extra=None):
    c = {"model_type": "llama", "hidden_size": R * 8, "num_attention_heads": 8,
         "max_position_embeddings": int(L0 * factor) if kind != "none" else 4096, "rope_theta": base}
    if kind != "none":
        rs = {"rope_type": kind, "factor": factor}
        if kind in ("yarn", "llama3"):
            rs["original_max_position_embeddings"] = L0
        if kind == "llama3":
            rs.update(low_freq_factor=1.0, high_freq_factor=4.0)
        c["rope_scaling"] = rs
    path = os.path.join(d, name + ".json")
    with open(path, "w") as f:
        json.dump(c, f)
    return path


def save(d, name, a):
    path = os.path.join(d, name + ".npy")
    np.save(path, a)
    return path


def identify(*args):
    rc, so, se = run("rope", "identify", *args, "--json")
    return rc, (json.loads(so) if rc == 0 else None), se


# (name, R, base, kind, factor, L0): real model settings
MODELS = [
    ("llama2_7b", 128, 10000.0, "none", 1.0, 4096),
    ("qwen2_7b", 128, 1000000.0, "none", 1.0, 4096),
    ("llama3_1_8b", 128, 500000.0, "llama3", 8.0, 8192),
    ("llama3_2_1b", 64, 500000.0, "llama3", 32.0, 8192),
    ("qwen2_5_yarn", 128, 1000000.0, "yarn", 4.0, 32768),
    ("yarn_mistral", 128, 10000.0, "yarn", 16.0, 8192),
    ("linear_longchat", 128, 10000.0, "linear", 8.0, 2048),
    ("phi2_partial", 32, 10000.0, "none", 1.0, 2048),
    ("codellama", 128, 1000000.0, "none", 1.0, 16384),
    ("ntk_2", 128, 10000.0, "ntk", 2.0, 4096),
]


def main():
    t = Checks()
    d = tmpdir()
    for name, R, base, kind, factor, L0 in MODELS:
        inv, att = inv_freq(kind, R, base, factor, L0)
        c, s = hf_tables(inv, att)
        want_kind = "none" if kind == "ntk" else kind
        want_base = base * factor ** (R / (R - 2)) if kind == "ntk" else base
        forms = {"hf cos+sin": (save(d, name + "_cos", c.numpy()), "--sin", save(d, name + "_sin", s.numpy())),
                 "hf cos only": (os.path.join(d, name + "_cos.npy"),),
                 "vllm layout": (save(d, name + "_cat", torch.cat((c[:, :R // 2], s[:, :R // 2]), -1).numpy()),),
                 "plain [T,R/2] cos+sin": (save(d, name + "_pc", c[:, :R // 2].numpy()), "--sin",
                                           save(d, name + "_ps", s[:, :R // 2].numpy()))}
        for form, args in forms.items():
            rc, j, se = identify(*args)
            ok = rc == 0 and j["scaling"] == want_kind and j["rotary_dim"] == R and j["offset"] == 0
            ok = ok and abs(j["base"] - want_base) <= (1e-6 if kind != "ntk" else 2e-3) * want_base
            ok = ok and (kind in ("none", "ntk") or j["factor"] == factor)
            ok = ok and (kind not in ("yarn", "llama3") or j["original_max_position"] == L0)
            exact = ok and j["arithmetic"] == "hf-f32" and j["residual"]["hf-f32"]["differ"] == 0
            t.check(exact, f"{name} ({kind}) {form}: " + (f"{j['scaling']} base {j['base']:g} factor {j['factor']:g} "
                    f"L0 {j['original_max_position']}, {j['arithmetic']} "
                    f"{j['residual']['hf-f32']['differ']} differ" if j else se.strip()))
            if kind == "ntk" and j:
                t.check("ntk_is_base" in j["ambiguous"], f"{name}: NTK factor vs base named as not separable")
            if kind == "yarn" and j:
                t.check("yarn_context" in j["ambiguous"], f"{name}: YaRN L0 vs betas named as not separable")
        if kind in ("none", "yarn", "llama3", "linear"):
            cfg = config(d, name, R, base, kind, factor, L0)
            rc, so, se = run("rope", "identify", forms["hf cos+sin"][0], "--sin", forms["hf cos+sin"][2],
                             "--config", cfg)
            t.check(rc == 0 and "matches the config bit for bit in HF's float32 arithmetic" in so,
                    f"{name}: --config matches bit for bit: " + (so.strip().splitlines()[-1] if rc == 0 else se))

    # vLLM's own construction (einsum, [T, R/2] blocks): HF's float32 arithmetic
    rc, j, se = identify(save(d, "vllm_llama2", vllm_cache(128, 10000.0).numpy()))
    t.check(rc == 0 and j["layout"] == "vllm" and j["scaling"] == "none" and j["base"] == 10000
            and j["arithmetic"] == "hf-f32" and j["residual"]["hf-f32"]["max_ulp"] <= 1,
            "vLLM cos_sin_cache: vllm layout, none, base 10000, HF float32 within 1 ULP: "
            + (json.dumps(j["residual"]) if j else se))

    # planted deviations
    inv, att = inv_freq("yarn", 128, 10000.0, 4.0, 4096)
    cfg_yarn = config(d, "yarn_cfg", 128, 10000.0, "yarn", 4.0, 4096)
    c, s = hf_tables(inv, 1.0)
    args = (save(d, "noatt_c", c.numpy()), "--sin", save(d, "noatt_s", s.numpy()))
    rc, so, se = run("rope", "identify", *args, "--config", cfg_yarn)
    t.check(rc == 0 and "magnitude 1 where the config's yarn gives 1.13863: the attention factor was dropped" in so,
            "dropped attention factor named: " + (so.strip().splitlines()[-1] if rc == 0 else se))
    c, s = hf_tables(inv, att, start=1)
    args = (save(d, "start1_c", c.numpy()), "--sin", save(d, "start1_s", s.numpy()))
    rc, j, se = identify(*args)
    t.check(rc == 0 and j["offset"] == 1 and j["residual"]["hf-f32"]["differ"] == 0, "positions from 1: offset 1")
    rc, so, se = run("rope", "identify", *args, "--config", cfg_yarn)
    t.check(rc == 0 and "positions start at 1" in so, "positions from 1 named against the config")
    c, s = hf_tables(inv, att, dtype=torch.bfloat16)
    bits_c, bits_s = c.view(torch.int16).numpy().view(np.uint16), s.view(torch.int16).numpy().view(np.uint16)
    args = (save(d, "bf16_c", bits_c), "--sin", save(d, "bf16_s", bits_s), "--bf16")
    rc, j, se = identify(*args)
    t.check(rc == 0 and j["grid"] == "bf16" and j["scaling"] == "yarn" and j["residual"]["hf-f32"]["differ"] == 0,
            "bf16 cache: bf16 grid, yarn, HF float32 then bf16 bit for bit")
    args32 = (save(d, "bf16w_c", c.float().numpy()), "--sin", save(d, "bf16w_s", s.float().numpy()))
    rc, j, se = identify(*args32)
    t.check(rc == 0 and j["grid"] == "bf16", "bf16 values stored as f32: the bf16 rounding is found")
    rc, so, se = run("rope", "identify", *args, "--config", cfg_yarn)
    t.check(rc == 0 and "rounded to bf16" in so, "bf16 cache against the config: rounded to bf16 named")
    inv, att = inv_freq("linear", 128, 500000.0, 8.0)
    c, s = hf_tables(inv, att)
    cfg_l3 = config(d, "l3_cfg", 128, 500000.0, "llama3", 8.0, 8192)
    args = (save(d, "lin_c", c.numpy()), "--sin", save(d, "lin_s", s.numpy()))
    rc, so, se = run("rope", "identify", *args, "--config", cfg_l3)
    t.check(rc == 0 and "follow linear interpolation (factor 8), the config says llama3 bands" in so,
            "linear instead of llama3 named: " + (so.strip().splitlines()[-1] if rc == 0 else se))
    # ggml's theta chain vs HF's power: a ggml cache made by `rope apply --mode ggml` on
    # x = (1, 0) per interleaved pair (the rotation then returns (cos, sin) exactly)
    ones = np.zeros((T, 1, 128), np.float32)
    ones[:, :, 0::2] = 1
    src = save(d, "ones", ones)
    gcache = os.path.join(d, "ggml_cache.npy")
    rc, _, se = run("rope", "apply", "--in", src, "--dim", "128", "--layout", "interleaved", "--mode", "ggml",
                    "--scaling", "yarn", "--factor", "4", "--original-max", "4096", "-o", gcache)
    np.save(gcache, np.load(gcache).reshape(T, 128))
    rc, j, se = identify(gcache)
    t.check(rc == 0 and j["layout"] == "ggml" and j["scaling"] == "yarn" and j["arithmetic"] == "ggml-f32"
            and j["residual"]["ggml-f32"]["differ"] == 0 and j["residual"]["hf-f32"]["differ"] > 0,
            "ggml YaRN cache: ggml layout, yarn, ggml float32 bit for bit, HF's power told apart: "
            + (json.dumps(j["residual"]) if j else se))
    rc, so, se = run("rope", "identify", gcache, "--config", cfg_yarn)
    t.check(rc == 0 and "matches the config bit for bit in ggml's float32 arithmetic" in so,
            "ggml cache against the HF config: bit for bit in ggml's arithmetic")
    # the same against a GGUF header (llama.cpp's view of the model)
    kvs = [("general.architecture", 8, "llama"), ("llama.attention.head_count", 4, 8),
           ("llama.embedding_length", 4, 1024), ("llama.context_length", 4, 16384),
           ("llama.rope.dimension_count", 4, 128), ("llama.rope.freq_base", 6, 10000.0),
           ("llama.rope.scaling.type", 8, "yarn"), ("llama.rope.scaling.factor", 6, 4.0),
           ("llama.rope.scaling.original_context_length", 4, 4096)]
    blob = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs))
    for k, typ, v in kvs:
        blob += struct.pack("<Q", len(k)) + k.encode() + struct.pack("<I", typ)
        blob += (struct.pack("<Q", len(v)) + v.encode() if typ == 8 else
                 struct.pack("<I", v) if typ == 4 else struct.pack("<f", v))
    gg = os.path.join(d, "yarn.gguf")
    with open(gg, "wb") as f:
        f.write(blob)
    rc, so, se = run("rope", "identify", gcache, "--config", gg)
    t.check(rc == 0 and "matches the config bit for bit in ggml's float32 arithmetic" in so,
            "ggml cache against its GGUF header: bit for bit in ggml's arithmetic")
    rc, so, se = run("rope", "identify", os.path.join(d, "noatt_c.npy"), "--sin", os.path.join(d, "noatt_s.npy"),
                     "--config", gg)
    t.check(rc == 0 and "the attention factor was dropped" in so, "dropped attention factor named against the GGUF")
    # bad input: exit 2 naming the value, nothing printed on stdout
    bad = np.ones((5, 8), np.float32)
    bad[3, 2] = np.nan
    rc, so, se = run("rope", "identify", save(d, "nan", bad))
    t.check(rc == 2 and "[3, 2]" in se and so == "", "a NaN cache value is refused by position: " + se.strip())
    rc, so, se = run("rope", "identify")
    t.check(rc == 2 and "give one cache file" in se, "no file: usage error")
    return t.finish()


if __name__ == "__main__":
    raise SystemExit(main())
