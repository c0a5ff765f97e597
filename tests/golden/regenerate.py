#!/usr/bin/env python3
"""Regenerate the peer goldens from the peers' own code, or check them against it.

Every file in this folder is the output of a public implementation at the commit
manifest.json records for it. This script runs that code again, from a checkout
of the peer you name, and compares (default) or rewrites (--write) the files:

    .venv/bin/python tests/golden/regenerate.py \\
        --checkout tatp22/multidim-positional-encoding=PATH \\
        --checkout facebookresearch/fairseq=PATH \\
        --checkout deepseek-ai/DeepSeek-V3=PATH \\
        --checkout huggingface/transformers=PATH \\
        --checkout pytorch/tutorials=PATH

PATH is a work tree or a bare git folder (`git clone --mirror` / `--bare`); the files
are read at each entry's recorded commit (`git show COMMIT:path`), so one full clone
of a peer serves entries taken at different commits. A work tree without git is read
as it is, and the script says the commit could not be checked.

How each peer is run (the same way the files were first made):
  - HF transformers: the named functions' source text at the commit, taken whole from
    the file by name (ast), executed with torch; the rest of transformers (config
    classes, logging) is replaced by the few attributes the functions read;
  - fairseq: the real module file and fairseq/utils.py, the package __init__ files empty;
  - tatp22, DeepSeek-V3: the module imported unmodified (DeepSeek's triton `kernel`
    import stubbed: the functions used never call it);
  - the PyTorch tutorial: the PositionalEncoding class's source text, unchanged;
  - ggml: not run here (it needs its C harness built against a ggml checkout); the
    ggml_* entries are listed as not regenerated.
Environment of the stored files: manifest.json "environment" (torch 1.13, 1 thread).
Exit status: 0 when every entry run matches (or was written), 1 when one differs or
fails, 2 on bad arguments. Entries of peers without --checkout are counted, not run.
"""
import argparse
import ast
import atexit
import hashlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


class Source:
    """Files of one peer at a given commit: from git (work tree or bare) or from disk."""

    def __init__(self, path):
        self.path = path
        self.is_git = subprocess.run(["git", "-C", path, "rev-parse", "--git-dir"],
                                     capture_output=True).returncode == 0

    def read(self, commit, rel):
        if self.is_git:
            done = subprocess.run(["git", "-C", self.path, "show", f"{commit}:{rel}"], capture_output=True)
            if done.returncode != 0:
                raise RuntimeError(f"{self.path}: cannot read {rel} at {commit[:12]}: "
                                   f"{done.stderr.decode().strip()}")
            return done.stdout.decode()
        with open(os.path.join(self.path, rel), encoding="utf-8") as f:
            return f.read()


def top_level_source(text, names, filename):
    """Source text of the named top-level functions/classes (and class-level methods
    written Class.method) of a Python file, in file order, whole and unchanged."""
    tree = ast.parse(text, filename)
    lines = text.splitlines(keepends=True)
    found, out = set(), []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            out.append("".join(lines[start:node.end_lineno]))
            found.add(node.name)
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                qual = f"{node.name}.{sub.name}" if isinstance(sub, ast.FunctionDef) else None
                if qual in names:
                    start = min([sub.lineno] + [d.lineno for d in sub.decorator_list]) - 1
                    body = "".join(lines[start:sub.end_lineno])
                    indent = len(body) - len(body.lstrip(" "))
                    out.append("".join(ln[indent:] if ln.startswith(" " * indent) else ln
                                       for ln in body.splitlines(keepends=True)))
                    found.add(qual)
    missing = set(names) - found
    if missing:
        raise RuntimeError(f"{filename}: no top-level {', '.join(sorted(missing))}")
    return "\n".join(out)


def input_formula():
    t, h, d = np.meshgrid(np.arange(37.0), np.arange(3.0), np.arange(64.0), indexing="ij")
    return (np.sin(((0.37 * t) + (1.3 * h)) + (0.11 * d)) * (1 + 0.01 * d)).astype(np.float32)


def positions(spec):
    a, b = spec.split("..")
    return list(range(int(a), int(b) + 1))


def zeros_shape(spec):
    """'zeros [1, 10, 16] float32' -> (1, 10, 16)"""
    return tuple(int(v) for v in spec[spec.index("[") + 1:spec.index("]")].split(","))


# ---- HF transformers -----------------------------------------------------------------
class Config:
    """The attributes HF's rope functions read from a config object."""

    def __init__(self, values):
        for k, v in values.items():
            setattr(self, k, v)


def hf_namespace(torch):
    logger = types.SimpleNamespace(warning=lambda *a, **k: None, warning_once=lambda *a, **k: None,
                                   info=lambda *a, **k: None)
    ns = {"torch": torch, "nn": torch.nn, "math": math, "Optional": __import__("typing").Optional,
          "Tuple": __import__("typing").Tuple, "Union": __import__("typing").Union,
          "logger": logger, "PretrainedConfig": object, "is_torch_available": lambda: True,
          "wraps": __import__("functools").wraps}
    return ns


def hf_rope_functions(src, commit, torch):
    text = src.read(commit, "src/transformers/modeling_rope_utils.py")
    names = [n.name for n in ast.parse(text).body
             if isinstance(n, ast.FunctionDef) and n.name.startswith(("_compute_", "dynamic_rope_update"))]
    ns = hf_namespace(torch)
    exec(compile(top_level_source(text, names, "modeling_rope_utils.py"), "modeling_rope_utils.py", "exec"), ns)
    return ns


def run_hf_invfreq(entry, src, torch, cache):
    key = ("rope", entry["producer"]["commit"])
    if key not in cache:
        cache[key] = hf_rope_functions(src, entry["producer"]["commit"], torch)
    ns = cache[key]
    p = entry["params"]
    fn = ns[entry["producer"]["function"]]
    kwargs = {"seq_len": p["seq_len"]} if p.get("seq_len") is not None else {}
    inv_freq, attention_factor = fn(Config(p["config"]), None, **kwargs)
    if "attention_factor" in entry and float(attention_factor) != float(entry["attention_factor"]):
        raise RuntimeError(f"attention_factor {attention_factor!r} != recorded {entry['attention_factor']!r}")
    return inv_freq.numpy()


def entry_by_stem(manifest, stem):
    for e in manifest["entries"]:
        if e["file"] == stem + ".npy":
            return e
    raise RuntimeError(f"manifest has no entry {stem}")


def hf_llama_namespace(entry, manifest, src, torch, cache):
    """LlamaRotaryEmbedding, rotate_half, apply_rotary_pos_emb at the entry's commit, with
    the rope functions of the config case's own commit."""
    commit = entry["producer"]["commit"]
    key = ("llama", commit)
    if key not in cache:
        text = src.read(commit, "src/transformers/models/llama/modeling_llama.py")
        ns = hf_namespace(torch)
        case = entry_by_stem(manifest, entry["params"]["config_case"])
        rope_commit = case["producer"]["commit"]
        if ("rope", rope_commit) not in cache:
            cache[("rope", rope_commit)] = hf_rope_functions(src, rope_commit, torch)
        rope_ns = cache[("rope", rope_commit)]
        table = {n[len("_compute_"):].split("_")[0]: f for n, f in rope_ns.items() if n.startswith("_compute_")}
        table["default"] = rope_ns["_compute_default_rope_parameters"]
        table["linear"] = rope_ns["_compute_linear_scaling_rope_parameters"]
        table["dynamic"] = rope_ns["_compute_dynamic_ntk_parameters"]
        ns["ROPE_INIT_FUNCTIONS"] = table
        if "dynamic_rope_update" in rope_ns:
            ns["dynamic_rope_update"] = rope_ns["dynamic_rope_update"]
        ns["LlamaConfig"] = object
        exec(compile(top_level_source(text, ["LlamaRotaryEmbedding", "rotate_half", "apply_rotary_pos_emb"],
                                      "modeling_llama.py"), "modeling_llama.py", "exec"), ns)
        cache[key] = ns
    return cache[key]


def run_hf_llama(entry, manifest, src, torch, cache):
    ns = hf_llama_namespace(entry, manifest, src, torch, cache)
    p = entry["params"]
    case = entry_by_stem(manifest, p["config_case"] if "config_case" in p else p["rope_config"])
    cfg = dict(case["params"]["config"])
    emb = ns["LlamaRotaryEmbedding"](config=Config(cfg))
    pos = torch.tensor([positions(p["position_ids"])])
    x = torch.zeros(1, len(pos[0]), cfg["head_dim"], dtype=torch.float32)
    fn = entry["producer"]["function"]
    if fn.startswith("LlamaRotaryEmbedding._dynamic"):
        emb(x, pos)
        return emb.inv_freq.numpy()
    cos, sin = emb(x, pos)
    if fn == "LlamaRotaryEmbedding.forward":
        return (cos if "_cos_" in entry["file"] else sin)[0].numpy()
    q = torch.from_numpy(input_formula()).permute(1, 0, 2)[None]  # [1, H, T, D]
    q_rot, _ = ns["apply_rotary_pos_emb"](q, q, cos, sin, unsqueeze_dim=p.get("unsqueeze_dim", 1))
    return q_rot[0].permute(1, 0, 2).contiguous().numpy()


def run_hf_gptj(entry, src, torch, cache):
    commit = entry["producer"]["commit"]
    key = ("gptj", commit)
    if key not in cache:
        text = src.read(commit, "src/transformers/models/gptj/modeling_gptj.py")
        ns = hf_namespace(torch)
        exec(compile(top_level_source(text, ["create_sinusoidal_positions", "get_embed_positions",
                                             "rotate_every_two", "apply_rotary_pos_emb"], "modeling_gptj.py"),
                     "modeling_gptj.py", "exec"), ns)
        cache[key] = ns
    ns = cache[key]
    p = entry["params"]
    if entry["producer"]["function"] == "create_sinusoidal_positions":
        return ns["create_sinusoidal_positions"](p["num_pos"], p["dim"]).numpy()
    # the glue of GPTJAttention.forward: gather [sin | cos] rows by position, split,
    # rotate the first rotary_dim channels of q ([B, T, H, D]) and keep the rest
    x = torch.from_numpy(input_formula())[None]
    rotary_dim = p["rotary_dim"] or x.shape[-1]
    table = ns["create_sinusoidal_positions"](p["max_positions"], rotary_dim)
    sincos = table[torch.tensor([positions(p["position_ids"])])]
    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
    if rotary_dim < x.shape[-1]:
        rot = ns["apply_rotary_pos_emb"](x[..., :rotary_dim], sin, cos)
        out = torch.cat([rot, x[..., rotary_dim:]], dim=-1)
    else:
        out = ns["apply_rotary_pos_emb"](x, sin, cos)
    return out[0].numpy()


def run_hf_t5(entry, src, torch, cache):
    commit = entry["producer"]["commit"]
    text = src.read(commit, "src/transformers/models/t5/modeling_t5.py")
    ns = hf_namespace(torch)
    exec(compile(top_level_source(text, ["T5Attention._relative_position_bucket"], "modeling_t5.py"),
                 "modeling_t5.py", "exec"), ns)
    fn = ns["_relative_position_bucket"]
    fn = getattr(fn, "__func__", fn)  # @staticmethod outside its class
    p = entry["params"]
    if "query_length" in p:
        ctx = torch.arange(p["query_length"], dtype=torch.long)[:, None]
        mem = torch.arange(p["key_length"], dtype=torch.long)[None, :]
        rel = mem - ctx
    else:
        rel = torch.arange(-300, 301, dtype=torch.long)
    return fn(rel, bidirectional=p["bidirectional"], num_buckets=p["num_buckets"],
              max_distance=p["max_distance"]).numpy()


def run_hf_bloom(entry, src, torch, cache):
    commit = entry["producer"]["commit"]
    text = src.read(commit, "src/transformers/models/bloom/modeling_bloom.py")
    ns = hf_namespace(torch)
    exec(compile(top_level_source(text, ["build_alibi_tensor"], "modeling_bloom.py"), "modeling_bloom.py", "exec"),
         ns)
    p = entry["params"]
    if "num_heads" not in p:
        raise NotImplementedError("entry parameters not in the form this script knows")
    n = zeros_shape(p["attention_mask"].replace("ones", "zeros"))
    return ns["build_alibi_tensor"](torch.ones(n, dtype=torch.int64), p["num_heads"], torch.float32).numpy()


def run_hf(entry, manifest, src, torch, cache):
    path = entry["producer"]["path"]
    if path.endswith("modeling_rope_utils.py"):
        return run_hf_invfreq(entry, src, torch, cache)
    if path.endswith("modeling_llama.py"):
        return run_hf_llama(entry, manifest, src, torch, cache)
    if path.endswith("modeling_gptj.py"):
        return run_hf_gptj(entry, src, torch, cache)
    if path.endswith("modeling_t5.py"):
        return run_hf_t5(entry, src, torch, cache)
    if path.endswith("modeling_bloom.py"):
        return run_hf_bloom(entry, src, torch, cache)
    raise NotImplementedError(path)


# ---- the others ----------------------------------------------------------------------
def import_files(files, torch):
    """Write {relative path: text} into a temporary folder and put it first on sys.path."""
    root = tempfile.mkdtemp(prefix="golden-peer.")
    atexit.register(shutil.rmtree, root, True)
    for rel, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
            f.write(text)
    sys.path.insert(0, root)
    return root


def run_tatp22(entry, src, torch, cache):
    commit = entry["producer"]["commit"]
    key = ("tatp22", commit)
    if key not in cache:
        rel = entry["producer"]["path"]
        import_files({"positional_encodings/__init__.py": "", rel: src.read(commit, rel)}, torch)
        import importlib
        cache[key] = importlib.import_module("positional_encodings.torch_encodings")
    mod = cache[key]
    cls = getattr(mod, entry["producer"]["function"].split(".")[0])
    p = entry["params"]
    return cls(p["channels"])(torch.zeros(zeros_shape(p["input"]), dtype=torch.float32)).numpy()


def run_fairseq(entry, src, torch, cache):
    commit = entry["producer"]["commit"]
    key = ("fairseq", commit)
    if key not in cache:
        rel = entry["producer"]["path"]
        import_files({"fairseq/__init__.py": "", "fairseq/modules/__init__.py": "",
                      "fairseq/utils.py": src.read(commit, "fairseq/utils.py"), rel: src.read(commit, rel)}, torch)
        import importlib
        cache[key] = importlib.import_module("fairseq.modules.sinusoidal_positional_embedding")
    cls = cache[key].SinusoidalPositionalEmbedding
    p = entry["params"]
    if entry["producer"]["function"].endswith("get_embedding"):
        return cls.get_embedding(p["num_embeddings"], p["embedding_dim"], p["padding_idx"]).numpy()
    module = cls(p["embedding_dim"], p["padding_idx"], p["init_size"])
    return module(torch.tensor(p["tokens"])).detach().numpy()


def run_deepseek(entry, src, torch, cache):
    commit = entry["producer"]["commit"]
    key = ("deepseek", commit)
    if key not in cache:
        stub = "def act_quant(*a, **k): raise NotImplementedError\nweight_dequant = fp8_gemm = act_quant\n"
        import_files({"kernel.py": stub, "deepseek_model.py": src.read(commit, entry["producer"]["path"])}, torch)
        import importlib
        cache[key] = importlib.import_module("deepseek_model")
    mod = cache[key]
    p = entry["params"]
    args = mod.ModelArgs(qk_rope_head_dim=p["qk_rope_head_dim"], max_seq_len=p["max_seq_len"],
                         original_seq_len=p["original_seq_len"], rope_theta=p["rope_theta"],
                         rope_factor=p["rope_factor"], beta_fast=p["beta_fast"], beta_slow=p["beta_slow"],
                         mscale=p["mscale"])
    freqs = mod.precompute_freqs_cis(args)
    if entry["producer"]["function"] == "precompute_freqs_cis":
        rows = list(range(0, 37)) + list(range(1000, 1037))
        return torch.view_as_real(freqs[rows]).numpy()
    x = torch.from_numpy(input_formula())[None]
    return mod.apply_rotary_emb(x, freqs[0:37])[0].numpy()


def run_tutorial(entry, src, torch, cache):
    text = src.read(entry["producer"]["commit"], entry["producer"]["path"])
    ns = {"torch": torch, "nn": torch.nn, "math": math, "Tensor": torch.Tensor}
    exec(compile(top_level_source(text, ["PositionalEncoding"], "transformer_tutorial.py"),
                 "transformer_tutorial.py", "exec"), ns)
    p = entry["params"]
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64 if p["default_dtype"].startswith("float64") else torch.float32)
    try:
        pe = ns["PositionalEncoding"](p["d_model"], p["dropout"], p["max_len"]).pe
    finally:
        torch.set_default_dtype(old)
    return pe[:, 0, :].numpy()


def run_formula(entry, src, torch, cache):
    return input_formula()


RUNNERS = {
    "(this harness)": run_formula,
    "huggingface/transformers": run_hf,
    "tatp22/multidim-positional-encoding": run_tatp22,
    "facebookresearch/fairseq": run_fairseq,
    "deepseek-ai/DeepSeek-V3": run_deepseek,
    "pytorch/tutorials": run_tutorial,
}


def npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", action="append", default=[], metavar="REPO=PATH",
                    help="a checkout (work tree or bare git folder) of a peer named in manifest.json")
    ap.add_argument("--write", action="store_true", help="rewrite files that differ and their sha256")
    ap.add_argument("--only", default="", help="only entries whose file name contains this text")
    args = ap.parse_args()
    sources = {}
    for spec in args.checkout:
        repo, sep, path = spec.partition("=")
        if not sep or not os.path.isdir(path):
            ap.error(f"--checkout wants REPO=PATH with an existing folder, got {spec!r}")
        sources[repo] = Source(path)
    manifest_path = os.path.join(HERE, "manifest.json")
    manifest = json.load(open(manifest_path))
    known = {e["producer"]["repository"] for e in manifest["entries"]}
    for repo in sources:
        if repo not in known:
            ap.error(f"--checkout {repo}: no entry of manifest.json comes from it (known: {', '.join(sorted(known))})")
    import torch
    torch.set_num_threads(manifest.get("environment", {}).get("torch_threads", 1))
    cache, same, differ, failed, not_run, written = {}, 0, 0, 0, {}, 0
    for entry in manifest["entries"]:
        if args.only and args.only not in entry["file"]:
            continue
        repo = entry["producer"]["repository"]
        runner = RUNNERS.get(repo)
        src = sources.get(repo)
        if runner is None or (src is None and repo != "(this harness)"):
            why = "its C harness is not part of this script" if runner is None else "no --checkout given"
            not_run.setdefault(f"{repo} ({why})", []).append(entry["file"])
            continue
        try:
            got = np.ascontiguousarray(runner(entry, manifest, src, torch, cache) if runner is run_hf
                                       else runner(entry, src, torch, cache))
        except Exception as exc:  # a peer's own failure is reported by entry, not as a traceback
            print(f"FAILED  {entry['file']}: {type(exc).__name__}: {exc}")
            failed += 1
            continue
        got = got.astype(np.dtype(entry["dtype"]), copy=False)
        data = npy_bytes(got)
        path = os.path.join(HERE, entry["file"])
        stored = open(path, "rb").read() if os.path.exists(path) else b""
        if data == stored:
            same += 1
            continue
        old = np.load(path) if stored else None
        diff = (float(np.max(np.abs(old.astype(np.float64) - got.astype(np.float64))))
                if old is not None and old.shape == got.shape else None)
        print(f"DIFFERS {entry['file']}: shape {got.shape} (stored {None if old is None else old.shape}), "
              f"max abs difference {diff}")
        if args.write:
            with open(path, "wb") as f:
                f.write(data)
            entry["sha256"] = hashlib.sha256(data).hexdigest()
            written += 1
        else:
            differ += 1
    if written:
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
    for what, files in sorted(not_run.items()):
        print(f"not run: {len(files)} entries of {what}")
    print(f"{same} same, {differ} differ, {failed} failed, {written} written, "
          f"{sum(len(v) for v in not_run.values())} not run")
    return 1 if differ or failed else 0


if __name__ == "__main__":
    sys.exit(main())
