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

INTRO = """# Models: the position encoding of every model type, layer by layer

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
TRANSFORMERS_CHECKOUT LLAMA_CPP_CHECKOUT -o inventory.tsv` (markers such as rotate_half /
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
HF's code (`tests/fixtures/models/reference.py`); **knowledge** = classified from the modeling code
without re-reading it for this page (these rows are all refused, so a slip there cannot make posenc
read a model wrong; it only mislabels the documentation).
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

    out = [INTRO.format(pins="\n".join(f"- {p}" for p in pins),
                        counts="; ".join(count(fw) for fw in ("transformers", "remote", "llama.cpp")))]
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
