#!/usr/bin/env python3
"""Dump ggml's own RoPE for the fixtures in tests/fixtures/ggml and compare (or --write).

    .venv/bin/python tests/ggml/regenerate.py --dump BUILD/tests/ggml/ggml_rope_dump --ggml /path/to/ggml [--write]

(or `cmake --build BUILD --target ggml_fixtures` / `ggml_fixtures_write` with -DPOSENC_GGML_DIR).

For each model config in tests/fixtures/ggml/configs it derives the ggml_rope_ext /
ggml_rope_multi call llama.cpp makes for that model (the rules are below, per field, with
where llama.cpp takes them from), writes them to a plan, runs ggml_rope_dump (which calls
ggml's CPU ops, not posenc) and compares every file's sha256 with manifest.json. With
--write it replaces the .npy files and manifest.json. Needs numpy and torch (Debian's
torch 1.13: llama.cpp's converter computes the llama3 rope_freqs in torch float32).
"""
import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "fixtures", "ggml")
ROWS, TOKENS, HEADS, POS0 = 512, 37, 3, 1000
NORMAL, NEOX, MROPE, IMROPE = 0, 2, 8, 40

f32 = np.float32


def exact(x):
    """a float32 value as the double that prints it exactly (the plan's floats)"""
    return float(f32(x))


def text(cfg):
    return cfg.get("text_config", cfg)


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def llama3_rope_freqs(c, n_rot):
    """convert_hf_to_gguf.py LlamaModel.generate_extra_tensors: the rope_freqs tensor, in
    torch float32 as the converter computes it (freqs from torch.arange float32; wavelen,
    smooth and 1 / ((1 - smooth) / factor + smooth) as 0-d float32 tensors)."""
    import torch

    rs = c["rope_scaling"]
    base = c.get("rope_theta", 10000.0)
    freqs = 1.0 / (base ** (torch.arange(0, n_rot, 2, dtype=torch.float32) / n_rot))
    factor = rs.get("factor", 8.0)
    low, high = rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
    old = rs.get("original_max_position_embeddings", 8192)
    low_wave, high_wave = old / low, old / high
    out = []
    for freq in freqs:
        wave = 2 * math.pi / freq
        if wave < high_wave:
            out.append(1)
        elif wave > low_wave:
            out.append(factor)
        else:
            smooth = (old / wave - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return [float(v) for v in torch.tensor(out, dtype=torch.float32).tolist()]


def get_mscale(scale, mscale):
    """llama-context.cpp's get_mscale, float32 steps"""
    return f32(1.0) if scale <= f32(1.0) else f32(f32(f32(f32(0.1) * f32(mscale)) * f32(np.log(scale))) + f32(1.0))


def yarn_attn_factor(freq_scale, log_mul=0.0, deepseek2=False, rope_attn_factor=1.0):
    """llama-context.cpp (after ggml-org/llama.cpp#17945): cparams.yarn_attn_factor for
    ext_factor != 0, in float32 (no contraction assumed): get_mscale(factor, 1), or with
    rope_yarn_log_mul (DeepSeek's mscale_all_dim) get_mscale(factor, mscale) /
    get_mscale(factor, mscale_all_dim) where DeepSeek-V2 takes mscale = mscale_all_dim;
    then times 1 / (1 + 0.1 logf(factor)) (ggml multiplies that back) and rope_attn_factor."""
    factor = f32(f32(1.0) / f32(freq_scale))
    if log_mul != 0.0:
        m_all = f32(log_mul)
        m = m_all if (deepseek2 and m_all != f32(1.0)) else f32(1.0)
        a = f32(get_mscale(factor, m) / get_mscale(factor, m_all))
    else:
        a = get_mscale(factor, 1.0)
    a = f32(a * f32(f32(1.0) / f32(f32(1.0) + f32(f32(0.1) * f32(np.log(factor))))))
    return f32(a * f32(rope_attn_factor))


def derive(name, cfg):
    """the ggml call llama.cpp makes for this config (mode, n_dims, knobs), with the source of each"""
    c = text(cfg)
    mt = cfg.get("model_type")
    D = head_dim(c)
    rs = c.get("rope_scaling") or {}
    kind = (rs.get("rope_type") or rs.get("type") or "none").lower()
    e = dict(name=name, head_dim=D, n_dims=D, freq_base=exact(c.get("rope_theta", c.get("rotary_emb_base", 10000.0))),
             freq_scale=1.0, ext_factor=0.0, attn_factor=1.0, beta_fast=32.0, beta_slow=1.0,
             n_ctx_orig=int(c.get("max_position_embeddings", 2048)), sections=None, freq_factors=None,
             how=[])
    # llama_model_rope_type (src/llama-model.cpp): LLAMA/DEEPSEEK2 = NORM; QWEN2/PHI2/PHI3/GPTNEOX/GEMMA = NEOX
    e["mode"] = {"llama": NORMAL, "mistral": NORMAL, "deepseek_v2": NORMAL, "qwen2": NEOX, "phi": NEOX,
                 "phi3": NEOX, "gpt_neox": NEOX, "gemma": NEOX, "qwen2_vl": MROPE, "qwen3_vl": IMROPE}[mt]
    e["how"].append("mode: llama_model_rope_type for arch %s" % mt)
    if mt == "phi":
        e["n_dims"] = int(c["partial_rotary_factor"] * D)
        e["how"].append("n_dims: rope.dimension_count = int(partial_rotary_factor * head_dim) (converter)")
    if mt == "gpt_neox":
        e["n_dims"] = int(c["rotary_pct"] * D)
        e["how"].append("n_dims: rope.dimension_count = int(rotary_pct * head_dim) (converter)")
    if mt == "deepseek_v2":
        D = e["head_dim"] = e["n_dims"] = c["qk_rope_head_dim"]
        e["how"].append("n_dims: n_rot = qk_rope_head_dim; q_pe/k_pe are the rotated views (deepseek2 graph)")
    if kind == "linear":
        e["freq_scale"] = exact(f32(1.0) / f32(rs["factor"]))
        e["how"].append("linear: rope_freq_scale_train = 1.0f / rope.scaling.factor; ext_factor 0 (scaling type linear)")
    elif kind == "yarn":
        e["freq_scale"] = exact(f32(1.0) / f32(rs["factor"]))
        e["ext_factor"] = 1.0
        e["n_ctx_orig"] = int(rs["original_max_position_embeddings"])
        e["beta_fast"] = float(rs.get("beta_fast", 32.0))
        e["beta_slow"] = float(rs.get("beta_slow", 1.0))
        log_mul = float(rs.get("mscale_all_dim", 0.0)) if mt == "deepseek_v2" else 0.0
        e["attn_factor"] = exact(yarn_attn_factor(e["freq_scale"], log_mul, mt == "deepseek_v2"))
        e["how"].append("yarn: freq_scale = 1.0f / factor; ext_factor 1 (scaling type yarn); n_ctx_orig = "
                        "rope.scaling.original_context_length; attn_factor = cparams.yarn_attn_factor "
                        "(llama-context.cpp, float32: %s)" % ("get_mscale(f, mscale)/get_mscale(f, mscale_all_dim), "
                                                              "mscale = mscale_all_dim for deepseek2"
                                                              if log_mul else "get_mscale(f, 1)") +
                        " * 1/(1 + 0.1 logf(f)); the deepseek2 graph passes it to ggml_rope_ext unchanged")
    elif kind == "llama3":
        e["freq_factors"] = llama3_rope_freqs(c, e["n_dims"])
        e["how"].append("llama3: freq_factors = the rope_freqs tensor (convert_hf_to_gguf.py, torch float32); "
                        "freq_scale 1, ext_factor 0 (no rope scaling type written)")
    elif kind in ("longrope", "su"):
        orig = int(c["original_max_position_embeddings"])
        scale = c["max_position_embeddings"] / orig
        e["freq_factors"] = [exact(v) for v in rs["long_factor"]]
        e["attn_factor"] = exact(math.sqrt(1 + math.log(scale) / math.log(orig)) if scale > 1.0 else 1.0)
        e["n_ctx_orig"] = orig
        e["how"].append("longrope: freq_factors = rope_factors_long (llama.cpp takes the long list when "
                        "n_ctx_per_seq > n_ctx_orig_yarn = 4096; default n_ctx = n_ctx_train = 131072); "
                        "attn_factor = rope.scaling.attn_factor = sqrt(1 + ln(max_pos/orig)/ln(orig)) "
                        "(converter, float64 stored as f32) times cparams.yarn_attn_factor 1; ext_factor 0")
    elif kind == "mrope" or mt in ("qwen2_vl", "qwen3_vl"):
        sec = list(rs["mrope_section"]) + [0] * (4 - len(rs["mrope_section"]))
        e["sections"] = sec
        e["how"].append("sections: rope.dimension_sections = mrope_section padded to 4 (converter); "
                        "text tokens use streams (p, p, p, 0) (llm_graph_input_pos::set_input)")
    return e


# Deviations planted on purpose, each made by ggml itself from a fixture's call with one
# knob changed the way an engine gets it wrong (the cache only, 256 rows).
PLANTED = [
    ("planted_qwen25_yarn_attn_dropped", "qwen25_7b_yarn",
     "YaRN's attention factor dropped: attn_factor = 1 / (1 + 0.1 logf(4)) cancels ggml's own magnitude (an engine "
     "that applies llama.cpp's cancel without the factor it cancels for)",
     lambda e: e.update(attn_factor=exact(f32(1.0) / f32(f32(1.0) + f32(f32(0.1) * f32(np.log(f32(4.0)))))))),
    ("planted_llama31_no_freq_factors", "llama31_8b",
     "Llama 3.1 without its rope_freqs tensor (a GGUF converted before llama3 bands were written): plain RoPE "
     "where the config says llama3", lambda e: e.update(freq_factors=None)),
    ("planted_deepseek_mscale_ignored", "deepseek_v2_lite",
     "DeepSeek-V2-Lite with attn_factor 1: ggml's own YaRN magnitude 1 + 0.1 ln 40 stays (the config's mscale / "
     "mscale_all_dim ratio 1 ignored)", lambda e: e.update(attn_factor=1.0)),
]


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", required=True, help="the built ggml_rope_dump")
    ap.add_argument("--ggml", required=True, help="the ggml checkout it was built against (its commit is recorded)")
    ap.add_argument("--write", action="store_true", help="rewrite the fixtures and manifest.json")
    a = ap.parse_args()
    commit = subprocess.run(["git", "-C", a.ggml, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    names = sorted(n[:-5] for n in os.listdir(os.path.join(FIX, "configs")) if n.endswith(".json"))
    entries = [derive(n, json.load(open(os.path.join(FIX, "configs", n + ".json")))) for n in names]
    for name, src, what, change in PLANTED:
        cfg = json.load(open(os.path.join(FIX, "configs", src + ".json")))
        e = derive(name, cfg)
        change(e)
        e.update(rows=256, apply=False, planted=what, config=src)
        entries.append(e)
    with tempfile.TemporaryDirectory() as tmp:
        plan = dict(rows=ROWS, apply_tokens=TOKENS, apply_heads=HEADS, apply_pos0=POS0, fixtures=entries)
        with open(os.path.join(tmp, "plan.json"), "w") as f:
            json.dump(plan, f)
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        subprocess.run([a.dump, os.path.join(tmp, "plan.json"), out], check=True)
        files = {n: sha(os.path.join(out, n)) for n in sorted(os.listdir(out))}
        manifest = dict(
            producer=dict(repository="ggml-org/ggml", commit=commit, ops="ggml_rope_ext / ggml_rope_multi, CPU "
                          "backend, 1 thread", program="tests/ggml/ggml_rope_dump.c", plan="tests/ggml/regenerate.py",
                          build="in-tree via cmake/ggml.cmake: Release, GGML_NATIVE ON (the builder's -march=native), "
                          "OpenMP off"),
            rows=ROWS, apply=dict(tokens=TOKENS, heads=HEADS, pos0=POS0, input="input_dD.npy: the golden "
                                  "input_formula of tests/golden/README.md at [37, 3, D]"),
            files=files,
            fixtures=[{k: v for k, v in e.items()} for e in entries])
        if a.write:
            for n in files:
                shutil.copyfile(os.path.join(out, n), os.path.join(FIX, n))
            with open(os.path.join(FIX, "manifest.json"), "w") as f:
                json.dump(manifest, f, indent=1)
                f.write("\n")
            print("wrote %d files and manifest.json to %s (ggml %s)" % (len(files), FIX, commit[:12]))
            return 0
        old = json.load(open(os.path.join(FIX, "manifest.json")))
        bad = [n for n in files if old["files"].get(n) != files[n]] + [n for n in old["files"] if n not in files]
        for n in bad:
            print("differs: %s" % n)
        print("%d of %d files bit-identical to the committed ones (ggml %s; committed from %s)" %
              (len(files) - len(bad), len(files), commit[:12], old["producer"]["commit"][:12]))
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
