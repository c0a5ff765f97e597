"""ggml's own RoPE on real model configs (tests/fixtures/ggml, made by tests/ggml/ggml_rope_dump.c
against ggml d99724f2 with the parameters llama.cpp derives; no ggml is needed here):

- every committed file's sha256 is the manifest's (a changed byte fails here, by name);
- `posenc rope identify` names each cache: layout ggml, rotary dim, base, scaling and its
  factor / original context, magnitude, and ggml's float32 arithmetic bit for bit (tolerance:
  none; the two caches no fit reproduces bit for bit are said so by name: Phi-3's per-pair
  factors are measured, not known, and Qwen3-VL's IMROPE holds two pairs still);
- with `--config` (the model's config.json fields, committed beside them) each matches the
  config bit for bit in ggml's float32 arithmetic (Qwen3-VL: every pair but 61-62, which llama.cpp's IMROPE
  holds still on its 4th stream where HF keeps them on t: named as the one departure);
- `posenc rope apply --mode ggml` (--mrope for MROPE/IMROPE) rotates the golden input formula
  to ggml's output bit for bit;
- deviations planted with ggml itself (attention factor dropped, no rope_freqs, DeepSeek's
  mscale ignored) and a bf16 copy of a cache are each named against the config.
POSENC_GGML_FIXTURES=DIR reads another copy of the folder (to show a changed byte fails)."""
import json
import os
import sys

import numpy as np

from common import Checks, fixture_files_problems, run, tmpdir

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.environ.get("POSENC_GGML_FIXTURES") or os.path.join(HERE, "..", "fixtures", "ggml")

# what each cache is, from the model's config (not from the manifest): scaling, base, factor,
# original context (YaRN / llama3), rotary dim, magnitude (None: 1), how it must match
EXPECT = {
    "llama2_7b": ("none", 10000, 1, None, 128, None),
    "llama31_8b": ("llama3", 500000, 8, 8192, 128, None),
    "llama32_1b": ("llama3", 500000, 32, 8192, 64, None),
    "qwen2_7b": ("none", 1e6, 1, None, 128, None),
    "qwen25_7b_yarn": ("yarn", 1e6, 4, 32768, 128, 1 + 0.1 * np.log(4)),
    "yarn_mistral_7b_128k": ("yarn", 10000, 16, 8192, 128, 1 + 0.1 * np.log(16)),
    "longchat_7b_16k": ("linear", 10000, 8, None, 128, None),
    "phi2": ("none", 10000, 1, None, 32, None),
    "gpt_neox_20b": ("none", 10000, 1, None, 24, None),
    "codellama_7b": ("none", 1e6, 1, None, 128, None),
    "phi3_mini_128k": ("longrope", 10000, None, None, 96, np.sqrt(1 + np.log(32) / np.log(4096))),
    "deepseek_v2_lite": ("yarn", 10000, 40, 4096, 64, None),
    "gemma_7b": ("none", 10000, 1, None, 256, None),
    "qwen2_vl_7b": ("none", 1e6, 1, None, 128, None),
    "qwen3_vl_8b": ("none", 5e6, 1, None, 128, None),
}
NOT_BIT_EXACT = {"phi3_mini_128k": "per-pair factors measured from 512 rows (within ~1e-6), not the config's list",
                 "qwen3_vl_8b": "pairs 61-62 held still by IMROPE's 4th stream"}
PLANTED = {  # file -> (config, words that must name the deviation)
    "planted_qwen25_yarn_attn_dropped": ("qwen25_7b_yarn", "the attention factor was dropped"),
    "planted_llama31_no_freq_factors": ("llama31_8b", "follow no scaling, the config says llama3 bands"),
    "planted_deepseek_mscale_ignored": ("deepseek_v2_lite", "the config's mscale/mscale_all_dim were ignored"),
}


def bits(a):
    return np.ascontiguousarray(a).view(np.uint32)


def main():
    t = Checks()
    manifest = json.load(open(os.path.join(FIX, "manifest.json")))
    bad, unlisted = fixture_files_problems(FIX, manifest)
    t.check(not bad and not unlisted,
            f"{len(manifest['files'])} fixture files, each sha256 the manifest's (ggml "
            f"{manifest['producer']['commit'][:8]})" + (": " + ", ".join(bad[:5]) if bad else "")
            + (f"; unlisted {unlisted}" if unlisted else ""))
    calls = {e["name"]: e for e in manifest["fixtures"]}
    t.check(len([n for n in calls if n in EXPECT]) == len(EXPECT) >= 12,
            f"{len(EXPECT)} real model configs, each with its ggml call recorded")
    tmp = tmpdir()
    for name, (scaling, base, factor, L0, R, mag) in EXPECT.items():
        cache = os.path.join(FIX, name + "_cache.npy")
        cfg = os.path.join(FIX, "configs", name + ".json")
        rc, out, err = run("rope", "identify", cache, "--json")
        if not t.check(rc == 0, f"{name}: identify exits 0" + (f" ({err.strip()})" if rc else "")):
            continue
        j = json.loads(out)
        got = (j["layout"], j["rotary_dim"], j["scaling"], j["base"])
        ok = got == ("ggml", R, scaling, base) and j["offset"] == 0
        if factor is not None:
            ok = ok and abs(j["factor"] - factor) < 1e-9
        if L0 is not None:
            ok = ok and j["original_max_position"] == L0
        want_mag = mag if mag is not None else 1.0
        ok = ok and abs(j["magnitude"] - want_mag) < 2e-6 * want_mag
        exact = j["residual"]["ggml-f32"]["differ"] == 0 and j["arithmetic"] == "ggml-f32"
        what = (f"{name}: ggml layout, R {j['rotary_dim']}, {j['scaling']} base {j['base']:g} factor {j['factor']:g}"
                f" L0 {j['original_max_position']}, magnitude {j['magnitude']:.6g}, best {j['arithmetic']} "
                f"({j['residual']['ggml-f32']['differ']} of {j['values']} values differ)")
        if name == "qwen3_vl_8b":  # only the sin of pairs 61-62 at rows 1.. (their cos rounds to 1)
            t.check(ok and j["arithmetic"] == "ggml-f32" and j["residual"]["ggml-f32"]["differ"] == 2 * (j["rows"] - 1),
                    what + f"; not bit for bit by design: {NOT_BIT_EXACT[name]}")
        elif name in NOT_BIT_EXACT:
            t.check(ok, what + f"; not bit for bit by design: {NOT_BIT_EXACT[name]}")
        else:
            t.check(ok and exact, what)
        if name == "phi3_mini_128k":
            t.check("longrope_base" in j["ambiguous"], f"{name}: says the base and the per-pair list trade off")
        rc, text, err = run("rope", "identify", cache)
        if name == "qwen3_vl_8b":
            t.check("still pairs: 61-62 hold angle 0" in text and "every other pair is bit for bit in ggml" in text,
                    f"{name}: names IMROPE's still pairs 61-62 (4th stream 0 for text tokens), the rest bit for bit")
            rc, text, err = run("rope", "identify", cache, "--config", cfg)
            words = ("pairs 61-62 hold angle 0 at every row where the config, as HF reads it, turns them",
                     "HF's apply_interleaved_mrope keeps the pairs past the interleaved sections (t/h/w 24/20/20",
                     "llama.cpp's IMROPE takes them from a 4th position stream, 0 for text tokens",
                     "every other pair is the config's bit for bit in ggml's float32 arithmetic")
            t.check(rc == 0 and all(w in text for w in words) and "matches the config" not in text,
                    f"{name}: with --config: names llama.cpp's still pairs 61-62 (IMROPE's 4th stream, 0 for text) "
                    f"where HF keeps them on t, every other pair the config's bit for bit in ggml's float32 "
                    f"arithmetic" + ("" if rc == 0 and all(w in text for w in words)
                                     else f" (got: {text[text.find('against'):][:600]}{err})"))
            rc, out, err = run("rope", "identify", cache, "--config", cfg, "--json")
            j = json.loads(out)["config"] if rc == 0 else {}
            t.check(rc == 0 and j.get("matches") is False and len(j.get("departures", [])) == 1
                    and "pairs 61-62" in j["departures"][0],
                    f"{name}: --json: matches false, one departure naming pairs 61-62")
            # planted: one value of another pair one ULP off; the still pairs are still named, the rest no
            # longer claimed bit for bit (the put-back comparison counts it)
            c = np.load(cache)
            c[100, 20] = np.nextafter(c[100, 20], np.float32(2))
            path = os.path.join(tmpdir(), "qwen3_vl_planted.npy")
            np.save(path, c)
            rc, text, err = run("rope", "identify", path, "--config", cfg)
            t.check(rc == 0 and "pairs 61-62 hold angle 0" in text and "every other pair is the config's" not in text
                    and "with pairs 61-62 put back, 1 values still differ" in text,
                    f"{name}: planted 1-ULP change at pair 10: still pairs named, '1 values still differ' with them "
                    f"put back" + ("" if "still differ" in text else f" (got: {text[text.find('against'):][:400]})"))
            continue
        rc, text, err = run("rope", "identify", cache, "--config", cfg)
        t.check(rc == 0 and "matches the config bit for bit in ggml's float32 arithmetic" in text,
                f"{name}: with --config: matches the config bit for bit in ggml's float32 arithmetic"
                + ("" if rc == 0 and "matches the config" in text else f" (got: {text[text.find('against'):][:300]}{err})"))
        if name == "phi3_mini_128k":
            t.check("holds the config's long factors at every position: llama.cpp's choice" in text,
                    f"{name}: says the cache holds the long factors at every position (llama.cpp's per-context list)")
    # ggml's rotation of the golden input formula, reproduced by posenc rope apply --mode ggml
    for name in EXPECT:
        e = calls[name]
        x = os.path.join(FIX, f"input_d{e['head_dim']}.npy")
        out = os.path.join(tmp, name + ".npy")
        args = ["rope", "apply", "--in", x, "--mode", "ggml", "--layout", "interleaved" if e["mode"] == 0 else "half",
                "-o", out]
        args += ["--config", os.path.join(FIX, "configs", name + ".json"), "--seq-len", 131072]
        if e["sections"]:
            args += ["--mrope", ",".join(map(str, e["sections"])), "--positions",
                     os.path.join(FIX, name + "_positions.npy")]
            if e["mode"] == 40:
                args += ["--mrope-kind", "interleaved"]
        else:
            args += ["--start", manifest["apply"]["pos0"]]
        rc, _, err = run(*args)
        if not t.check(rc == 0, f"{name}: rope apply --mode ggml exits 0" + (f" ({err.strip()})" if rc else "")):
            continue
        mine, theirs = np.load(out), np.load(os.path.join(FIX, name + "_apply.npy"))
        differ = int((bits(mine) != bits(theirs)).sum()) if mine.shape == theirs.shape else -1
        t.check(differ == 0, f"{name}: rope apply --mode ggml{' --mrope' if e['sections'] else ''} = ggml's output "
                             f"bit for bit ({theirs.size} values, {differ} differ)")
    # planted deviations (made by ggml) and a bf16 copy of a cache, named against the config
    for name, (cfg, words) in PLANTED.items():
        rc, text, err = run("rope", "identify", os.path.join(FIX, name + "_cache.npy"), "--config",
                            os.path.join(FIX, "configs", cfg + ".json"))
        t.check(rc == 0 and words in text and "matches the config" not in text,
                f"{name}: named: '{words}'" + ("" if words in text else f" (got: {text[text.find('against'):]}{err})"))
    c = np.load(os.path.join(FIX, "llama2_7b_cache.npy"))
    b = bits(c.astype(np.float32))
    bf16 = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even
    path = os.path.join(tmp, "llama2_bf16.npy")
    np.save(path, bf16)
    rc, text, err = run("rope", "identify", path, "--bf16", "--config", os.path.join(FIX, "configs", "llama2_7b.json"))
    t.check(rc == 0 and "matches the config bit for bit in ggml's float32 arithmetic, rounded to bf16" in text,
            "llama2_7b cache stored in bf16: matches the config in ggml's float32 arithmetic, rounded to bf16"
            + ("" if "rounded to bf16" in text else f" (got: {text[text.find('against'):]}{err})"))
    t.finish()


if __name__ == "__main__":
    main()
