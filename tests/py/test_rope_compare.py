"""Issue 39 item 4: `posenc rope compare A B` on real published configs and GGUFs of the same models.

The GGUFs are written with gguf-py (gguf 0.19.0, the writer llama.cpp's converter uses) carrying the keys
convert_hf_to_gguf.py writes for that architecture:
- Llama 3.1 8B (llama): TextModel.set_gguf_parameters (context_length, embedding_length, block_count,
  feed_forward_length, head_count, head_count_kv, rope.freq_base, layer_norm_rms_epsilon), LlamaModel adds
  vocab_size and rope.dimension_count = head_dim, and for rope_type llama3 no scaling key but the
  rope_freqs.weight tensor from LlamaModel.generate_extra_tensors (reproduced below in torch float32 as
  the converter computes it: old_context_len from the top-level hparams, default 8192);
- Qwen2.5 7B with YaRN (qwen2): the same base keys, plus rope.scaling.type yarn, rope.scaling.factor and
  rope.scaling.original_context_length from rope_scaling;
- DeepSeek-V2-Lite (deepseek2): MLA head sizes, YaRN with yarn_log_multiplier (see the case below);
- Gemma 3 1B (gemma3): key_length / value_length = head_dim, rope.freq_base, attention.sliding_window;
  llama.cpp's loader then uses 10000 for the sliding layers (rope.freq_base_swa) with pattern 6.
The HF side is the published config.json (tests/fixtures/models, provenance there). Expected: no
difference where the GGUF is a faithful conversion; a difference, naming what and which layers, where a
key was changed or dropped (exit 1)."""
import json
import math
import os
import shutil

import numpy as np

from common import Checks, run, tmpdir

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "fixtures", "models")


def llama3_rope_freqs(hp):
    """convert_hf_to_gguf.py LlamaModel.generate_extra_tensors: the per-pair divisors, float32."""
    import torch
    rs = hp["rope_scaling"]
    base = hp.get("rope_theta", 10000.0)
    dim = hp.get("head_dim") or hp["hidden_size"] // hp["num_attention_heads"]
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor = rs.get("factor", 8.0)
    low, high = rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
    old = hp.get("original_max_position_embeddings", 8192)
    low_wl, high_wl = old / low, old / high
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_wl:
            out.append(1)
        elif wavelen > low_wl:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return torch.tensor(out, dtype=torch.float32).numpy()


def write_gguf(path, arch, hp, freq_base=None, scaling=True, rope_freqs=True, swa_base=None, blocks=None):
    import gguf
    w = gguf.GGUFWriter(path, arch)
    w.add_context_length(hp["max_position_embeddings"])
    w.add_embedding_length(hp["hidden_size"])
    w.add_block_count(blocks if blocks is not None else hp["num_hidden_layers"])
    w.add_feed_forward_length(hp.get("intermediate_size", 4 * hp["hidden_size"]))
    w.add_head_count(hp["num_attention_heads"])
    w.add_head_count_kv(hp.get("num_key_value_heads", hp["num_attention_heads"]))
    w.add_rope_freq_base(freq_base if freq_base is not None else hp.get("rope_theta", 10000.0))
    w.add_layer_norm_rms_eps(hp.get("rms_norm_eps", 1e-5))
    head = hp.get("head_dim") or hp["hidden_size"] // hp["num_attention_heads"]
    if arch == "llama":
        w.add_vocab_size(hp.get("vocab_size", 128256))
        w.add_rope_dimension_count(head)
    if arch == "gemma3":
        w.add_key_length(head)
        w.add_value_length(head)
        w.add_sliding_window(hp["sliding_window"])
        if swa_base is not None:
            w.add_rope_freq_base_swa(swa_base)
    rs = hp.get("rope_scaling") or {}
    if scaling and rs.get("type", rs.get("rope_type")) == "yarn":
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(rs["factor"])
        w.add_rope_scaling_orig_ctx_len(rs["original_max_position_embeddings"])
    if rope_freqs and rs.get("rope_type") == "llama3":
        w.add_tensor("rope_freqs.weight", llama3_rope_freqs(hp))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


# Ministral 3 as its config class builds it (Ministral3Config defaults, transformers 5.18), and the GGUF
# convert_hf_to_gguf.py writes for it (arch mistral3: yarn keys, yarn_log_multiplier = mscale_all_dim itself,
# attention.temperature_scale = llama_4_scaling_beta)
MINISTRAL3 = {"model_type": "ministral3", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
              "head_dim": 128, "num_hidden_layers": 34, "max_position_embeddings": 262144,
              "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
                                  "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0,
                                  "mscale": 1.0, "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.1}}


def write_mistral3_gguf(path, temperature=0.1):
    import gguf
    hp, rp = MINISTRAL3, MINISTRAL3["rope_parameters"]
    w = gguf.GGUFWriter(path, "mistral3")
    w.add_context_length(hp["max_position_embeddings"])
    w.add_embedding_length(hp["hidden_size"])
    w.add_block_count(hp["num_hidden_layers"])
    w.add_head_count(hp["num_attention_heads"])
    w.add_head_count_kv(hp["num_key_value_heads"])
    w.add_key_length(hp["head_dim"])
    w.add_value_length(hp["head_dim"])
    w.add_rope_dimension_count(hp["head_dim"])
    w.add_rope_freq_base(rp["rope_theta"])
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(rp["factor"])
    w.add_rope_scaling_orig_ctx_len(rp["original_max_position_embeddings"])
    w.add_float32("mistral3.rope.scaling.yarn_beta_fast", rp["beta_fast"])
    w.add_float32("mistral3.rope.scaling.yarn_beta_slow", rp["beta_slow"])
    w.add_float32("mistral3.rope.scaling.yarn_log_multiplier", rp["mscale_all_dim"])
    if temperature is not None:
        w.add_float32("mistral3.attention.temperature_scale", temperature)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def query_scale_checks(t, d):
    """The position-dependent query scale (Ministral 3 on every layer, Llama 4 on its NoPE layers): rope explain
    says it (words and JSON), rope compare reports a difference in it, naming the layers."""
    m3 = os.path.join(d, "ministral3.json")
    with open(m3, "w") as f:
        json.dump(MINISTRAL3, f)
    rc, out, err = run("rope", "explain", "--config", m3)
    t.check(rc == 0 and "query scale (attention temperature): q x (1 + 0.1 x ln(1 + floor(pos / 16384))) on every "
            "attention layer (34 of 34 layers); exactly 1 below position 16384" in out and
            "query scaled by position" in out, f"explain ministral3: the query scale in words (exit {rc}) {err.strip()}")
    rc, out, _ = run("rope", "explain", "--config", m3, "--json")
    j = json.loads(out) if rc == 0 else {}
    t.check(j.get("query_scale") == {"layers": "all", "beta": 0.1, "divisor": 16384, "shift": 0} and
            all(x["query_scale"] for x in j["layers"]), f"explain --json ministral3: query_scale {j.get('query_scale')}")
    l4 = os.path.join(d, "llama4.json")
    with open(l4, "w") as f:
        json.dump({"model_type": "llama4_text", "num_hidden_layers": 8}, f)
    rc, out, _ = run("rope", "explain", "--config", l4, "--json")
    j = json.loads(out) if rc == 0 else {}
    t.check(j.get("query_scale") == {"layers": "nope", "beta": 0.1, "divisor": 8192, "shift": 1} and
            [x["query_scale"] for x in j["layers"]] == [False, False, False, True] * 2 and
            "attn_scale" in " ".join(j["defaults_used"]),
            f"explain --json llama4_text: NoPE layers 3 and 7 scaled, class defaults said ({j.get('query_scale')})")
    rc, out, _ = run("rope", "explain", "--config", l4)
    t.check(rc == 0 and "q x (1 + 0.1 x ln(1 + floor((pos + 1) / 8192))) on the NoPE attention layers only (2 of 8 "
            "layers); exactly 1 below position 8191" in out, "explain llama4_text: the NoPE temperature in words")

    # compare: Ministral 3's config.json against its GGUF (same scale), and against a GGUF that lost the key
    gg = write_mistral3_gguf(os.path.join(d, "ministral3.gguf"))
    rc, out, err = compare(m3, gg, "--json")
    j = json.loads(out) if out.strip() else {}
    t.check(rc == 0 and j.get("same") is True and "query scale" not in {x["what"] for x in j.get("differences", [])},
            f"Ministral 3 config.json vs its GGUF (attention.temperature_scale 0.1f against 0.1: within the float32 "
            f"tolerance): same, exit {rc} {[x['what'] for x in j.get('differences', [])]} {err.strip()[:200]}")
    lost = write_mistral3_gguf(os.path.join(d, "ministral3_no_temp.gguf"), temperature=None)
    rc, out, _ = compare(m3, lost, "--json")
    j = json.loads(out) if out.strip() else {}
    qd = {x["what"]: x for x in j.get("differences", [])}.get("query scale", {})
    t.check(rc == 1 and qd.get("layers") == list(range(34)) and qd.get("b") == "none" and
            "1 + 0.1 ln(1 + floor((pos + 0) / 16384))" in qd.get("a", ""),
            f"the GGUF without attention.temperature_scale: a query scale difference on all 34 layers, exit {rc} ({qd})")
    rc, out, _ = compare(m3, lost)
    t.check(rc == 1 and "query scale: A 1 + 0.1 ln(1 + floor((pos + 0) / 16384)), B none (layers 0-33: 34 of 34" in out,
            "the same in words: " + " | ".join(out.strip().splitlines()[3:5]))
    # Llama 4 with the temperature switched off: a difference on the NoPE layers only
    off = os.path.join(d, "llama4_off.json")
    with open(off, "w") as f:
        json.dump({"model_type": "llama4_text", "num_hidden_layers": 8, "attn_temperature_tuning": False}, f)
    rc, out, _ = compare(l4, off, "--json")
    j = json.loads(out) if out.strip() else {}
    qd = {x["what"]: x for x in j.get("differences", [])}.get("query scale", {})
    t.check(rc == 1 and qd.get("layers") == [3, 7] and len(j["differences"]) == 1,
            f"llama4_text attn_temperature_tuning true vs false: the query scale differs on NoPE layers 3 and 7 only, "
            f"exit {rc} ({qd.get('layers')}, {[x['what'] for x in j.get('differences', [])]})")


def compare(a, b, *extra):
    rc, out, err = run("rope", "compare", a, b, *extra)
    return rc, out, err


def main():
    t = Checks()
    d = tmpdir()
    llama = os.path.join(MODELS, "llama_3_1_8b.json")
    hp = json.load(open(llama))

    # 1. Llama 3.1 8B: config.json against its faithful GGUF (llama3 dict vs rope_freqs divisors)
    gg = write_gguf(os.path.join(d, "llama31.gguf"), "llama", hp)
    rc, out, err = compare(llama, gg)
    t.check(rc == 0 and "same RoPE" in out and "scaling type stated differently: A llama3, B per-pair divisors" in out
            and "layout stated differently: A half, B interleaved" in out,
            f"Llama 3.1 8B config.json vs its GGUF (rope_freqs): same RoPE, exit {rc}; the notes say how each "
            f"states it: {out.strip().splitlines()[3:]} {err.strip()}")
    rc, out, _ = compare(llama, gg, "--json")
    j = json.loads(out) if out.strip() else {}
    t.check(rc == 0 and j.get("same") is True and j["differences"] == [] and
            {n["what"] for n in j["notes"]} == {"layout", "scaling type"} and j["a"]["format"] == "hf_json" and
            j["b"]["format"] == "gguf" and j["lengths"] == [0, 131072],
            f"--json: same true, no differences, notes layout + scaling type ({[n['what'] for n in j.get('notes', [])]})")
    # the order does not matter, and a folder holding the file is read as that file
    fa, fb = os.path.join(d, "hf"), os.path.join(d, "gg")
    os.makedirs(fa), os.makedirs(fb)
    shutil.copy(llama, os.path.join(fa, "config.json"))
    shutil.copy(gg, os.path.join(fb, "model-Q4_K_M.gguf"))
    rc, out, _ = compare(fb, fa)
    t.check(rc == 0 and "same RoPE" in out and "model-Q4_K_M.gguf (GGUF" in out and "config.json (HF config.json" in out,
            f"folders (B first): their config.json and their one .gguf, same RoPE: exit {rc}")

    # 2. the GGUF with rope.freq_base changed: a difference in every layer, with ULPs and the logit change
    bad = write_gguf(os.path.join(d, "llama31_base.gguf"), "llama", hp, freq_base=1e6)
    rc, out, _ = compare(llama, bad, "--json")
    j = json.loads(out) if out.strip() else {}
    diffs = {x["what"]: x for x in j.get("differences", [])}
    fr = diffs.get("inverse frequencies", {})
    t.check(rc == 1 and j.get("same") is False and "base (rope_theta)" in diffs and fr.get("layers") == list(range(32))
            and fr.get("first_layer") == 0 and fr.get("max_ulps", 0) > 1e5 and 0 < fr.get("logit_change", 0) <= 2,
            f"rope.freq_base 1e6 instead of 5e5: exit {rc}, differences {sorted(diffs)}, max {fr.get('max_ulps')} ULP, "
            f"unit q.k logit change {fr.get('logit_change')}")
    rc, out, _ = compare(llama, bad)
    t.check(rc == 1 and "RoPE differs" in out and "base (rope_theta): A 500000, B 1000000" in out and
            "layers 0-31: 32 of 32" in out, "the same in words: " + " | ".join(out.strip().splitlines()[3:6]))
    # the rope_freqs tensor dropped: plain RoPE in llama.cpp, the low frequencies 8x too fast
    plain = write_gguf(os.path.join(d, "llama31_plain.gguf"), "llama", hp, rope_freqs=False)
    rc, out, _ = compare(llama, plain, "--json")
    j = json.loads(out) if out.strip() else {}
    diffs = {x["what"]: x for x in j.get("differences", [])}
    fr = diffs.get("inverse frequencies", {})
    t.check(rc == 1 and "scaling type" in diffs and fr.get("first_pair", -1) > 0 and fr.get("layers") == list(range(32)),
            f"GGUF without rope_freqs: scaling and frequencies differ from pair {fr.get('first_pair')}: exit {rc}")
    # fewer layers: named, and only the common ones compared
    short = write_gguf(os.path.join(d, "llama31_16.gguf"), "llama", hp, blocks=16)
    rc, out, _ = compare(llama, short)
    t.check(rc == 1 and "layer count: A 32, B 16" in out, f"16 blocks instead of 32: exit {rc}")

    # 3. Qwen2.5 7B YaRN: faithful GGUF same; a GGUF that lost its scaling keys differs in frequencies and
    # attention factor, every layer
    qwen = os.path.join(MODELS, "qwen2_5_7b_yarn.json")
    qp = json.load(open(qwen))
    qg = write_gguf(os.path.join(d, "qwen.gguf"), "qwen2", qp)
    rc, out, err = compare(qwen, qg)
    t.check(rc == 0 and "same RoPE" in out, f"Qwen2.5 7B YaRN config.json vs its GGUF: same RoPE, exit {rc} {err.strip()}")
    qn = write_gguf(os.path.join(d, "qwen_noscale.gguf"), "qwen2", qp, scaling=False)
    rc, out, _ = compare(qwen, qn, "--json")
    j = json.loads(out) if out.strip() else {}
    diffs = {x["what"]: x for x in j.get("differences", [])}
    t.check(rc == 1 and {"inverse frequencies", "attention factor", "scaling type"} <= set(diffs) and
            diffs["attention factor"]["a"].startswith("1.13862") and diffs["attention factor"]["b"] == "1",
            f"Qwen2.5 YaRN GGUF without its scaling keys: {sorted(diffs)}, attention factor "
            f"{diffs.get('attention factor', {}).get('a')} vs {diffs.get('attention factor', {}).get('b')}")

    # 4. Gemma 3 1B: two bases by layer kind; a GGUF whose sliding base differs touches the sliding
    # layers only (every 6th layer is full: 5, 11, 17, 23)
    gemma = os.path.join(MODELS, "gemma3_1b_it.json")
    gp = json.load(open(gemma))
    ge = write_gguf(os.path.join(d, "gemma3.gguf"), "gemma3", gp, swa_base=10000.0)
    rc, out, err = compare(gemma, ge)
    t.check(rc == 0 and "same RoPE" in out, f"Gemma 3 1B config.json vs its GGUF: same RoPE, exit {rc} {out.strip().splitlines()[-1:]} {err.strip()}")
    gs = write_gguf(os.path.join(d, "gemma3_swa.gguf"), "gemma3", gp, swa_base=20000.0)
    rc, out, _ = compare(gemma, gs, "--json")
    j = json.loads(out) if out.strip() else {}
    diffs = {x["what"]: x for x in j.get("differences", [])}
    sliding = [i for i in range(26) if (i + 1) % 6 != 0]
    t.check(rc == 1 and diffs.get("inverse frequencies", {}).get("layers") == sliding and
            diffs.get("base (rope_theta)", {}).get("a") == "10000",
            f"Gemma 3 GGUF with freq_base_swa 20000: the 22 sliding layers differ, not the full ones "
            f"({diffs.get('inverse frequencies', {}).get('layers')})")

    # 4b. DeepSeek-V2-Lite (deepseek2, MLA): DeepseekV2Model.set_gguf_parameters writes key_length =
    # kv_lora_rank + qk_rope_head_dim, key_length_mla = qk_nope + qk_rope, rope.dimension_count =
    # qk_rope_head_dim, YaRN type / factor / original context and yarn_log_multiplier = 0.1 * mscale_all_dim.
    # The heads differ by format (192 vs 576): a note; the rotated channels, frequencies, attention factor and
    # softmax scale agree. With mscale_all_dim 1 in the config, the softmax scale and magnitude differ.
    import gguf
    ds = os.path.join(MODELS, "deepseek_v2_lite.json")
    dp = json.load(open(ds))
    dg = os.path.join(d, "ds.gguf")
    w = gguf.GGUFWriter(dg, "deepseek2")
    w.add_context_length(dp["max_position_embeddings"])
    w.add_embedding_length(dp["hidden_size"])
    w.add_block_count(dp["num_hidden_layers"])
    w.add_head_count(dp["num_attention_heads"])
    w.add_head_count_kv(dp["num_attention_heads"])
    w.add_rope_freq_base(dp["rope_theta"])
    w.add_key_length(dp["kv_lora_rank"] + dp["qk_rope_head_dim"])
    w.add_value_length(dp["kv_lora_rank"])
    w.add_key_length_mla(dp["qk_nope_head_dim"] + dp["qk_rope_head_dim"])
    w.add_value_length_mla(dp["v_head_dim"])
    w.add_rope_dimension_count(dp["qk_rope_head_dim"])
    rs = dp["rope_scaling"]
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(rs["factor"])
    w.add_rope_scaling_orig_ctx_len(rs["original_max_position_embeddings"])
    w.add_rope_scaling_yarn_log_mul(0.1 * rs["mscale_all_dim"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    rc, out, err = compare(ds, dg, "--json")
    j = json.loads(out) if out.strip() else {}
    t.check(rc == 0 and j.get("same") is True and [n["what"] for n in j.get("notes", [])] == ["head channels"],
            f"DeepSeek-V2-Lite config.json vs its GGUF: same RoPE, the MLA head size a note: exit {rc} "
            f"{[n['what'] for n in j.get('notes', [])]} {err.strip()}")
    ds1 = os.path.join(d, "ds_mscale1.json")
    json.dump(dict(dp, rope_scaling=dict(rs, mscale_all_dim=1.0)), open(ds1, "w"))
    rc, out, _ = compare(dg, ds1, "--json")
    j = json.loads(out) if out.strip() else {}
    diffs = {x["what"]: x for x in j.get("differences", [])}
    t.check(rc == 1 and {"softmax scale", "attention factor", "YaRN parameters"} <= set(diffs),
            f"mscale_all_dim 1 instead of 0.707: softmax scale, magnitude and the YaRN parameters named: {sorted(diffs)}")

    # 4c. the same configs saved by transformers 5.18 (rope_parameters instead of rope_theta + rope_scaling)
    # compare equal to the 4.x-style published files and to the GGUFs
    import transformers
    for name, cls, other in (("llama_3_1_8b.json", transformers.LlamaConfig, gg),
                             ("qwen2_5_7b_yarn.json", transformers.Qwen2Config, qg)):
        src = os.path.join(MODELS, name)
        saved = os.path.join(d, "v5_" + name)
        with open(saved, "w") as f:
            f.write(cls.from_dict(json.load(open(src))).to_json_string())
        v5 = json.load(open(saved))
        for b in (src, other):
            rc, out, err = compare(saved, b)
            t.check(rc == 0 and "same RoPE" in out and "rope_parameters" in v5 and "rope_scaling" not in v5,
                    f"{name} saved by transformers {transformers.__version__} (rope_parameters) vs "
                    f"{os.path.basename(b)}: same RoPE, exit {rc} {err.strip()}")

    # 5. two unrelated models, and the errors
    mistral = os.path.join(MODELS, "mistral_7b_v0_3.json")
    rc, out, _ = compare(llama, mistral)
    t.check(rc == 1 and "base (rope_theta): A 500000, B 1000000" in out, f"Llama 3.1 vs Mistral v0.3: exit {rc}")
    gpt2 = os.path.join(MODELS, "gpt2.json")
    rc, out, _ = compare(llama, gpt2)
    t.check(rc == 1 and "position scheme: A rope, B learned" in out, f"Llama vs GPT-2 (learned table): exit {rc}")
    rc, _, err = run("rope", "compare", llama)
    t.check(rc == 2 and "give two model files" in err, f"[C18] one file: usage error, exit {rc}")
    unknown = os.path.join(MODELS, "unknown_family.json")
    rc, _, err = run("rope", "compare", unknown, llama)
    t.check(rc == 1 and "'mystery_lm' is not a model family" in err and "hint: --assume-a FAMILY" in err,
            f"[C18] an unknown model_type: refused by name, the hint names this command's flag: exit {rc}")
    rc, out, err = run("rope", "compare", unknown, llama, "--assume-a", "llama", "--json")
    j = json.loads(out) if out.strip() else {}
    t.check(rc == 1 and j.get("a", {}).get("assumed_family") == "llama" and j["b"]["assumed_family"] is None and
            "read as the 'llama' family on purpose (--assume-a)" in err,
            f"[C18] --assume-a llama: read on purpose and said so (stderr and JSON), then compared: exit {rc}")
    rc, _, err = run("rope", "compare", unknown, llama, "--assume-a", "lama")
    t.check(rc == 2 and "assume_family 'lama'" in err, f"[C18] a bad --assume-a: usage error, exit {rc}")
    rc, _, err = run("rope", "compare", llama, os.path.join(d, "missing.json"))
    t.check(rc == 1 and "cannot open" in err and "missing.json" in err, f"[C18] a missing file: exit {rc}: {err.strip()}")
    two = os.path.join(d, "two")
    os.makedirs(two)
    shutil.copy(gg, os.path.join(two, "a.gguf"))
    shutil.copy(bad, os.path.join(two, "b.gguf"))
    rc, _, err = run("rope", "compare", llama, two)
    t.check(rc == 2 and "holds 2 .gguf files" in err, f"[C18] a folder with two GGUFs: which one would be a guess, exit {rc}")
    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    rc, _, err = run("rope", "compare", empty, llama)
    t.check(rc == 1 and "neither a config.json nor a .gguf" in err, f"[C18] an empty folder: exit {rc}")
    query_scale_checks(t, d)

    # DeBERTa: explain says the scheme in words; compare tells two configs apart by what their layers read
    v3 = {"model_type": "deberta-v2", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12,
          "max_position_embeddings": 512, "relative_attention": True, "position_buckets": 256,
          "pos_att_type": "p2c|c2p", "max_relative_positions": -1, "position_biased_input": False}
    paths = {}
    for name, cfg in {"v3": v3, "v3_copy": dict(v3), "unbucketed": dict(v3, position_buckets=-1),
                      "c2p_only": dict(v3, pos_att_type="c2p"), "absolute": dict(v3, position_biased_input=True),
                      "v1": dict(v3, model_type="deberta")}.items():
        paths[name] = os.path.join(d, f"deberta_{name}.json")
        json.dump(cfg, open(paths[name], "w"))
    rc, out, err = run("rope", "explain", "--config", paths["v3"])
    t.check(rc == 0 and "layers 0-11: DeBERTa c2p + p2c: r = query - key, 256 log buckets (max relative 512), rows "
            "clamp(bucket + 256) of deberta.encoder.rel_embeddings.weight (512 rows) [12 layers]" in out, f"explain DeBERTa-v3: the scheme in words, every layer ({out.strip().splitlines()[-2:]} {err.strip()})")
    rc, out, _ = run("rope", "explain", "--config", paths["absolute"])
    t.check(rc == 0 and "; + absolute deberta.embeddings.position_embeddings.weight (512 rows) [12 layers]" in out,
            f"explain position_biased_input true: the absolute table named too (exit {rc})")
    conv = os.path.join(d, "deberta_conv.json")
    json.dump(dict(v3, conv_kernel_size=3), open(conv, "w"))
    rc, out, _ = run("rope", "explain", "--config", conv)
    t.check(rc == 0 and "position keys posenc does not use: conv_kernel_size" in out,
            f"explain DeBERTa-v2 with conv_kernel_size 3 (a convolution after layer 0): said in a warning (exit {rc})")
    rc, out, err = compare(paths["v3"], paths["v3_copy"])
    t.check(rc == 0, f"compare DeBERTa-v3 with itself: same, exit {rc} ({err.strip()[:120]})")
    for other, words in (("unbucketed", "B 0 buckets, max relative 512"), ("c2p_only", "B 256 buckets, max relative 512, c2p"),
                         ("absolute", "+ absolute table"), ("v1", "B 0 buckets, max relative 512")):
        rc, out, err = compare(paths["v3"], paths[other])
        t.check(rc == 1 and "DeBERTa relative positions: A 256 buckets, max relative 512, c2p+p2c" in out and words in out,
                f"compare DeBERTa-v3 with {other}: a difference naming it, exit {rc} "
                f"({[x for x in out.splitlines() if 'DeBERTa' in x][:1]} {err.strip()[:100]})")
    # wav2vec2-style convolutional positions (and WavLM's buckets): compare tells the convolutions apart
    w2v = {"model_type": "wav2vec2"}
    for name, cfg in {"w2v": w2v, "w2v_copy": dict(w2v), "k64": dict(w2v, num_conv_pos_embeddings=64),
                      "wavlm": {"model_type": "wavlm"}, "wavlm_64": {"model_type": "wavlm", "num_buckets": 64}}.items():
        paths[name] = os.path.join(d, f"conv_{name}.json")
        json.dump(cfg, open(paths[name], "w"))
    rc, out, err = compare(paths["w2v"], paths["w2v_copy"])
    t.check(rc == 0, f"compare wav2vec2 with itself: same, exit {rc} ({err.strip()[:120]})")
    for a, b, words in (("w2v", "k64", "B 1 x kernel 64"), ("wavlm", "wavlm_64", "buckets 64/800")):
        rc, out, err = compare(paths[a], paths[b])
        t.check(rc == 1 and "convolutional positions: A 1 x kernel 128" in out and words in out,
                f"compare {a} with {b}: a difference naming it, exit {rc} "
                f"({[x for x in out.splitlines() if 'convolutional' in x][:1]} {err.strip()[:100]})")
    t.finish()


if __name__ == "__main__":
    main()
