#!/usr/bin/env python3
"""Issue 23 through the tool: a model is a list of layers, and nothing is guessed.

`rope explain` folds runs of equal layers into one line; `--json` lists every
layer; an unknown model_type or GGUF architecture is refused by name (exit 1)
unless --assume names a family, and then the output says "assumed"; a bad
--assume is a usage error (2); a NUL inside a name is refused; `report
--config` shows the layers, also for models without any RoPE; the one-RoPE
commands (`rope freqs`) refuse a model without RoPE by its scheme."""
import json
import os
import struct

from common import Checks, run, tmpdir

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "fixtures", "models")


def model(name):
    return os.path.join(MODELS, name + ".json")


def gguf(path, arch, blocks=8):
    """A tensor-less GGUF v3 header (the keys llama.cpp reads)."""
    def s(text):
        b = text.encode()
        return struct.pack("<Q", len(b)) + b
    kv = [("general.architecture", 8, s(arch)), (f"{arch}.block_count", 4, struct.pack("<I", blocks)),
          (f"{arch}.context_length", 4, struct.pack("<I", 2048)), (f"{arch}.embedding_length", 4, struct.pack("<I", 512)),
          (f"{arch}.attention.head_count", 4, struct.pack("<I", 8)),
          (f"{arch}.rope.freq_base", 6, struct.pack("<f", 10000.0))]
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv))
    for key, t, v in kv:
        out += s(key) + struct.pack("<I", t) + v
    open(path, "wb").write(out)
    return path


def main():
    t = Checks()
    d = tmpdir()
    rc, so, se = run("rope", "explain", "--config", model("smollm3_3b"))
    t.check(rc == 0 and "layers 0-2, 4-6, 8-10, 12-14, ..., 32-34: RoPE base 5000000, half" in so and
            "layers 3, 7, 11, 15, ..., 35: no position encoding (NoPE attention) [9 layers]" in so,
            "SmolLM3: runs of equal layers folded, NoPE every 4th layer")
    rc, so, se = run("rope", "explain", "--config", model("qwen3_next_80b_a3b"), "--json")
    j = json.loads(so) if rc == 0 else {}
    lin = [x for x in j.get("layers", []) if x["kind"] == "linear_attention"]
    t.check(rc == 0 and len(j["layers"]) == 48 and len(lin) == 36 and all(x["scheme"] == "nope" for x in lin) and
            j["layers"][3]["rotary_dim"] == 64 and j["assumed"] is False and j["assumed_family"] is None,
            "Qwen3-Next --json: 48 layers, 36 linear-attention layers without positions, 64 of 256 channels rotated")
    rc, so, se = run("rope", "explain", "--config", model("bloom_560m"), "--json")
    j = json.loads(so) if rc == 0 else {}
    t.check(rc == 0 and j["layout"] is None and j["ropes"] == [] and len(j["alibi"]["slopes"]) == 16 and
            j["layers"][5]["scheme"] == "alibi" and j["layers"][5]["slope"][0] == 2 ** -0.5 and
            "offset_alibi" in j["unused_keys"],
            f"BLOOM --json: ALiBi in every layer (16 slopes), no RoPE, unused key listed {j.get('unused_keys')}")
    rc, so, se = run("rope", "explain", "--config", model("bloom_560m"))
    t.check(rc == 0 and "no RoPE in any layer" in so and "layers 0-23: ALiBi, 16 heads, max bias 8" in so,
            "BLOOM in words: no RoPE, ALiBi layers 0-23")
    rc, so, se = run("rope", "freqs", "--config", model("gpt2"))
    t.check(rc == 1 and "no RoPE layer" in se and "learned" in se, f"[H10] rope freqs on GPT-2 refused by scheme: {se.strip()}")
    rc, so, se = run("rope", "explain", "--config", model("llama4_scout_17b_16e_instruct"), "--json")
    j = json.loads(so) if rc == 0 else {}
    t.check(rc == 0 and any("low_freq_factor == high_freq_factor" in w for w in j["warnings"]) and
            not any("temperature" in k or "floor_scale" in k or "attn_scale" in k for k in j["unused_keys"]) and
            j["layers"][3]["scheme"] == "nope" and j["layers"][3]["query_scale"] and not j["layers"][0]["query_scale"]
            and j["query_scale"] == {"layers": "nope", "beta": 0.1, "divisor": 8192, "shift": 1} and
            j["layers"][0]["layout"] == "interleaved",
            "Llama 4 Scout Instruct: flat llama3 accepted with a warning; NoPE layer 3 with the attention temperature "
            f"(attn_temperature_tuning 4, floor_scale, attn_scale read: {j.get('query_scale')})")
    # refusals and --assume
    unknown = model("unknown_family")
    rc, so, se = run("rope", "freqs", "--config", unknown, "--assume", "llama", "--json")
    t.check(rc == 0 and "assumed" in se and json.loads(so)["base"] == 250000,
            "rope freqs --assume llama: read on purpose, a note says assumed")
    rc, so, se = run("rope", "explain", "--config", unknown, "--assume", "lama")
    t.check(rc == 2 and "'lama'" in se and "llama" in se, f"[H8] --assume with no such family: usage error: {se.strip()}")
    rc, so, se = run("report", "--config", unknown, "-o", os.path.join(d, "u.html"))
    t.check(rc == 1 and "'mystery_lm'" in se and not os.path.exists(os.path.join(d, "u.html")),
            "[H7] report --config refuses the unknown model_type by name, writes nothing")
    nul = os.path.join(d, "nul.json")
    open(nul, "w").write('{"model_type": "lla\\u0000ma", "hidden_size": 64, "num_attention_heads": 2}')
    rc, so, se = run("rope", "explain", "--config", nul)
    t.check(rc == 1 and "NUL" in se, f"[H9] model_type with a NUL refused: {se.strip()}")
    mpt = os.path.join(d, "mpt.json")
    json.dump({"model_type": "mpt", "n_heads": 8, "n_layers": 2, "attn_config": {"alibi": False}}, open(mpt, "w"))
    rc, so, se = run("rope", "explain", "--config", mpt)
    t.check(rc == 1 and "attn_config.alibi false" in se, f"[H12] MPT without ALiBi refused, not guessed: {se.strip()}")
    rc, so, se = run("rope", "explain", "--config", gguf(os.path.join(d, "sc.gguf"), "starcoder"), "--json")
    t.check(rc == 1 and "'starcoder'" in se and so == "", f"[G10] unknown GGUF architecture refused by name: {se.strip()}")
    rc, so, se = run("rope", "explain", "--config", gguf(os.path.join(d, "s3.gguf"), "smollm3"), "--json")
    j = json.loads(so) if rc == 0 else {}
    t.check(rc == 0 and [x["scheme"] for x in j["layers"]] == ["rope"] * 3 + ["nope"] + ["rope"] * 3 + ["nope"] and
            j["layout"] == "interleaved", "smollm3 GGUF: NORM, NoPE at layers 3 and 7")
    rc, so, se = run("plot", "rope-bands", "--config", model("llama4_scout_17b_16e"), "-o", os.path.join(d, "b.svg"))
    t.check(rc == 2 and "--config does not apply" in se, "plot rope-bands refuses --config (it used to draw "
            "its defaults and ignore the model)")
    # report --config: the layers, also without RoPE
    for name, want in (("bloom_560m", "ALiBi, 16 heads"), ("jamba_v0_1", "mamba: no attention"),
                       ("smollm3_3b", "no position encoding (NoPE attention)"), ("t5_v1_1_xxl_encoder", "T5 relative")):
        out = os.path.join(d, name + ".html")
        rc, so, se = run("report", "--config", model(name), "--no-lab", "-o", out)
        html = open(out).read() if rc == 0 else ""
        t.check(rc == 0 and "<table class=\"layers\">" in html and want in html,
                f"report --config {name}: a layers table with '{want}' {se.strip()[-120:] if rc else ''}")
    # wav2vec2-style conv positions: WavLM's report draws its buckets; a plain conv has nothing a config can draw
    wavlm, hubert = os.path.join(d, "wavlm.json"), os.path.join(d, "hubert.json")
    json.dump({"model_type": "wavlm"}, open(wavlm, "w"))
    json.dump({"model_type": "hubert"}, open(hubert, "w"))
    out = os.path.join(d, "wavlm.html")
    rc, so, se = run("report", "--config", wavlm, "--no-lab", "-o", out)
    html = open(out).read() if rc == 0 else ""
    t.check(rc == 0 and "learned conv positions wavlm.encoder.pos_conv_embed" in html and "WavLM bucket" in html,
            f"report --config wavlm: the conv layers and the WavLM bucket map {se.strip()[-120:] if rc else ''}")
    rc, so, se = run("plot", "heatmap", "--config", hubert, "-o", os.path.join(d, "h.svg"))
    t.check(rc == 1 and "learned convolution" in se and not os.path.exists(os.path.join(d, "h.svg")),
            f"plot --config hubert: refused, its conv positions are weights ({se.strip()[:120]})")
    t.finish()


if __name__ == "__main__":
    main()
