#!/usr/bin/env python3
"""Build vLLM's own cos/sin caches for the fixtures in tests/fixtures/vllm and compare (or --write).

    .venv/bin/python tests/vllm/regenerate.py --vllm-src /tmp/vllm_src [--write]

--vllm-src is a folder holding vLLM's files, unmodified, at their paths in the vLLM
repository (vllm/model_executor/layers/rotary_embedding/*.py: the ones in SOURCES below,
each at the commit recorded there). vLLM itself is not installed and is never committed here.

What runs is vLLM's code: its `get_rope` (rotary_embedding/__init__.py) picks the class and
its arguments, and the class's own `_compute_inv_freq` / `_compute_cos_sin_cache` build the
cache in torch (Debian's torch 1.13, CPU, float32). Stubbed, because they cannot import
without vLLM's package and do not touch the cache's numbers:
  - vllm.model_executor.custom_op.CustomOp: a plain torch.nn.Module with `register` (a
    no-op class decorator) and `enabled()` (False: no custom kernel);
  - vllm.platforms / vllm.backends.platform `current_platform`: a CPU platform (is_cuda,
    is_rocm, is_tpu False; device_type "cpu"), so DeepSeek's cache is built on the CPU;
  - vllm._aiter_ops.rocm_aiter_ops (ROCm kernels: off), vllm.utils.flashinfer.has_flashinfer
    (False), vllm.backends.compute.dsl.triton_utils (triton.jit as identity: mrope.py's kernel
    is defined, never run);
  - vllm.config.get_current_vllm_config(): a model_config whose max_model_len is the model's
    max_position_embeddings (vLLM's default max_model_len); only Phi-3's LongRoPE reads it;
  - common.ApplyRotaryEmb: the apply-time CustomOp that base.py (at its recorded commit)
    constructs after the cache is built; the stored common.py predates it;
  - the rotary modules get_rope imports but no fixture uses (dual_chunk_rope,
    dynamic_ntk_alpha_rope, llama4_vision_rope, ntk_scaling_rope, xdrope, openpangu_rope):
    placeholder classes that raise if constructed.

For each model config in tests/fixtures/vllm/configs this derives get_rope's arguments the
way vLLM's model code and config patching do (rules per field in `derive`), calls get_rope
and saves the first ROWS rows of the module's cos_sin_cache ([T, R] = cat(cos, sin), float32,
the dtype a float32 model gets). Phi-3's module keeps `long_short_cos_sin_cache` (short rows
0..L0-1, then long): both halves are saved. llama31_8b_bf16 is the same get_rope call with
dtype bfloat16 (what a bf16 checkpoint gets: vLLM builds models under the checkpoint's
default dtype), stored as the raw bf16 bits (uint16).
"""
import argparse
import hashlib
import importlib
import json
import os
import shutil
import sys
import tempfile
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "fixtures", "vllm")
ROWS = 512
PKG = "vllm.model_executor.layers.rotary_embedding"
DIR = "vllm/model_executor/layers/rotary_embedding/"
# the stored versions read (vLLM cannot be fetched whole here; each file is the one version
# the code index holds, with the commit it came from)
SOURCES = {
    DIR + "__init__.py": "07b12f1b16d5568eeb29a52fd8c9296a51f478ed",
    DIR + "base.py": "072d10a084c2b89e63323c781eacd7d7e218ba2b",
    DIR + "common.py": "1593f0c1de61ba1e6efb9315ac8d0a3d2fe14cdd",
    DIR + "linear_scaling_rope.py": "0f17ee061e413bf8ab7927f926f69cdff24dc63e",
    DIR + "dynamic_ntk_scaling_rope.py": "50feac95f9e53a97d6ed27fee6bfe3b163d18594",
    DIR + "yarn_scaling_rope.py": "ffdc985737c94233f2c88629c4450022e5bf4925",
    DIR + "deepseek_scaling_rope.py": "7bc8d408139110c389bea6028e9fdfadb1eb7641",
    DIR + "llama3_rope.py": "045d7575500e01e0f4a7ff84e039a9f7f7dc3bd0",
    DIR + "phi3_long_rope_scaled_rope.py": "17d618b0f944610b73e79e6726983fbe7679f613",
    DIR + "mrope.py": "055e47c28003156421365af985d676fc921cb075",
}
UNUSED = {"dual_chunk_rope": "DualChunkRotaryEmbedding", "dynamic_ntk_alpha_rope": "DynamicNTKAlphaRotaryEmbedding",
          "llama4_vision_rope": "Llama4VisionRotaryEmbedding", "ntk_scaling_rope": "NTKScalingRotaryEmbedding",
          "xdrope": "XDRotaryEmbedding", "openpangu_rope": "MRotaryEmbeddingInterleaved"}


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def stub_vllm(src, max_model_len):
    """sys.modules entries for the parts of vLLM that cannot import here (see the docstring);
    the rotary_embedding package itself is a real package whose files are vLLM's"""
    import torch

    for name in list(sys.modules):
        if name == "vllm" or name.startswith("vllm."):
            del sys.modules[name]

    def mod(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    class CustomOp(torch.nn.Module):
        @classmethod
        def register(cls, name):
            return lambda c: c

        @classmethod
        def enabled(cls):
            return False

    class Platform:
        device_type = "cpu"

        def is_cuda(self):
            return False

        def is_rocm(self):
            return False

        def is_tpu(self):
            return False

    class Aiter:
        @staticmethod
        def is_triton_rotary_embed_enabled():
            return False

    class Triton:
        @staticmethod
        def jit(f):
            return f

    vllm_config = types.SimpleNamespace(model_config=types.SimpleNamespace(max_model_len=max_model_len))
    for name in ("vllm", "vllm.model_executor", "vllm.model_executor.layers", "vllm.utils", "vllm.backends",
                 "vllm.backends.compute", "vllm.backends.compute.dsl"):
        mod(name, __path__=[])
    mod("vllm.model_executor.custom_op", CustomOp=CustomOp)
    mod("vllm.platforms", current_platform=Platform())
    mod("vllm.backends.platform", current_platform=Platform())
    mod("vllm._aiter_ops", rocm_aiter_ops=Aiter())
    mod("vllm.utils.flashinfer", has_flashinfer=lambda: False)
    mod("vllm.backends.compute.dsl.triton_utils", triton=Triton(), tl=types.SimpleNamespace(constexpr=int))
    mod("vllm.config", get_current_vllm_config=lambda: vllm_config)
    pkg = mod(PKG, __path__=[os.path.join(src, DIR)], __package__=PKG)
    pkg.__file__ = os.path.join(src, DIR, "__init__.py")

    def unused(cls):
        def init(self, *a, **k):
            raise RuntimeError(cls + " is not loaded by tests/vllm/regenerate.py")
        return type(cls, (), {"__init__": init})

    for m, cls in UNUSED.items():
        mod(PKG + "." + m, **{cls: unused(cls)})
    common = importlib.import_module(PKG + ".common")

    class ApplyRotaryEmb:  # apply-time op (see the docstring); never called here
        def __init__(self, **kw):
            self.kw = kw

    common.ApplyRotaryEmb = ApplyRotaryEmb
    # now run vLLM's rotary_embedding/__init__.py itself as the package body (get_rope)
    code = compile(open(pkg.__file__).read(), pkg.__file__, "exec")
    exec(code, pkg.__dict__)
    return pkg


def text(cfg):
    return cfg.get("text_config", cfg)


def derive(name, cfg):
    """get_rope's arguments for this model, as vLLM's model code passes them"""
    c = text(cfg)
    mt = c["model_type"]
    how = {}
    head = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    how["head_size"] = "head_dim, else hidden_size / num_attention_heads"
    if mt in ("deepseek_v2", "deepseek_v3"):
        head = c["qk_rope_head_dim"]
        how["head_size"] = "qk_rope_head_dim (deepseek_v2.py: get_rope(qk_rope_head_dim, ...))"
    rp = {"rope_theta": c.get("rope_theta", c.get("rotary_emb_base", 10000))}
    how["rope_theta"] = "rope_theta (gpt_neox: rotary_emb_base), default 10000"
    rs = dict(c.get("rope_scaling") or {})
    if rs:
        t = rs.pop("rope_type", None) or rs.pop("type")
        rs.pop("type", None)
        rp["rope_type"] = t
        rp.update(rs)
        how["rope_type"] = "rope_scaling's rope_type (legacy key: type); the other rope_scaling keys copied"
    else:
        rp["rope_type"] = "default"
    if rp["rope_type"] == "mrope":
        rp["rope_type"] = "default"
        how["rope_type"] = "vLLM's config patch: rope type 'mrope' is 'default' with mrope_section"
    if rp["rope_type"] == "longrope" and "original_max_position_embeddings" not in rp:
        rp["original_max_position_embeddings"] = c["original_max_position_embeddings"]
        how["original_max_position_embeddings"] = "the config's top-level field (Phi-3), copied in by vLLM's patch"
    if mt in ("deepseek_v2", "deepseek_v3") and rp["rope_type"] != "default":
        rp["rope_type"] = "deepseek_yarn"
        how["rope_type"] = "deepseek_v2.py: any scaled rope_type becomes 'deepseek_yarn'"
    prf = c.get("partial_rotary_factor", c.get("rotary_pct"))
    if prf is not None:
        rp["partial_rotary_factor"] = prf
        how["partial_rotary_factor"] = "partial_rotary_factor (gpt_neox: rotary_pct)"
    neox = mt not in ("deepseek_v2", "deepseek_v3")
    how["is_neox_style"] = "True; deepseek_v2.py passes False (interleaved pairs; the cache is the same)"
    return dict(name=name, model_type=mt, head_size=head, max_position=c["max_position_embeddings"],
                is_neox_style=neox, rope_parameters=rp, dtype="float32", how=how)


def build(src, e):
    import torch

    stub_vllm(src, e["max_position"])
    pkg = sys.modules[PKG]
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[e["dtype"]]
    m = pkg.get_rope(e["head_size"], e["max_position"], e["is_neox_style"], e["rope_parameters"], dtype)
    e["class"] = type(m).__name__
    e["module"] = type(m).__module__.split(".")[-1] + ".py"
    if hasattr(m, "long_short_cos_sin_cache"):
        full = m.long_short_cos_sin_cache
        L0 = m.original_max_position_embeddings
        e["cache_rows"] = int(full.shape[0])
        e["use_long_rope"] = bool(m.use_long_rope)
        e["short_mscale"], e["long_mscale"] = float(m.short_mscale), float(m.long_mscale)
        return {"short": full[:ROWS], "long": full[L0:L0 + ROWS]}
    e["cache_rows"] = int(m.cos_sin_cache.shape[0])
    e["rotary_dim"] = int(m.rotary_dim)
    if hasattr(m, "mscale"):
        e["mscale"] = float(m.mscale)
    return {"": m.cos_sin_cache[:ROWS]}


def save(path, t):
    import torch

    if t.dtype == torch.bfloat16:
        a = t.contiguous().view(torch.int16).numpy().view(np.uint16)
    else:
        a = t.contiguous().numpy()
    np.save(path, np.ascontiguousarray(a))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vllm-src", required=True, help="folder with vLLM's files at their repository paths")
    ap.add_argument("--write", action="store_true", help="rewrite the fixtures and manifest.json")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    srcs = {}
    for path, commit in SOURCES.items():
        p = os.path.join(a.vllm_src, path)
        if not os.path.exists(p):
            sys.exit("missing vLLM file %s (read it at commit %s)" % (p, commit))
        srcs[path] = dict(commit=commit, sha256=sha(p))
    names = sorted(n[:-5] for n in os.listdir(os.path.join(FIX, "configs")) if n.endswith(".json"))
    entries = []
    for n in names:
        e = derive(n, json.load(open(os.path.join(FIX, "configs", n + ".json"))))
        entries.append(e)
        if n == "llama31_8b":
            b = json.loads(json.dumps(e))
            b.update(name="llama31_8b_bf16", dtype="bfloat16", config="llama31_8b")
            entries.append(b)
        if n == "qwen25_7b_yarn":  # planted with vLLM's own knob: rope_parameters apply_yarn_scaling False
            b = json.loads(json.dumps(e))
            b["rope_parameters"]["apply_yarn_scaling"] = False
            b.update(name="planted_qwen25_yarn_no_yarn_scaling", config="qwen25_7b_yarn", rows=256,
                     planted="apply_yarn_scaling False: YaRNScalingRotaryEmbedding's mscale is attn_factor (1) alone")
            entries.append(b)
    with tempfile.TemporaryDirectory() as tmp:
        for e in entries:
            for part, t in build(a.vllm_src, e).items():
                fn = e["name"] + ("_" + part if part else "") + "_cache.npy"
                save(os.path.join(tmp, fn), t[:e.get("rows", ROWS)])
                e.setdefault("files", []).append(fn)
        files = {n: sha(os.path.join(tmp, n)) for n in sorted(os.listdir(tmp))}
        manifest = dict(
            producer=dict(repository="vllm-project/vllm", sources=srcs, torch=torch.__version__,
                          numpy=np.__version__, device="cpu, 1 thread", plan="tests/vllm/regenerate.py"),
            rows=ROWS, files=files, fixtures=entries)
        if a.write:
            for n in files:
                shutil.copyfile(os.path.join(tmp, n), os.path.join(FIX, n))
            with open(os.path.join(FIX, "manifest.json"), "w") as f:
                json.dump(manifest, f, indent=1)
                f.write("\n")
            print("wrote %d files and manifest.json to %s (torch %s)" % (len(files), FIX, torch.__version__))
            return 0
        old = json.load(open(os.path.join(FIX, "manifest.json")))
        bad = [n for n in files if old["files"].get(n) != files[n]] + [n for n in old["files"] if n not in files]
        for n in bad:
            print("differs: %s" % n)
        srcbad = [p for p in srcs if old["producer"]["sources"].get(p) != srcs[p]]
        for p in srcbad:
            print("vLLM source differs from the recorded one: %s" % p)
        print("%d of %d files bit-identical to the committed ones" % (len(files) - len(bad), len(files)))
        return 1 if bad or srcbad else 0


if __name__ == "__main__":
    sys.exit(main())
