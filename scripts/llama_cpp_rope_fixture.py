#!/usr/bin/env python3
"""Regenerate tests/fixtures/llama_cpp/rope_per_arch.tsv from a llama.cpp source tree.

    scripts/llama_cpp_rope_fixture.py LLAMA_CPP_DIR "PROVENANCE LINE" > tests/fixtures/llama_cpp/rope_per_arch.tsv

LLAMA_CPP_DIR holds src/llama-arch.cpp, src/llama-model.cpp, src/models/*.cpp (a checkout of
github.com/ggml-org/llama.cpp). Reads, per architecture, from llama.cpp's own source (no code is copied,
only facts are extracted):
  - the GGUF name (llama-arch.cpp, LLM_ARCH_NAMES),
  - the rope type (llama-model.cpp, llama_model_rope_type's switch; a conditional return is kept as text),
  - what its case in llama_model::load_hparams reads or sets about positions: the LLM_KV_* keys with
    ROPE / SLIDING / SWA / ALIBI in their name, set_swa_pattern(n[, dense_first]), n_no_rope_layer_step,
    the sliding layers' rope_freq_base/scale overrides, and when the SWA pattern applies
    (found_swa && n_swa > 0, n_swa == 0, or always), its swa_type (STANDARD, CHUNKED, NONE) and the
    windows it sets itself (n_swa_set: gemma2's default 4096, llama4's forced 8192),
  - the graph builder class(es) from llama_model::build_graph and, in that builder's source
    (src/models/*.cpp), which per-layer rope facts it uses: rope only inside `if (is_swa)`
    (rope_swa_only), NoPE by n_no_rope_layer_step (nope_step), per-layer base/scale
    (get_rope_freq_base/scale), a plain rope on SWA layers (freq_scale 1.0 literal: swa_plain),
    granite's use_rope switch (use_rope),
    ggml_rope_multi (M-RoPE), no rope call at all (no_rope_call),
  - n_rot_is_head: the archs load_hparams refuses unless rope.dimension_count equals the head.
The generic keys every arch reads (load_hparams before its switch: rope.freq_base,
rope.scaling.type/factor/original_context_length/attn_factor, rope.dimension_count) are not repeated
per row. Output: TSV with '#' provenance lines first."""
import glob
import os
import re
import sys


def block_after(text, start, stop_re):
    m = re.compile(stop_re, re.M).search(text, start)
    return text[start:m.start() if m else len(text)]


def function_body(text, signature):
    i = text.index(signature)
    j = text.index("{", i)
    depth = 0
    for k in range(j, len(text)):
        depth += text[k] == "{"
        depth -= text[k] == "}"
        if depth == 0:
            return text[j:k + 1]
    raise ValueError(signature)


def case_blocks(body):
    """{ENUM: text} for a switch whose cases may share one body (case A: case B: { ... })."""
    out = {}
    parts = re.split(r"^\s*case (LLM_ARCH_\w+):", body, flags=re.M)
    pending = []
    for i in range(1, len(parts), 2):
        pending.append(parts[i])
        text = parts[i + 1]
        if text.strip():
            for e in pending:
                out[e] = text
            pending = []
    return out


def rope_types(model):
    body = function_body(model, "llama_rope_type llama_model_rope_type(")
    out, pending = {}, []
    for line in body.splitlines():
        m = re.match(r"\s*case (LLM_ARCH_\w+):", line)
        if m:
            pending.append(m.group(1))
            continue
        r = re.search(r"return (.*);", line)
        if r and pending:
            t = r.group(1).replace("LLAMA_ROPE_TYPE_", "")
            for e in pending:
                out[e] = re.sub(r"model->hparams\.", "", t)
            pending = []
    return out


def hparams_facts(block):
    keys = sorted(set(k for k in re.findall(r"LLM_KV_(\w+)", block)
                      if re.search(r"ROPE|SLIDING|SWA|ALIBI", k)))
    pat = re.findall(r"set_swa_pattern\(([^)]*)\)", block)
    nope = re.findall(r"n_no_rope_layer_step\s*=\s*([^;]+);", block)
    n_swa = re.findall(r"hparams\.n_swa\s*=\s*(\d+);", block)
    swa_type = sorted(set(re.findall(r"swa_type\s*=\s*LLAMA_SWA_TYPE_(\w+)", block)))
    swa_over = re.findall(r"rope_freq_(base|scale)_train_swa\s*=\s*([^;]+);", block)
    cond = ""
    if pat:
        if re.search(r"found_swa && hparams\.n_swa > 0", block):
            cond = "sliding_window>0"
        elif re.search(r"found_swa && hparams\.n_swa == 0", block):
            cond = "unless sliding_window==0"
        elif re.search(r"if\s*\(", block[:block.find("set_swa_pattern")].split("{")[-1]):
            cond = "conditional"
        else:
            cond = "always"
    return {
        "rope_keys": ",".join(keys),
        "swa_pattern": ";".join(p.replace(" ", "") for p in pat),
        "swa_when": cond,
        "swa_type": ",".join(swa_type),
        "n_swa_set": ";".join(n_swa),
        "nope_step": ";".join(n.strip().replace("hparams.", "") for n in nope),
        "swa_rope": ",".join(f"{k}={v.strip()}" for k, v in swa_over),
    }


def builder_facts(src_dir, classes):
    """'class:fact,fact;class:...' and the files, one builder at a time (build_graph picks one)."""
    per, files = [], []
    for cls in classes:
        facts = set()
        for path in sorted(glob.glob(os.path.join(src_dir, "models", "*.cpp"))):
            text = open(path, encoding="utf-8").read()
            if not re.search(re.escape(cls) + r"(<\w+>)?::" + re.escape(cls) + r"\(", text):
                continue
            files.append("src/models/" + os.path.basename(path))
            if "n_no_rope_layer_step" in text:
                facts.add("nope_step")
            if "get_rope_freq_base" in text or "get_rope_freq_scale" in text:
                facts.add("per_layer_base_scale")
            if "ggml_rope_multi" in text:
                facts.add("rope_multi")
            if not re.search(r"ggml_rope(_ext|_multi)?\(", text):
                facts.add("no_rope_call")
            m = re.search(r"if \(is_swa\) \{", text)
            if m:
                inner = function_body(text[m.start():], "if (is_swa)")
                end = m.start() + len(inner) + text[m.start():].index("{")
                if "ggml_rope" in inner:
                    if re.search(r"freq_base, 1\.0", inner):
                        facts.add("swa_plain")
                    if not re.match(r"\s*else", text[end:]):
                        facts.add("rope_swa_only")
            if "use_rope" in text and "nope_step" not in facts:
                facts.add("use_rope")
        per.append(cls + ":" + (",".join(sorted(facts)) or "-"))
    return ";".join(per), ",".join(files)


def main():
    root, provenance = sys.argv[1], sys.argv[2]
    src = os.path.join(root, "src")
    arch = open(os.path.join(src, "llama-arch.cpp"), encoding="utf-8").read()
    model = open(os.path.join(src, "llama-model.cpp"), encoding="utf-8").read()
    names = re.findall(r'\{\s*(LLM_ARCH_\w+),\s*"([^"]+)"\s*\}', arch)
    types = rope_types(model)
    # the archs load_hparams refuses unless rope.dimension_count == the head ("invalid n_rot")
    m = re.search(r"if \(([^{]*)\)\s*\{\s*if \(hparams\.n_rot != hparams\.n_embd_head_k\)", model)
    full_rot = set(re.findall(r"LLM_ARCH_\w+", m.group(1))) if m else set()
    hp = case_blocks(function_body(model, "void llama_model::load_hparams("))
    bg = case_blocks(function_body(model, "llama_model::build_graph("))
    print("# llama.cpp per-architecture RoPE facts, extracted by scripts/llama_cpp_rope_fixture.py")
    print("# source: " + provenance)
    print("# rope_type: llama-model.cpp llama_model_rope_type(); rope_keys/swa_*/nope_step: llama-model.cpp "
          "llama_model::load_hparams() case per arch; builder: llama_model::build_graph(); "
          "builder_facts: src/models/<builder>.cpp")
    cols = ["arch", "enum", "rope_type", "rope_keys", "swa_pattern", "swa_when", "swa_type", "n_swa_set", "nope_step", "swa_rope",
            "builder", "builder_facts", "builder_files", "n_rot_is_head"]
    print("\t".join(cols))
    for enum, name in names:
        if enum in ("LLM_ARCH_UNKNOWN", "LLM_ARCH_CLIP"):
            continue
        f = hparams_facts(hp.get(enum, ""))
        classes = sorted(set(re.findall(r"make_unique<(llm_build_\w+)", bg.get(enum, ""))))
        bf, files = builder_facts(src, classes)
        row = [name, enum, types.get(enum, "unlisted"), f["rope_keys"], f["swa_pattern"], f["swa_when"],
               f["swa_type"], f["n_swa_set"], f["nope_step"], f["swa_rope"], ",".join(classes), bf, files,
               "yes" if enum in full_rot else ""]
        print("\t".join(x if x else "-" for x in row))


if __name__ == "__main__":
    main()
