#!/usr/bin/python3
"""Three files posenc used to read with exit 0 and a wrong answer, each checked against the framework.

1. OLMo 3 as GGUF (arch olmo2 with attention.sliding_window), written with gguf-py the way
   llama.cpp's converter (Olmo2Model.set_gguf_parameters) writes it: llama.cpp's olmo2 graph
   (src/models/olmo2.cpp) rotates the SWA layers (set_swa_pattern(4): (il + 1) % 4 != 0) with
   freq_scale 1, ext_factor 0, attn_factor 1 -- plain RoPE, no YaRN -- and only the full layers with
   the file's YaRN. posenc read YaRN on all 32 layers.
2. A wrapper model_type posenc does not know around a text_config it does know (llava around
   llama, before llava was measured and listed) was read as the inner family; now refused naming both
   (--assume reads it on purpose). The check uses a made-up wrapper type, never to be listed.
3. PaliGemma: transformers' own forward (run here, tiny random model) hands its language model
   position ids 1, 2, 3, ...; posenc says where positions start (position_start 1).
Needs the test environment (POSENC_PYTHON): gguf-py, torch, transformers."""
import json
import os

from common import Checks, run, tmpdir


def olmo3_gguf(path, pattern=True):
    """OLMo-3-7B's position keys as convert_hf_to_gguf.py writes them (no tensors needed)."""
    import gguf
    w = gguf.GGUFWriter(path, "olmo2")
    w.add_context_length(65536)
    w.add_embedding_length(4096)
    w.add_block_count(32)
    w.add_feed_forward_length(11008)
    w.add_head_count(32)
    w.add_head_count_kv(32)
    w.add_rope_freq_base(500000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(8.0)
    w.add_rope_scaling_attn_factors(1.2079441541679836)
    w.add_rope_scaling_orig_ctx_len(8192)
    w.add_sliding_window(4096)
    if pattern:
        w.add_sliding_window_pattern([(i + 1) % 4 != 0 for i in range(32)])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def paligemma_position_ids():
    """The position ids transformers' PaliGemma forward hands its language model (tiny random model)."""
    import torch
    from transformers import PaliGemmaConfig, PaliGemmaForConditionalGeneration
    cfg = PaliGemmaConfig(text_config=dict(model_type="gemma", num_hidden_layers=1, hidden_size=32,
                                           intermediate_size=64, num_attention_heads=2, num_key_value_heads=1,
                                           head_dim=16, vocab_size=300),
                          vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                             num_attention_heads=2, image_size=28, patch_size=14),
                          image_token_index=299, projection_dim=32)
    torch.manual_seed(0)
    model = PaliGemmaForConditionalGeneration(cfg).eval()
    seen = {}

    def hook(mod, args, kwargs):
        seen["ids"] = kwargs.get("position_ids")
    model.model.language_model.register_forward_pre_hook(hook, with_kwargs=True)
    with torch.no_grad():
        model(input_ids=torch.tensor([[5, 6, 7, 8]]))
    return [int(x) for x in seen["ids"][0]]


def main():
    t = Checks()
    d = tmpdir()
    # 1. OLMo 3 GGUF
    path = olmo3_gguf(os.path.join(d, "olmo3.gguf"))
    rc, so, se = run("rope", "explain", "--config", path, "--json")
    j = json.loads(so) if rc == 0 else {}
    layers = j.get("layers", [])
    ropes = j.get("ropes", [])
    swa = [x for x in layers if x.get("kind") == "sliding_attention"]
    full = [x for x in layers if x.get("kind") == "full_attention"]
    t.check(rc == 0 and len(layers) == 32 and [x["index"] for x in full] == list(range(3, 32, 4)) and len(swa) == 24,
            f"OLMo 3 GGUF: 24 SWA layers ((il + 1) % 4 != 0) and 8 full layers ({len(swa)} / {len(full)})")
    t.check(all(x.get("scaling") == "none" and x.get("base") == 500000 and x.get("sliding_window") == 4096 for x in swa),
            "OLMo 3 GGUF: the SWA layers rotate with plain RoPE at freq_base 500000 (llama.cpp: freq_scale 1, "
            "ext_factor 0), window 4096")
    t.check(all(x.get("scaling") == "yarn" and x.get("factor") == 8 for x in full),
            "OLMo 3 GGUF: the full layers keep the file's YaRN x8")
    att = {r["name"]: r.get("attention_factor") for r in ropes}
    t.check(att.get("sliding_attention") == 1.0 and att.get("full_attention", 1.0) > 1.0,
            f"OLMo 3 GGUF: SWA magnitude 1 (attn_factor 1.0 in the graph), full layers YaRN's ({att})")
    # an olmo2 GGUF without a window: one RoPE, every layer, as before
    import gguf
    plain = os.path.join(d, "olmo2.gguf")
    w = gguf.GGUFWriter(plain, "olmo2")
    w.add_context_length(4096)
    w.add_embedding_length(4096)
    w.add_block_count(32)
    w.add_head_count(32)
    w.add_rope_freq_base(500000.0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    rc, so, se = run("rope", "explain", "--config", plain, "--json")
    j = json.loads(so) if rc == 0 else {}
    t.check(rc == 0 and len(j["ropes"]) == 1 and all(x["kind"] == "attention" for x in j["layers"]),
            "OLMo 2 GGUF (no sliding window): one RoPE in every layer")

    # 2. wrappers
    cfg = os.path.join(d, "xvlm.json")
    with open(cfg, "w") as f:
        json.dump({"model_type": "xvlm", "text_config": {"model_type": "llama", "rope_theta": 500000.0,
                                                          "hidden_size": 4096, "num_attention_heads": 32,
                                                          "num_hidden_layers": 32}}, f)
    rc, so, se = run("rope", "explain", "--config", cfg)
    t.check(rc == 1 and "'xvlm'" in se and "'llama'" in se and "--assume" in se,
            f"xvlm around a llama text_config: refused naming both, not read as llama: {se.strip()[:160]}")
    rc, so, se = run("rope", "explain", "--config", cfg, "--assume", "llama", "--json")
    j = json.loads(so) if rc == 0 else {}
    t.check(rc == 0 and j.get("assumed") is True and j["ropes"][0]["base"] == 500000,
            "xvlm --assume llama: the text model read on purpose, marked assumed")
    with open(cfg, "w") as f:  # a top-level hidden_size does not make it the text model either
        json.dump({"model_type": "xvlm_next", "hidden_size": 4096,
                   "text_config": {"model_type": "mistral", "rope_theta": 1e6}}, f)
    rc, so, se = run("rope", "explain", "--config", cfg)
    t.check(rc == 1 and "'xvlm_next'" in se, f"xvlm_next around mistral: refused by name ({se.strip()[:100]})")

    # a config class with a built-in scaled rope dict: a file without one is refused, never read unscaled
    for mt in ("gpt_oss", "apertus"):
        with open(cfg, "w") as f:
            json.dump({"model_type": mt, "num_hidden_layers": 4}, f)
        rc, so, se = run("rope", "explain", "--config", cfg)
        t.check(rc == 1 and f"a {mt} config without rope_parameters" in se,
                f"{mt} without a rope dict: refused (its config class would use its own scaled RoPE)")

    # 3. PaliGemma: position ids from transformers' forward
    ids = paligemma_position_ids()
    cfg = os.path.join(d, "paligemma.json")
    with open(cfg, "w") as f:  # google/paligemma-3b-pt-224's shape: a top-level hidden_size, a gemma text_config
        json.dump({"model_type": "paligemma", "hidden_size": 2048, "projection_dim": 2048,
                   "text_config": {"model_type": "gemma", "hidden_size": 2048, "intermediate_size": 16384,
                                   "num_attention_heads": 8, "num_hidden_layers": 18, "num_key_value_heads": 1}}, f)
    rc, so, se = run("rope", "explain", "--config", cfg, "--json")
    j = json.loads(so) if rc == 0 else {}
    t.check(rc == 0 and ids[0] == 1 and j.get("position_start") == ids[0] and j.get("family") == "gemma" and
            len(j["layers"]) == 18 and j["ropes"][0]["head_dim"] == 256,
            f"PaliGemma: transformers' forward gives position ids {ids}; posenc position_start "
            f"{j.get('position_start')}, gemma text model, 18 layers, head 256")
    rc, so, se = run("rope", "explain", "--config", cfg)
    t.check(rc == 0 and "positions start at 1" in so, "PaliGemma in words: positions start at 1")
    t.finish()


if __name__ == "__main__":
    main()
