#!/usr/bin/env python3
"""Qwen3-VL and Qwen3-VL-MoE configs read as transformers reads them (families qwen3_vl / qwen3_vl_moe).

Fixtures: tests/fixtures/models/qwen3_vl_8b.json and qwen3_vl_30b_a3b.json (PROVENANCE.md there).

- `rope explain --config` (text and JSON): family, head 128, base 5e6, layer count, sections 24/20/20,
  interleaved, and the leftover pairs 61-62 (HF: t; llama.cpp IMROPE: a 4th stream, 0 for text);
- HF's cos/sin for text tokens (t = h = w = p), written below from transformers' Qwen3VLTextRotaryEmbedding
  (default inv_freq, the batched float32 product of inv_freq and the three position rows,
  apply_interleaved_mrope, cat, cos/sin) and run in torch 1.13, against `rope apply --config --torch-compat`
  rotating a unit input (out = cos | sin exactly): tolerance 0 (posenc's torch-compat mode reproduces HF's
  float32 steps; with every stream at p the interleave picks the same product for every pair);
- the same HF formula with vision-style positions (t, h, w differ) against `rope apply --mrope S
  --mrope-kind interleaved --positions P --torch-compat`, S and the kind taken from the config's JSON: tolerance
  0; and against contiguous sections (Qwen2-VL's kind) the pairs HF interleaves differ (the check can fail);
- `rope apply --config` alone: [3, T] positions take the config's sections and kind (HF bit for bit, the note
  names the flags), one position per token is plain RoPE (the note says so), float16 with [3, T] positions is
  refused; Qwen2-VL's config with [3, T] positions equals `--mrope 16,24,24`;
- HF's class rules: the composite model_type reads text_config only (a top-level rope_theta is not read),
  top-level position keys without text_config are refused by name, {"model_type": ...} alone gives the class
  defaults (rope_theta 5e6, mrope_section [24, 20, 20] listed as defaults), mrope_interleaved false is refused
  (HF interleaves whatever it says), sections that do not cover the head are refused;
- GGUF qwen3vl (llama.cpp IMROPE): sections read and interleaved; without rope.dimension_sections refused."""
import json
import os
import sys

import numpy as np
import torch

from common import Checks, run, tmpdir, torch_math_library
torch_math_library(torch)  # torch-compat computes exp/sin/cos as this torch does (MKL VML on x86-64)

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "fixtures", "models")
FIXTURES = {"qwen3_vl_8b": ("qwen3_vl", "qwen3_vl_text", 36), "qwen3_vl_30b_a3b": ("qwen3_vl_moe", "qwen3_vl_moe_text", 48)}


def hf_cos_sin(base, head_dim, sections, position_ids):
    """transformers' Qwen3VLTextRotaryEmbedding (rope_type default) in torch 1.13 float32.
    position_ids: int64 [3, B, T] (t, h, w rows). Returns cos, sin [B, T, head_dim]."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).to(dtype=torch.float) / head_dim))
    inv_exp = inv_freq[None, None, :, None].float().expand(3, position_ids.shape[1], -1, 1)
    pos_exp = position_ids[:, :, None, :].float()
    freqs = (inv_exp.float() @ pos_exp.float()).transpose(2, 3)  # [3, B, T, D/2]
    out = freqs[0]  # T everywhere, then H at 1, 4, .. < 3 s1 and W at 2, 5, .. < 3 s2
    for dim, offset in ((1, 1), (2, 2)):
        idx = slice(offset, sections[dim] * 3, 3)
        out[..., idx] = freqs[dim, ..., idx]
    emb = torch.cat((out, out), dim=-1)
    return emb.cos() * 1.0, emb.sin() * 1.0


def unit_input(path, tokens, head_dim):
    x = np.zeros((tokens, 1, head_dim), np.float32)
    x[:, :, : head_dim // 2] = 1.0  # rotate_half: out = cos | sin exactly
    np.save(path, x)


def write(d, name, body):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump(body, f)
    return path


def main():
    t = Checks()
    d = tmpdir()
    for name, (family, text_type, layers) in FIXTURES.items():
        path = os.path.join(MODELS, name + ".json")
        rc, text, err = run("rope", "explain", "--config", path)
        want = [f"architecture: {text_type} -- read with posenc's '{family}' family rules", "base (rope_theta): 5000000",
                "head: 128 channels; rotated: channels 0..127 (64 pairs)",
                "M-RoPE sections (pairs per t/h/w axis): 24, 20, 20, interleaved (Qwen3-VL): h at pairs 1, 4, .. < 60, "
                "w at 2, 5, .. < 60, t at the others",
                "M-RoPE leftover pairs: 61-62 (past 3 x the sections): HF's apply_interleaved_mrope keeps them on t; "
                "llama.cpp's IMROPE reads them from a 4th stream, 0 for text tokens", f"layers ({layers}):"]
        missing = [w for w in want if w not in text]
        t.check(rc == 0 and not missing, f"{name}: explain: {family} family, head 128, base 5e6, {layers} layers, "
                                         f"sections 24/20/20 interleaved, leftover pairs 61-62"
                + (f" (missing: {missing}; {err.strip()})" if missing else ""))
        rc, out, err = run("rope", "explain", "--config", path, "--json")
        j = json.loads(out) if rc == 0 else {}
        r = (j.get("ropes") or [{}])[0]
        t.check(rc == 0 and j.get("family") == family and not j.get("assumed") and r.get("base") == 5e6
                and r.get("mrope_sections") == [24, 20, 20] and r.get("mrope_interleaved") is True
                and r.get("rotary_dim") == 128 and len(j.get("layers", [])) == layers,
                f"{name}: explain --json: family {j.get('family')}, base {r.get('base')}, sections "
                f"{r.get('mrope_sections')}, interleaved {r.get('mrope_interleaved')}, {len(j.get('layers', []))} layers")
        sections, kind = r.get("mrope_sections", [24, 20, 20]), "interleaved" if r.get("mrope_interleaved") else "sections"
        # HF's text-token cos/sin (t = h = w = p) against rope apply --config --torch-compat
        for start in (0, 261888):
            T = 256
            x = os.path.join(d, "unit.npy")
            unit_input(x, T, 128)
            y = os.path.join(d, f"{name}_{start}.npy")
            rc, _, err = run("rope", "apply", "--config", path, "--in", x, "--torch-compat", "--start", start, "-o", y)
            pos = torch.arange(start, start + T, dtype=torch.int64)[None, None, :].expand(3, 1, T)
            cos, sin = hf_cos_sin(5e6, 128, [24, 20, 20], pos)
            want = np.concatenate([cos[0, :, :64].numpy(), sin[0, :, :64].numpy()], axis=-1)
            got = np.load(y)[:, 0, :] if rc == 0 else None
            differ = int((got.view(np.uint32) != want.view(np.uint32)).sum()) if got is not None else -1
            t.check(rc == 0 and differ == 0,
                    f"{name}: HF text-token cos/sin (t = h = w = p, positions {start}..{start + T - 1}) = rope apply "
                    f"--config --torch-compat bit for bit ({want.size} values, {differ} differ)" + (err.strip() if rc else ""))
        # vision-style positions: t, h, w differ; the config's sections and kind drive posenc's multi-axis apply
        T = 48
        rng = np.random.default_rng(3)
        p3 = np.stack([np.arange(T) + 5, 5 + rng.integers(0, 7, T), 5 + rng.integers(0, 9, T)]).astype(np.int64)
        pfile = os.path.join(d, "p3.npy")
        np.save(pfile, p3)
        x = os.path.join(d, "unit48.npy")
        unit_input(x, T, 128)
        cos, sin = hf_cos_sin(5e6, 128, sections, torch.from_numpy(p3)[:, None, :])
        want = np.concatenate([cos[0, :, :64].numpy(), sin[0, :, :64].numpy()], axis=-1)
        for k in (kind, "sections"):
            y = os.path.join(d, f"{name}_mrope_{k}.npy")
            rc, _, err = run("rope", "apply", "--config", path, "--in", x, "--torch-compat", "--mrope",
                             ",".join(map(str, sections)), "--mrope-kind", k, "--positions", pfile, "-o", y)
            got = np.load(y)[:, 0, :] if rc == 0 else None
            bad = (got.view(np.uint32) != want.view(np.uint32)).any(axis=0) if got is not None else None
            pairs = sorted({int(c) % 64 for c in np.nonzero(bad)[0]}) if bad is not None else None
            if k == kind:
                t.check(rc == 0 and pairs == [],
                        f"{name}: HF cos/sin at vision-style positions (t, h, w differ) = rope apply --mrope "
                        f"{sections} --mrope-kind {k} --torch-compat bit for bit (pairs off: {pairs}) {err.strip()}")
            else:  # contiguous sections put other pairs on h/w: the interleave is what HF does
                t.check(rc == 0 and pairs and len(pairs) > 20,
                        f"{name}: contiguous sections instead (Qwen2-VL's kind) differ from HF at {len(pairs or [])} "
                        f"pairs: the interleave is checked")
        # the config's own M-RoPE, no --mrope: [3, T] positions take its sections and kind by themselves
        y = os.path.join(d, f"{name}_mrope_config.npy")
        rc, _, err = run("rope", "apply", "--config", path, "--in", x, "--torch-compat", "--positions", pfile, "-o", y)
        got = np.load(y)[:, 0, :] if rc == 0 else None
        differ = int((got.view(np.uint32) != want.view(np.uint32)).sum()) if got is not None else -1
        said = f"as --mrope {','.join(map(str, sections))} --mrope-kind {kind}"
        t.check(rc == 0 and differ == 0 and said in err,
                f"{name}: rope apply --config with [3, T] positions and no --mrope = HF at vision-style positions bit "
                f"for bit ({differ} of {want.size} differ), saying '{said}': {err.strip()[:200]}")
        rc, _, err = run("rope", "apply", "--config", path, "--in", x, "--torch-compat", "-o", y)
        t.check(rc == 0 and "which is plain RoPE (text tokens)" in err and "--positions as int [3, T]" in err,
                f"{name}: rope apply --config with one position per token says it is plain RoPE for text tokens and "
                f"how to give image/video positions: {err.strip()[:200]}")
        x16 = os.path.join(d, "unit48_f16.npy")
        np.save(x16, np.load(x).astype(np.float16))
        y16 = os.path.join(d, f"{name}_mrope_f16.npy")
        rc, _, err = run("rope", "apply", "--config", path, "--in", x16, "--positions", pfile, "-o", y16)
        t.check(rc == 2 and "rotates float32 input" in err and "note" not in err and not os.path.exists(y16),
                f"{name}: float16 input with [3, T] positions refused (multi-axis RoPE is float32): exit {rc}, "
                f"{err.strip()[:160]}")
    # Qwen2-VL's config (contiguous sections) takes [3, T] positions the same way: = --mrope 16,24,24
    path2 = os.path.join(MODELS, "qwen2_vl_7b.json")
    y_own, y_flag = os.path.join(d, "qwen2_vl_own.npy"), os.path.join(d, "qwen2_vl_flag.npy")
    rc1, _, err1 = run("rope", "apply", "--config", path2, "--in", x, "--positions", pfile, "-o", y_own)
    rc2, _, err2 = run("rope", "apply", "--config", path2, "--in", x, "--positions", pfile, "--mrope", "16,24,24", "-o",
                       y_flag)
    same = rc1 == 0 and rc2 == 0 and np.array_equal(np.load(y_own).view(np.uint32), np.load(y_flag).view(np.uint32))
    t.check(same and "as --mrope 16,24,24 --mrope-kind sections" in err1,
            f"qwen2_vl_7b: [3, T] positions with --config alone = --mrope 16,24,24 bit for bit: {err1.strip()[:160]}")
    # HF's class rules
    text_cfg = json.load(open(os.path.join(MODELS, "qwen3_vl_8b.json")))["text_config"]
    cases = [
        ("top-level rope_theta beside text_config is not read (Qwen3VLConfig passes text_config alone)",
         {"model_type": "qwen3_vl", "rope_theta": 10000, "hidden_size": 64, "text_config": text_cfg}, 0,
         ["base (rope_theta): 5000000", "layers (36)", "top-level rope_theta"]),
        ("[H13] composite without text_config but with position keys: refused naming them",
         {"model_type": "qwen3_vl", "rope_theta": 10000, "max_position_embeddings": 4096}, 1,
         ["qwen3_vl config without text_config", "rope_theta", "give the text_config"]),
        ("composite alone: the class defaults (rope_theta 5e6, sections 24/20/20, 32 layers, head 128)",
         {"model_type": "qwen3_vl"}, 0,
         ["base (rope_theta): 5000000", "mrope_section=[24, 20, 20]", "layers (32)", "head: 128 channels"]),
        ("qwen3_vl_moe_text alone: MoE class defaults (hidden 2048 / 16 heads = head 128, 24 layers)",
         {"model_type": "qwen3_vl_moe_text"}, 0, ["base (rope_theta): 5000000", "layers (24)", "head: 128 channels"]),
        ("[H13] mrope_interleaved false: refused (HF interleaves whatever it says)",
         dict(text_cfg, rope_scaling={"mrope_interleaved": False, "mrope_section": [24, 20, 20], "rope_type": "default"}),
         1, ["'mrope_interleaved' is false", "interleaves the sections whatever this key says"]),
        ("[H13] sections that do not cover the head: refused",
         dict(text_cfg, rope_scaling={"mrope_interleaved": True, "mrope_section": [24, 20, 16], "rope_type": "default"}),
         1, ["'mrope_section' [24, 20, 16] adds up to 60 pairs, the rotated head has 64"]),
        ("rope_parameters (transformers 5) with rope_theta inside",
         dict({k: v for k, v in text_cfg.items() if k not in ("rope_scaling", "rope_theta")},
              rope_parameters={"mrope_interleaved": True, "mrope_section": [24, 20, 20], "rope_type": "default",
                               "rope_theta": 5000000}), 0, ["base (rope_theta): 5000000", "interleaved (Qwen3-VL)"]),
    ]
    for i, (what, body, want_rc, words) in enumerate(cases):
        rc, out, err = run("rope", "explain", "--config", write(d, f"case{i}.json", body))
        got = out + err
        missing = [w for w in words if w not in got]
        t.check(rc == want_rc and not missing, f"{what} (exit {rc})" + (f"; missing {missing}: {got[:300]}" if missing else ""))
    # GGUF qwen3vl: llama.cpp IMROPE
    sys.path.insert(0, HERE)
    from test_model_coverage import gguf
    for arch in ("qwen3vl", "qwen3vlmoe"):
        g = os.path.join(d, arch + ".gguf")
        with open(g, "wb") as f:
            f.write(gguf(arch, {"rope.dimension_sections": [12, 10, 10, 0]}))
        rc, out, err = run("rope", "explain", "--config", g, "--json")
        r = (json.loads(out).get("ropes") or [{}])[0] if rc == 0 else {}
        t.check(rc == 0 and r.get("mrope_sections") == [12, 10, 10] and r.get("mrope_interleaved") is True
                and r.get("layout") == "half",
                f"GGUF {arch}: sections {r.get('mrope_sections')}, interleaved {r.get('mrope_interleaved')} (IMROPE)")
        with open(g, "wb") as f:
            f.write(gguf(arch, {}))
        rc, out, err = run("rope", "explain", "--config", g)
        t.check(rc == 1 and "no " + arch + ".rope.dimension_sections" in err,
                f"[G13] GGUF {arch} without rope.dimension_sections: refused (llama.cpp requires them): {err.strip()[:120]}")
    t.finish()


if __name__ == "__main__":
    main()
