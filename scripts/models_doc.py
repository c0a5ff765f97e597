#!/usr/bin/env python3
"""Write docs/models.md from tests/fixtures/models/coverage.tsv (issue 23).

    .venv/bin/python scripts/models_doc.py [coverage.tsv] > docs/models.md

The TSV is the hand-checked table (one row per model type and test variant); this script only
formats it, so the page and the test that runs every row cannot drift apart
(tests/py/test_model_coverage.py also checks that both list the same model types and verdicts)."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TSV = os.path.join(HERE, "..", "tests", "fixtures", "models", "coverage.tsv")
POPULAR = os.path.join(HERE, "..", "tests", "fixtures", "models", "popular.tsv")

INTRO = """# Models: the position encoding of every model type, layer by layer

{coverage}

posenc promises to read a model's positions exactly as its own framework does, and to refuse by name
what it cannot read. This page lists **every model type of the pinned transformers release and every
llama.cpp architecture**, the position scheme each uses per layer kind, and posenc's verdict. It is
generated from `tests/fixtures/models/coverage.tsv` by `scripts/models_doc.py`;
`tests/py/test_model_coverage.py` runs `posenc rope explain --config FILE --json` on every row
(supported: the per-layer schemes, layout and base must match; refused: exit 1 naming the model type).

Pinned sources:
{pins}

Counts: {counts}

To regenerate the raw evidence at a newer release: `.venv/bin/python scripts/models_inventory.py
TRANSFORMERS_CHECKOUT LLAMA_CPP_CHECKOUT -o inventory.tsv` (a checkout or the installed package
`.venv/lib/python3.*/site-packages/transformers`; `-` for no llama.cpp) (markers such as rotate_half /
rotate_every_two / view_as_complex / alibi / learned tables / no_rope_layers per model type, and
llama_model_rope_type per architecture), diff it against the previous run, classify new rows by
hand in coverage.tsv, then `scripts/models_doc.py > docs/models.md`.

Legend. *Scheme*: what each kind of layer does with positions. *Layout* (rotated layers): **half** =
pairs (k, k+d/2), HF `rotate_half`, ggml NEOX; **interleaved** = pairs (2k, 2k+1), HF
`rotate_every_two` / `repeat_interleave` / `view_as_complex`, ggml NORM. *posenc*: **supported**
(read per layer, tested) or **refused** (exit 1, the model type named: posenc never guesses).
*Test*: the configs the coverage test runs (defaults = `{{"model_type": ...}}`, i.e. the config
class's own defaults; fixture files are under `tests/fixtures/models/coverage/`, provenance in its
PROVENANCE.md). *Checked*: **source** = read in that model's own transformers / llama.cpp files at
the pinned commits for this page; **table** = a family posenc already tested bit for bit against
HF's code (`tests/fixtures/models/reference.py`); **oracle** = a tiny model of that type run by transformers
itself (`tests/oracle/test_oracle_hf.py`: scheme, layout and rotated width per layer); **knowledge** = classified from the modeling code
without re-reading it for this page; **markers** = a model type transformers 5.18 added, classified
from the markers scripts/models_inventory.py finds in its modeling files (rotary classes, learned
tables, sinusoids, relative biases, state-space layers), not read by hand (these rows are all refused,
so a slip there cannot make posenc read a model wrong; it only mislabels the documentation).
`tests/py/test_model_coverage.py` fails when this page is not what `scripts/models_doc.py` writes, or
when the transformers of the test environment lists model types coverage.tsv does not.
"""


def load(path):
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    pins = [line[2:] for line in lines if line.startswith("# transformers") or line.startswith("# llama.cpp")]
    body = [line for line in lines if not line.startswith("#")]
    header = body[0].split("\t")
    return pins, [dict(zip(header, line.split("\t"))) for line in body[1:]]


def esc(s):
    return s.replace("|", "\\|")


def test_cell(variants):
    parts = []
    for r in variants:
        if r["posenc"] == "invalid":
            parts.append(f"{r['variant']}: inline config -> refused naming {r['keys']} (the framework cannot load it)")
            continue
        cfg = r["config"]
        what = ("defaults" if cfg == "defaults" else cfg if cfg.startswith("fixture:") else "inline config")
        if r["framework"] == "llama.cpp":
            what = "GGUF" + ("" if cfg == "{}" else " + " + cfg.replace('"', ""))
        lay = r["layers"] + (f" ({r['n_layers']} layers)" if r["n_layers"] else "")
        parts.append((f"{r['variant']}: " if r["variant"] else "") + f"{what} -> {lay}")
    return esc("; ".join(parts))


def popular(groups):
    """(read, total, refused names) over tests/fixtures/models/popular.tsv."""
    with open(POPULAR, encoding="utf-8") as f:
        body = [line.rstrip("\n").split("\t") for line in f if not line.startswith("#")][1:]
    verdict = {fw_name: v[0]["posenc"] for fw_name, v in groups.items()}
    read = [(fam, name) for fam, fw, name in body if verdict.get((fw, name)) == "supported"]
    refused = [(fam, name) for fam, fw, name in body if verdict.get((fw, name)) != "supported"]
    return read, len(body), refused


# why a model type with positions is refused, from its scheme text (first match wins)
REASONS = [
    ("proportional", "'proportional' RoPE (Gemma 4's full layers): a rope_type posenc does not implement"),
    (r"\bMLA\b|qk_rope", "multi-head latent attention variants (DeepSeek-style MLA) not in the family table"),
    (r"M-RoPE|mrope", "M-RoPE (multimodal position ids) in a family or composite posenc does not read"),
    (r"layer_rope_theta|per layer type|force_rope|hybrid", "per-layer RoPE rules (per-layer-type dicts, layer_rope_theta, force_rope) not in the table"),
    (r"^composite|^vision|vision sub-config|vision:|patch|2D rope|3D rope", "composite, vision or video models: image/video positions (patch tables, 2D/3D RoPE)"),
    (r"audio|speech|whisper|asr", "audio and speech models (sinusoidal / learned / relative positions in the encoder)"),
    (r"mamba|linear|state-space|recurrent|delta", "hybrid state-space / linear-attention models whose layer rule is not in the table"),
    (r"learned|absolute|table|sinus", "encoders and seq2seq models with learned or sinusoidal tables not in the table"),
    (r"relativ|bucket|bias|alibi|decay", "relative biases (T5-style buckets, DeBERTa, ALiBi-like decays) not in the table"),
    (r"rope|rotary", "RoPE decoders not yet given a row (each is one family row plus an oracle case)"),
]


def refused_summary(groups, has_position):
    out = {}
    for (fw, name), v in groups.items():
        r = v[0]
        if fw != "transformers" or r["posenc"] == "supported" or not has_position(r):
            continue
        why = next((w for rx, w in REASONS if re.search(rx, r["scheme"], re.I)), "other position schemes")
        out.setdefault(why, []).append(name)
    lines = ["## What is refused, and why (transformers model types with positions)", "",
             "posenc exits 1 naming the model type for each of these (never a guess); grouped by the first reason that "
             "applies to the row's scheme:", ""]
    for _, why in REASONS + [("", "other position schemes")]:
        names = sorted(out.get(why, []), key=str.lower)
        if names:
            lines.append(f"- **{why}** ({len(names)}): " + ", ".join(f"`{n}`" for n in names))
    return "\n".join(lines) + "\n"


def main():
    pins, rows = load(sys.argv[1] if len(sys.argv) > 1 else TSV)
    groups = {}
    for r in rows:
        groups.setdefault((r["framework"], r["name"]), []).append(r)

    def has_position(r):
        """False for model types whose attention (if any) sees no position at all: convolutional,
        state-space, recurrent, codec, external or composite rows say so in their scheme."""
        s = r["scheme"].lower()
        for negated in ("no position encoding", "without position encoding", "without rope", "no rotary",
                        "no graph builds rope"):
            s = s.replace(negated, "")
        if re.search(r"rope|alibi|table|relativ|sinus|bucket|sine|position|bias|m-rope|learned", s):
            return True
        return False

    def count(fw):
        names = [v for (f, _), v in groups.items() if f == fw]
        sup = sum(v[0]["posenc"] == "supported" for v in names)
        pos = sum(has_position(v[0]) for v in names)
        what = "architectures" if fw == "llama.cpp" else "model types"
        return (f"{len(names)} {fw} {what}: {pos} with a position encoding, {len(names) - pos} without one "
                f"or composite; {sup} supported, {len(names) - sup} refused by name")

    hf = [v[0] for (f, _), v in groups.items() if f == "transformers"]
    hf_read = sum(r["posenc"] == "supported" for r in hf)
    hf_pos = [r for r in hf if has_position(r)]
    pop_read, pop_total, pop_refused = popular(groups)
    coverage = (f"**Coverage: posenc reads {hf_read} of the {len(hf)} model types of transformers 5.18 "
                f"({100 * hf_read / len(hf):.1f}%); {hf_read} of the {len(hf_pos)} that have a position encoding "
                f"({100 * hf_read / len(hf_pos):.1f}%). Of {pop_total} popular 2024-26 families "
                f"(tests/fixtures/models/popular.tsv) it reads {len(pop_read)} ({100 * len(pop_read) / pop_total:.0f}%)"
                + (f"; refused: {', '.join(f'{fam} (`{n}`)' for fam, n in pop_refused)}" if pop_refused else "")
                + ". Every other model type is refused by name (exit 1).**")
    out = [INTRO.format(coverage=coverage, pins="\n".join(f"- {p}" for p in pins),
                        counts="; ".join(count(fw) for fw in ("transformers", "remote", "llama.cpp")))]
    out.append(refused_summary(groups, has_position))
    sections = [("transformers", "## transformers model types (CONFIG_MAPPING_NAMES)"),
                ("remote", "## Remote-code model types (trust_remote_code; not in transformers) that posenc names"),
                ("llama.cpp", "## llama.cpp architectures (LLM_ARCH_NAMES, llama_model_rope_type)")]
    for fw, title in sections:
        out.append(title + "\n")
        if fw == "llama.cpp":
            out.append("| architecture | rope type: per-layer rule | layout | posenc | test | checked |")
            out.append("|---|---|---|---|---|---|")
        else:
            out.append("| model type | scheme per layer kind | layout | keys read | posenc | test | checked |")
            out.append("|---|---|---|---|---|---|---|")
        for (f, name), variants in sorted(groups.items(), key=lambda kv: kv[0][1].lower()):
            if f != fw:
                continue
            r = variants[0]
            verdict = r["posenc"]
            test = test_cell(variants) if verdict == "supported" else "exit 1, named"
            if fw == "llama.cpp":
                out.append(f"| `{name}` | {esc(r['scheme'])} | {r['framework_layout']} | {verdict} | {test} | {r['checked']} |")
            else:
                out.append(f"| `{name}` | {esc(r['scheme'])} | {r['framework_layout']} | {esc(r['keys'])} | {verdict} | "
                           f"{test} | {r['checked']} |")
        out.append("")
    out.append("""## Found while checking the existing family table

Each was a difference between the family table and the framework's own code; each is now read as the framework reads it and checked by a row of coverage.tsv:

- `qwen3_moe`: Qwen3MoeConfig has no `head_dim` field; without the key the attention uses
  hidden_size / num_attention_heads (64 with the class defaults), not 128.
- `deepseek_v2`: the class defaults are hidden 4096, 32 heads, 32 layers (qk_rope_head_dim 64), not
  DeepSeek-V2's 5120 / 128 / 60.
- `gptj` (and `codegen`): the class default `rotary_dim` is 64; a config without the key rotates 64
  channels in HF.
- `mistral3` without `text_config`: the class builds a Mistral text config with rope_theta 1e9,
  hidden 5120, head_dim 128, 40 layers (not MistralConfig's own defaults).
- `cohere2`: the config class always sets head_dim = hidden_size // num_attention_heads, whatever
  config.json says.
- `falcon` with `alibi: true`: the ALiBi bias is added before the 1/sqrt(head_dim) scaling, so the
  effective slope is the BLOOM slope / sqrt(head_dim).
- `deepseek_v3`: interleaved only while `rope_interleave` is true (the default).
- llama.cpp `glm4` / `glm4moe` / `hunyuan_vl`: M-RoPE when the GGUF carries M-RoPE sections. posenc
  reads a `glm4` GGUF without sections as interleaved RoPE and refuses one with sections by name
  (test_config_rules); `glm4moe` and `hunyuan_vl` are refused. `qwen25vl` is not a llama.cpp
  architecture name (Qwen2.5-VL GGUFs say `qwen2vl`).
""")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
