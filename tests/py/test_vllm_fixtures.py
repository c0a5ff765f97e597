"""vLLM's own rotary caches on real model configs (tests/fixtures/vllm, made by
tests/vllm/regenerate.py running vLLM's rotary_embedding code, unmodified, on torch 1.13 CPU
float32; no vLLM is needed here):

- every committed file's sha256 is the manifest's (a changed byte fails here, by name), and the
  manifest names the vLLM file and commit each fixture's class came from;
- `posenc rope identify` names each cos_sin_cache: layout vllm, rotary dim, base, scaling and its
  factor / original context, magnitude, and torch's float32 arithmetic bit for bit (tolerance:
  none; where a fixture is not bit for bit the reason is checked by name: Phi-3's per-pair
  factors are measured, not known);
- with `--config` (the model's config.json fields, committed beside them) each matches the
  config bit for bit in HF's float32 arithmetic, or the real difference between vLLM and HF is
  named: vLLM's dynamic-NTK cache is one table at max_position x factor, vLLM's Phi-3 indexes
  the long factors at every position when max_model_len exceeds the original context;
- the bf16 cache vLLM keeps for a bf16 checkpoint matches the config rounded to bf16;
- a deviation planted with vLLM's own knob (apply_yarn_scaling False) is named against the config.
POSENC_VLLM_FIXTURES=DIR reads another copy of the folder (to show a changed byte fails)."""
import json
import os

import numpy as np

from common import Checks, fixture_files_problems, run

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.environ.get("POSENC_VLLM_FIXTURES") or os.path.join(HERE, "..", "fixtures", "vllm")

# what each cache is, from the model's config (not from the manifest): scaling, base, factor,
# original context (YaRN / llama3), rotary dim, magnitude (None: 1), vLLM class
EXPECT = {
    "llama2_7b": ("none", 10000, 1, None, 128, None, "RotaryEmbedding"),
    "qwen2_7b": ("none", 1e6, 1, None, 128, None, "RotaryEmbedding"),
    "longchat_7b_16k": ("linear", 10000, 8, None, 128, None, "LinearScalingRotaryEmbedding"),
    # dynamic NTK factor 2, L0 32768: vLLM's cache is the NTK base at length 2 * 32768, every row
    "internlm25_7b_chat": ("none", np.float32(1e6 * 3 ** (128 / 126)), 1, None, 128, None,
                           "DynamicNTKScalingRotaryEmbedding"),
    "qwen25_7b_yarn": ("yarn", 1e6, 4, 32768, 128, 1 + 0.1 * np.log(4), "YaRNScalingRotaryEmbedding"),
    "yarn_mistral_7b_128k": ("yarn", 10000, 16, 8192, 128, 1 + 0.1 * np.log(16), "YaRNScalingRotaryEmbedding"),
    # mscale = mscale_all_dim = 0.707: DeepSeek's ratio is 1
    "deepseek_v2_lite": ("yarn", 10000, 40, 4096, 64, None, "DeepseekScalingRotaryEmbedding"),
    "llama31_8b": ("llama3", 500000, 8, 8192, 128, None, "Llama3RotaryEmbedding"),
    "llama32_1b": ("llama3", 500000, 32, 8192, 64, None, "Llama3RotaryEmbedding"),
    "phi3_mini_128k_short": ("longrope", 10000, None, None, 96, np.sqrt(1 + np.log(32) / np.log(4096)),
                             "Phi3LongRoPEScaledRotaryEmbedding"),
    "phi3_mini_128k_long": ("longrope", 10000, None, None, 96, np.sqrt(1 + np.log(32) / np.log(4096)),
                            "Phi3LongRoPEScaledRotaryEmbedding"),
    "phi2": ("none", 10000, 1, None, 32, None, "RotaryEmbedding"),
    "gpt_neox_20b": ("none", 10000, 1, None, 24, None, "RotaryEmbedding"),
    "qwen2_vl_7b": ("none", 1e6, 1, None, 128, None, "MRotaryEmbedding"),
}
NOT_BIT_EXACT = {"phi3_mini_128k_short": "per-pair factors measured from 512 rows, not the config's list",
                 "phi3_mini_128k_long": "per-pair factors measured from 512 rows, not the config's list"}
# deviations planted with vLLM's own code and knobs: file -> words that must name it
PLANTED = {
    # rope_parameters apply_yarn_scaling False: YaRNScalingRotaryEmbedding's mscale is attn_factor alone
    "planted_qwen25_yarn_no_yarn_scaling": "magnitude 1 where the config's yarn gives 1.13863: the attention factor "
                                           "was dropped",
}
# --config verdicts other than a plain bit-for-bit match: the real vLLM / HF differences
CONFIG_WORDS = {
    "internlm25_7b_chat": "the config's dynamic NTK at sequence length 65536",
    "phi3_mini_128k_long": "holds the config's long factors at every position: vLLM's choice",
}


def config_of(entry):
    """the config.json beside the fixtures for a manifest entry (the bf16 copy names its model)"""
    return os.path.join(FIX, "configs", entry.get("config", entry["name"]) + ".json")


def main():
    t = Checks()
    manifest = json.load(open(os.path.join(FIX, "manifest.json")))
    bad, unlisted = fixture_files_problems(FIX, manifest)
    t.check(not bad and not unlisted,
            f"{len(manifest['files'])} fixture files, each sha256 the manifest's (vLLM's rotary code, torch "
            f"{manifest['producer']['torch']})" + (": " + ", ".join(bad[:5]) if bad else "")
            + (f"; unlisted {unlisted}" if unlisted else ""))
    srcs = manifest["producer"]["sources"]
    fixtures = {f: e for e in manifest["fixtures"] for f in e["files"]}
    models = {e["name"] for e in manifest["fixtures"]}
    t.check(len(models) >= 12 and all(len(s["commit"]) == 40 and len(s["sha256"]) == 64 for s in srcs.values()),
            f"{len(models)} fixtures from real model configs; {len(srcs)} vLLM files each with its commit and sha256")
    for name, (scaling, base, factor, L0, R, mag, cls) in EXPECT.items():
        cache = os.path.join(FIX, name + "_cache.npy")
        e = fixtures.get(name + "_cache.npy")
        t.check(e is not None and e["class"] == cls and (DIR + e["module"]) in srcs,
                f"{name}: built by vLLM's {cls} ({e and e['module']} at {e and srcs[DIR + e['module']]['commit'][:8]})")
        rc, out, err = run("rope", "identify", cache, "--json")
        if not t.check(rc == 0, f"{name}: identify exits 0" + (f" ({err.strip()})" if rc else "")):
            continue
        j = json.loads(out)
        got = (j["layout"], j["rotary_dim"], j["scaling"])
        ok = got == ("vllm", R, scaling) and abs(j["base"] - base) <= 1e-7 * base and j["offset"] == 0
        if factor is not None:
            ok = ok and abs(j["factor"] - factor) < 1e-9
        if L0 is not None:
            ok = ok and j["original_max_position"] == L0
        want_mag = mag if mag is not None else 1.0
        ok = ok and abs(j["magnitude"] - want_mag) < 2e-6 * want_mag
        exact = j["residual"]["hf-f32"]["differ"] == 0 and j["arithmetic"] == "hf-f32"
        what = (f"{name}: vllm layout, R {j['rotary_dim']}, {j['scaling']} base {j['base']:g} factor {j['factor']:g}"
                f" L0 {j['original_max_position']}, magnitude {j['magnitude']:.6g}, best {j['arithmetic']} "
                f"({j['residual']['hf-f32']['differ']} of {j['values']} values differ)")
        if name in NOT_BIT_EXACT:
            t.check(ok and j["arithmetic"] == "hf-f32", what + f"; not bit for bit by design: {NOT_BIT_EXACT[name]}")
            t.check("longrope_base" in j["ambiguous"], f"{name}: says the base and the per-pair list trade off")
        else:
            t.check(ok and exact, what)
        rc, text, err = run("rope", "identify", cache, "--config", config_of(e))
        verdict = text[text.find("against"):]
        matches = "matches the config bit for bit in HF's float32 arithmetic" in text
        if name in CONFIG_WORDS:
            words = CONFIG_WORDS[name]
            t.check(rc == 0 and words in text, f"{name}: with --config: names '{words}'"
                    + ("" if words in text else f" (got: {verdict[:400]}{err})"))
            if name == "internlm25_7b_chat":
                t.check(not matches and "bit for bit in HF's float32 arithmetic at that length" in text,
                        f"{name}: the cache is that table bit for bit (HF float32 arithmetic at length 65536)")
            else:
                t.check(matches, f"{name}: and matches the config's long list bit for bit")
        else:
            t.check(rc == 0 and matches and verdict.count("\n  - ") == 0,
                    f"{name}: with --config: matches the config bit for bit in HF's float32 arithmetic"
                    + ("" if matches else f" (got: {verdict[:400]}{err})"))
    for name, words in PLANTED.items():
        e = fixtures[name + "_cache.npy"]
        rc, text, err = run("rope", "identify", os.path.join(FIX, name + "_cache.npy"), "--config", config_of(e))
        t.check(rc == 0 and words in text and "matches the config" not in text,
                f"{name} ({e['planted']}): named: '{words}'" + ("" if words in text else f" (got: {text}{err})"))
    # the bf16 cache vLLM builds for a bf16 checkpoint (get_rope's dtype = the model's)
    path = os.path.join(FIX, "llama31_8b_bf16_cache.npy")
    a = np.load(path)
    f32 = np.load(os.path.join(FIX, "llama31_8b_cache.npy"))
    b = np.ascontiguousarray(f32).view(np.uint32).astype(np.uint64)
    rne = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    t.check(a.dtype == np.uint16 and a.shape == f32.shape and np.array_equal(a, rne),
            "llama31_8b_bf16: vLLM's bf16 cache is its float32 cache rounded to nearest even (cache.to(dtype))")
    rc, text, err = run("rope", "identify", path, "--bf16", "--config", config_of(fixtures["llama31_8b_bf16_cache.npy"]))
    t.check(rc == 0 and "matches the config bit for bit in HF's float32 arithmetic, rounded to bf16" in text,
            "llama31_8b_bf16: matches the config in HF's float32 arithmetic, rounded to bf16"
            + ("" if "rounded to bf16" in text else f" (got: {text[text.find('against'):]}{err})"))
    t.finish()


DIR = "vllm/model_executor/layers/rotary_embedding/"

if __name__ == "__main__":
    main()
