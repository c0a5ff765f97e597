#!/usr/bin/env python3
"""Raw inventory of position encodings in a transformers and a llama.cpp checkout (issue 23).

    .venv/bin/python scripts/models_inventory.py TRANSFORMERS_DIR LLAMA_CPP_DIR [-o inventory.tsv]

TRANSFORMERS_DIR is a checkout or the installed package (.venv/lib/python3.*/site-packages/transformers);
LLAMA_CPP_DIR is a checkout, or - to list the transformers model types only.

Reads, without network and without importing either project:
  transformers: src/transformers/models/auto/configuration_auto.py (CONFIG_MAPPING_NAMES: every model
    type), each models/<dir>/configuration_*.py that declares `model_type = "..."`, and that directory's
    modeling_*.py / modular_*.py, where it looks for the markers below;
  llama.cpp: src/llama-arch.cpp (LLM_ARCH_NAMES), src/llama-model.cpp (llama_model_rope_type, and the
    per-arch `case LLM_ARCH_...:` blocks of the hparams loader) and src/models/*.cpp.
It prints one TSV row per model type / architecture with the markers found. The markers are evidence to
classify by hand (tests/fixtures/models/coverage.tsv is that hand-checked table), not a verdict: a
model can import its rotation from another model's file, so a row with no marker still has to be read.
Run it again on a newer release and diff its output against the previous one to see what changed."""
import argparse
import os
import re
import sys

# marker name -> regex searched in a model's modeling_*.py / modular_*.py
HF_MARKERS = [
    ("rotary", r"RotaryEmbedding|apply_rotary_pos_emb|rotary_emb"),
    ("rotate_half", r"def rotate_half|import[^\n]*rotate_half"),
    ("rotate_every_two", r"rotate_every_two"),
    ("complex", r"view_as_complex|torch\.polar"),
    ("repeat_interleave", r"repeat_interleave\((?:freqs|emb|cos|sin)|\[\.\.\., *: *cos\.shape\[-1\] *// *2\]\.repeat_interleave"),
    ("pairs_0::2", r"\[\.\.\., *0?::2\]"),
    ("mrope", r"mrope_section|multimodal_rotary"),
    ("nope_layers", r"no_rope_layers|use_rope|NoPE|nope"),
    ("layer_types", r"layer_types"),
    ("alibi", r"alibi"),
    ("learned_table", r"nn\.Embedding\([^)\n]*(?:max_position_embeddings|n_positions|max_seq_len|max_target_positions|max_source_positions)"),
    ("sinusoidal", r"[Ss]inusoid"),
    ("t5_buckets", r"relative_attention_bias|_relative_position_bucket"),
    ("relative", r"relative_position|rel_pos|RelPosition|position_bias"),
    ("mamba", r"[Mm]amba"),
    ("linear_attention", r"linear_attention|DeltaNet|delta_rule"),
]
# config keys that decide a position encoding, looked for in configuration_*.py (and modular_*.py)
HF_KEYS = ["rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor", "rotary_dim", "rotary_pct",
           "rotary_emb_base", "head_dim", "no_rope_layers", "no_rope_layer_interval", "layer_types",
           "sliding_window_pattern", "full_attention_interval", "rope_local_base_freq", "position_embedding_type",
           "alibi", "alibi_bias_max", "max_position_embeddings", "n_positions", "relative_attention_num_buckets",
           "relative_attention_max_distance", "attn_layer_period", "attn_layer_offset", "rope_interleave",
           "default_theta"]

LLAMA_MARKERS = [
    ("no_rope_step", r"n_no_rope_layer_step"),
    ("alibi", r"f_max_alibi_bias|ALIBI"),
    ("swa_rope_only", r"use_rope|is_swa\(il\)"),
    ("rope_ext", r"ggml_rope_ext|ggml_rope_multi"),
    ("pos_embd", r"pos_embd|position_embd"),
    ("freq_base_swa", r"rope_freq_base_train_swa|ROPE_FREQ_BASE_SWA"),
]


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def hf_root(tf):
    """The models/ folder of a transformers checkout (src/transformers/models) or of an installed
    package (site-packages/transformers/models, e.g. the test environment's)."""
    for sub in ("src/transformers/models", "models"):
        if os.path.isdir(os.path.join(tf, sub, "auto")):
            return os.path.join(tf, sub)
    sys.exit(f"{tf}: neither src/transformers/models/auto nor models/auto (a checkout or an installed package)")


def hf_model_types(tf):
    """[(model_type, config class)] from CONFIG_MAPPING_NAMES, in file order. Up to 5.x the list is written out
    in configuration_auto.py; from 5.x it is generated into auto_mappings.py, and configuration_auto.py adds
    a few by hand (CONFIG_MAPPING_NAMES.update({...}) and OrderedDict(**{"gpt-sw3": ...}, ...))."""
    text = read(os.path.join(hf_root(tf), "auto/configuration_auto.py"))
    listed = r"CONFIG_MAPPING_NAMES\s*=\s*OrderedDict[^(]*\(\s*\[(.*?)\n\s*\]\s*\)"
    m = re.search(listed, text, re.S) or re.search(listed, read(os.path.join(hf_root(tf), "auto/auto_mappings.py")), re.S)
    if not m:
        sys.exit(f"{tf}: CONFIG_MAPPING_NAMES not found in models/auto/configuration_auto.py or auto_mappings.py")
    out = re.findall(r'\(\s*"([^"]+)"\s*,\s*"(\w+)"\s*\)', m.group(1))
    for extra in re.findall(r"CONFIG_MAPPING_NAMES\.update\(\s*\{(.*?)\}\s*\)|OrderedDict\(\*\*\{(.*?)\}\s*,\s*\*\*CONFIG_MAPPING_NAMES",
                            text, re.S):
        for mt, cls in re.findall(r'"([^"]+)"\s*:\s*"(\w+)"', extra[0] + extra[1]):
            if all(mt != o for o, _ in out):
                out.append((mt, cls))
    return out


def hf_dirs(tf):
    """model_type -> the models/<dir> whose configuration_*.py or modular_*.py declares it."""
    root = hf_root(tf)
    out = {}
    for d in sorted(os.listdir(root)):
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            continue
        for f in sorted(os.listdir(full)):
            if f.startswith(("configuration_", "modular_")) and f.endswith(".py"):
                for mt in re.findall(r'^\s*model_type\s*=\s*"([^"]+)"', read(os.path.join(full, f)), re.M):
                    out.setdefault(mt, d)
    return out


def hf_rows(tf):
    root = hf_root(tf)
    dirs = hf_dirs(tf)
    rows = []
    for mt, cls in hf_model_types(tf):
        d = dirs.get(mt)
        if d is None:  # an alias (e.g. code_llama -> LlamaConfig): find the class's own directory
            for other, od in dirs.items():
                if re.search(rf"class {cls}\b", "".join(read(os.path.join(root, od, f)) for f in os.listdir(os.path.join(root, od))
                                                         if f.startswith("configuration_"))):
                    d = od
                    break
        files = sorted(os.listdir(os.path.join(root, d))) if d else []
        code = "".join(read(os.path.join(root, d, f)) for f in files if f.startswith(("modeling_", "modular_")) and f.endswith(".py"))
        conf = "".join(read(os.path.join(root, d, f)) for f in files if f.startswith(("configuration_", "modular_")) and f.endswith(".py"))
        markers = [name for name, rx in HF_MARKERS if re.search(rx, code)]
        keys = [k for k in HF_KEYS if re.search(rf"\b{k}\b", conf)]
        rows.append(("transformers", mt, cls, d or "?", ",".join(markers) or "-", ",".join(keys) or "-"))
    return rows


def llama_rows(lc):
    arch_text = read(os.path.join(lc, "src/llama-arch.cpp"))
    names = re.findall(r'\{\s*(LLM_ARCH_\w+)\s*,\s*"([^"]+)"\s*\}', arch_text)
    if not names:
        sys.exit(f"{lc}: LLM_ARCH_NAMES not found in src/llama-arch.cpp")
    model = read(os.path.join(lc, "src/llama-model.cpp"))
    # llama_model_rope_type: consecutive `case LLM_ARCH_X:` lines share the next `return ...;`
    rope = {}
    m = re.search(r"llama_rope_type\s+llama_model_rope_type\s*\([^)]*\)\s*\{(.*?)\n\}", model, re.S)
    if not m:
        sys.exit(f"{lc}: llama_model_rope_type not found in src/llama-model.cpp")
    pending = []
    for line in m.group(1).splitlines():
        pending += re.findall(r"case\s+(LLM_ARCH_\w+)\s*:", line)
        r = re.search(r"return\s+([^;]+);", line)
        if r and pending:
            value = re.sub(r"LLAMA_ROPE_TYPE_", "", r.group(1).strip())
            for a in pending:
                rope[a] = value
            pending = []
    # per-arch blocks of the loader in llama-model.cpp: text between `case LLM_ARCH_X:` labels
    blocks = {}
    for mm in re.finditer(r"case\s+(LLM_ARCH_\w+)\s*:(.*?)(?=case\s+LLM_ARCH_\w+\s*:|\Z)", model, re.S):
        blocks[mm.group(1)] = blocks.get(mm.group(1), "") + mm.group(2)
    models_dir = os.path.join(lc, "src/models")
    model_files = {}
    if os.path.isdir(models_dir):
        for f in sorted(os.listdir(models_dir)):
            if f.endswith(".cpp"):
                model_files[re.sub(r"[-_]", "", f[:-4]).replace("iswa", "")] = model_files.get(
                    re.sub(r"[-_]", "", f[:-4]).replace("iswa", ""), "") + read(os.path.join(models_dir, f))
    rows = []
    for enum, name in names:
        text = blocks.get(enum, "") + model_files.get(re.sub(r"[-_]", "", name), "")
        markers = [n for n, rx in LLAMA_MARKERS if re.search(rx, text)]
        rows.append(("llama.cpp", name, enum, rope.get(enum, "?"), ",".join(markers) or "-", "-"))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("transformers")
    ap.add_argument("llama_cpp", help="a llama.cpp checkout, or - for the transformers rows only")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    rows = hf_rows(a.transformers) + (llama_rows(a.llama_cpp) if a.llama_cpp != "-" else [])
    out = open(a.output, "w") if a.output else sys.stdout
    out.write("framework\tname\tclass_or_enum\tdir_or_rope_type\tmarkers\tconfig_keys\n")
    for r in rows:
        out.write("\t".join(r) + "\n")
    if a.output:
        out.close()
    print(f"{sum(r[0] == 'transformers' for r in rows)} transformers model types, "
          f"{sum(r[0] == 'llama.cpp' for r in rows)} llama.cpp architectures", file=sys.stderr)


if __name__ == "__main__":
    main()
