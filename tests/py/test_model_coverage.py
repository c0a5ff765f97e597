#!/usr/bin/env python3
"""Coverage of the config reader, measured against the frameworks' own model lists (issue 23).

tests/fixtures/models/coverage.tsv lists every model type of the pinned transformers release
(CONFIG_MAPPING_NAMES), the remote-code model types posenc names, and every llama.cpp architecture
(LLM_ARCH_NAMES), each with the position scheme its framework uses per layer kind and posenc's
verdict. For each row this test writes the config (class defaults {"model_type": name}, a fixture
from tests/fixtures/models/coverage/, an inline config, or for llama.cpp a tensor-less GGUF) and
runs `posenc rope explain --config FILE --json`:
  supported: exit 0, "assumed" false, and "layers" (one entry per layer) matching the row's
             per-layer pattern: scheme (rope / nope / alibi / learned / t5 / deberta / sine_2d / rope_2d; a/b = either),
             the layout
             of rotated layers (half / interleaved), the RoPE base where the row gives one (1e-12
             relative), head_dim / rotary_dim where given, and the layer count where given;
  refused:   exit 1 and the model type named on stderr (never a guess);
  invalid:   a config the framework itself cannot load: exit 1 naming the key.
Then: docs/models.md and coverage.tsv list the same model types with the same verdicts, every
fixture is used and has a provenance entry, and scripts/models_inventory.py parses a small
checkout-shaped tree correctly. Nothing is skipped: a missing feature is a failure."""
import json
import os
import re
import struct
import subprocess
import sys

from common import BIN, Checks, run, tmpdir

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
MODELS = os.path.join(ROOT, "tests", "fixtures", "models")
FIXTURES = os.path.join(MODELS, "coverage")
TSV = os.path.join(MODELS, "coverage.tsv")
DOC = os.path.join(ROOT, "docs", "models.md")
SCHEMES = {"rope", "mrope", "nope", "none", "alibi", "learned", "t5", "sinusoidal", "deberta", "window_relative",
           "conv_position", "rope_2d", "sine_2d"}


def load_rows():
    rows = []
    with open(TSV, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if not line.startswith("#")]
    header = lines[0].split("\t")
    for line in lines[1:]:
        cells = line.split("\t")
        assert len(cells) == len(header), f"coverage.tsv: {len(cells)} cells, want {len(header)}: {line[:80]}"
        rows.append(dict(zip(header, cells)))
    return rows


def kv(key, value):
    """One GGUF key/value (v3): string, uint32, float32, bool or an int32 array."""
    out = struct.pack("<Q", len(key)) + key.encode()
    if isinstance(value, bool):
        return out + struct.pack("<IB", 7, value)
    if isinstance(value, str):
        return out + struct.pack("<IQ", 8, len(value)) + value.encode()
    if isinstance(value, float):
        return out + struct.pack("<If", 6, value)
    if isinstance(value, int):
        return out + struct.pack("<II", 4, value)
    if isinstance(value, list):
        return out + struct.pack("<IIQ", 9, 5, len(value)) + b"".join(struct.pack("<i", x) for x in value)
    raise TypeError(value)


def gguf(arch, extra):
    """A tensor-less GGUF: the keys llama.cpp's loader needs to build positions, 8 layers, head 64."""
    keys = {"block_count": 8, "context_length": 2048, "embedding_length": 512, "attention.head_count": 8,
            "rope.dimension_count": 64, "rope.freq_base": 10000.0}
    keys.update(extra)
    d = {"general.architecture": arch}
    d.update({f"{arch}.{k}": v for k, v in keys.items()})
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(d)) + b"".join(kv(k, v) for k, v in d.items())


def write_config(row, d, i):
    """The file the row's config column names; returns its path."""
    cfg = row["config"]
    if row["framework"] == "llama.cpp":
        path = os.path.join(d, f"{i}.gguf")
        with open(path, "wb") as f:
            f.write(gguf(row["name"], json.loads(cfg)))
        return path
    if cfg.startswith("fixture:"):
        return os.path.join(FIXTURES, cfg[len("fixture:"):])
    body = {"model_type": row["name"]} if cfg == "defaults" else json.loads(cfg)
    path = os.path.join(d, f"{i}.json")
    with open(path, "w") as f:
        json.dump(body, f)
    return path


def parse_pattern(text):
    """'rope=10000,nope/none' -> [({'rope'}, 10000.0), ({'nope', 'none'}, None)]"""
    out = []
    for tok in text.split(","):
        kinds, _, base = tok.partition("=")
        names = set(kinds.split("/"))
        assert names <= SCHEMES, f"coverage.tsv: unknown scheme in {tok!r}"
        out.append((names, float(base) if base else None))
    return out


def check_layers(row, j):
    """'' when the explain JSON matches the row, else what differs (first difference)."""
    if not isinstance(j, dict):
        return "not a JSON object"
    if j.get("assumed"):
        return f"'assumed' is {j.get('assumed')!r} for a supported model"
    layers = j.get("layers")
    if not isinstance(layers, list) or not layers:
        return "no 'layers' list"
    if row["n_layers"] and len(layers) != int(row["n_layers"]):
        return f"{len(layers)} layers, want {row['n_layers']}"
    pattern = parse_pattern(row["layers"])
    for i, layer in enumerate(layers):
        names, base = pattern[i % len(pattern)]
        if not isinstance(layer, dict):
            return f"layer {i} is not an object"
        if layer.get("index", i) != i:
            return f"layer {i} has index {layer.get('index')!r}"
        scheme = layer.get("scheme")
        if scheme not in names:
            return f"layer {i}: scheme {scheme!r}, want {'/'.join(sorted(names))}"
        if scheme in ("rope", "mrope"):
            if row["layout"] not in ("", "-") and layer.get("layout") != row["layout"]:
                return f"layer {i}: layout {layer.get('layout')!r}, want {row['layout']}"
            if base is not None:
                got = layer.get("base")
                if not isinstance(got, (int, float)) or abs(got - base) > 1e-12 * base:
                    return f"layer {i}: base {got!r}, want {base!r}"
            for field in ("head_dim", "rotary_dim"):
                if row[field] and layer.get(field) != int(row[field]):
                    return f"layer {i}: {field} {layer.get(field)!r}, want {row[field]}"
        if scheme == "rope_2d":  # 2-D RoPE by patch row and column: base and head (every channel rotates)
            r = layer.get("rope_2d") or {}
            if base is not None and (not isinstance(r.get("base"), (int, float)) or abs(r["base"] - base) > 1e-12 * base):
                return f"layer {i}: 2-D RoPE base {r.get('base')!r}, want {base!r}"
            if row["head_dim"] and r.get("head_dim") != int(row["head_dim"]):
                return f"layer {i}: 2-D RoPE head_dim {r.get('head_dim')!r}, want {row['head_dim']}"
    return ""


def label(row):
    return f"{row['framework']} {row['name']}" + (f" [{row['variant']}]" if row["variant"] else "")


def check_rows(t, rows):
    d = tmpdir()
    counts = {}
    for i, row in enumerate(rows):
        path = write_config(row, d, i)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if row["posenc"] == "supported":
            why = f"exit {rc}: {se.strip().splitlines()[-1] if se.strip() else '(no message)'}" if rc != 0 else ""
            if not why:
                try:
                    why = check_layers(row, json.loads(so))
                except json.JSONDecodeError as e:
                    why = f"stdout is not JSON ({e})"
            ok = t.check(not why, f"{label(row)}: supported, layers {row['layers']} {row['layout']}" +
                         (f" -- {why}" if why else ""))
        elif row["posenc"] == "invalid":  # the framework cannot load it either: exit 1 naming the key
            named = row["keys"] in se
            ok = t.check(rc == 1 and named, f"{label(row)}: invalid config, refused naming '{row['keys']}'" +
                         ("" if rc == 1 and named else f" -- exit {rc}, stderr {se.strip()[:160]!r}"))
        else:
            named = row["name"] in se
            ok = t.check(rc == 1 and named, f"{label(row)}: refused by name" +
                         ("" if rc == 1 and named else f" -- exit {rc}, stderr {se.strip()[:160]!r}"))
        key = (row["framework"], row["posenc"], ok)
        counts[key] = counts.get(key, 0) + 1
    for (fw, verdict, ok), n in sorted(counts.items()):
        print(f"  {fw:12s} {verdict:9s} {'pass' if ok else 'FAIL'}: {n}")


def doc_entries():
    """(framework, name) -> verdict from docs/models.md's tables: rows '| `name` | ... | supported/refused ... |'."""
    section, out = None, {}
    with open(DOC, encoding="utf-8") as f:
        for line in f:
            h = re.match(r"##\s+(.*)", line)
            if h:
                title = h.group(1).lower()
                section = ("llama.cpp" if "llama.cpp" in title else "remote" if "remote" in title
                           else "transformers" if "transformers" in title else None)
                continue
            m = re.match(r"\|\s*`([^`]+)`\s*\|(.*)\|\s*$", line)
            if m and section:
                verdict = "supported" if re.search(r"\|\s*supported", "|" + m.group(2)) else (
                    "refused" if re.search(r"\|\s*refused", "|" + m.group(2)) else "?")
                out[(section, m.group(1))] = verdict
    return out


def check_docs(t, rows):
    tsv = {}
    for r in rows:
        if r["posenc"] != "invalid":  # extra rows of a supported model type, not a verdict of their own
            tsv.setdefault((r["framework"], r["name"]), set()).add(r["posenc"])
    t.check(all(len(v) == 1 for v in tsv.values()), "coverage.tsv: one verdict per model type")
    doc = doc_entries()
    only_tsv = sorted(set(tsv) - set(doc))
    only_doc = sorted(set(doc) - set(tsv))
    t.check(not only_tsv, f"every coverage.tsv model type is in docs/models.md ({len(tsv)})" +
            (f" -- missing: {only_tsv[:8]}" if only_tsv else ""))
    t.check(not only_doc, "every docs/models.md model type is in coverage.tsv" +
            (f" -- extra: {only_doc[:8]}" if only_doc else ""))
    differ = sorted(k for k in set(tsv) & set(doc) if doc[k] not in tsv[k])
    t.check(not differ, "docs/models.md and coverage.tsv give the same verdicts" +
            (f" -- differ: {differ[:8]}" if differ else ""))
    hf = {k[1] for k in tsv if k[0] == "transformers"}
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES  # the test environment's 5.18
    release = set(CONFIG_MAPPING_NAMES)
    t.check(hf == release, f"coverage.tsv lists the {len(release)} model types of the test environment's transformers "
            f"({len(hf)} listed)" + (f" -- not listed: {sorted(release - hf)[:8]}, not in the release: "
                                     f"{sorted(hf - release)[:8]}" if hf != release else ""))
    made = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "models_doc.py")], capture_output=True, text=True)
    with open(DOC, encoding="utf-8") as f:
        current = f.read() == made.stdout
    t.check(made.returncode == 0 and current, "docs/models.md is what scripts/models_doc.py writes from coverage.tsv "
            "(regenerate: scripts/models_doc.py > docs/models.md)" + (f" -- {made.stderr.strip()[:160]}" if made.returncode else ""))
    pop = [line.rstrip("\n").split("\t") for line in open(os.path.join(MODELS, "popular.tsv"), encoding="utf-8")
           if not line.startswith("#")][1:]
    t.check(len(pop) == 50 and all((fw, name) in tsv for _, fw, name in pop),
            f"popular.tsv: 50 families, each a coverage.tsv row ({len(pop)}; missing "
            f"{[n for _, fw, n in pop if (fw, n) not in tsv]})")
    used = {r["config"][len("fixture:"):] for r in rows if r["config"].startswith("fixture:")}
    present = {f for f in os.listdir(FIXTURES) if f.endswith(".json")}
    t.check(used == present, f"every fixture in tests/fixtures/models/coverage/ is used ({len(present)})" +
            (f" -- unused {sorted(present - used)}, missing {sorted(used - present)}" if used != present else ""))
    prov = open(os.path.join(FIXTURES, "PROVENANCE.md"), encoding="utf-8").read()
    t.check(all(f in prov for f in present), "every fixture has a provenance entry")


def check_inventory(t):
    """scripts/models_inventory.py on a checkout-shaped tree written here (made-up, minimal files)."""
    d = tmpdir()
    tf, lc = os.path.join(d, "tf"), os.path.join(d, "lc")
    files = {
        "tf/src/transformers/models/auto/configuration_auto.py":
            'CONFIG_MAPPING_NAMES = OrderedDict[str, str](\n    [\n        ("toyrope", "ToyRopeConfig"),\n'
            '        ("toyalibi", "ToyAlibiConfig"),\n        ("toy_alias", "ToyRopeConfig"),\n    ]\n)\n',
        "tf/src/transformers/models/toyrope/configuration_toyrope.py":
            'class ToyRopeConfig:\n    model_type = "toyrope"\n    no_rope_layers = None\n    rope_theta = 1.0\n',
        "tf/src/transformers/models/toyrope/modeling_toyrope.py":
            "def rotate_every_two(x):\n    pass\nclass ToyRotaryEmbedding:\n    pass\n",
        "tf/src/transformers/models/toyalibi/configuration_toyalibi.py":
            'class ToyAlibiConfig:\n    model_type = "toyalibi"\n',
        "tf/src/transformers/models/toyalibi/modeling_toyalibi.py": "def build_alibi_tensor():\n    pass\n",
        "lc/src/llama-arch.cpp": '{ LLM_ARCH_TOYA, "toya" },\n{ LLM_ARCH_TOYB, "toy-b" },\n',
        "lc/src/llama-model.cpp":
            "llama_rope_type llama_model_rope_type(const llama_model * model) {\n    switch (model->arch) {\n"
            "        case LLM_ARCH_TOYA:\n            return LLAMA_ROPE_TYPE_NONE;\n        case LLM_ARCH_TOYB:\n"
            "            return LLAMA_ROPE_TYPE_NORM;\n    }\n}\n",
        "lc/src/models/toy-b.cpp": "hparams.n_no_rope_layer_step = 4;\n",
    }
    for rel, text in files.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "models_inventory.py"), tf, lc],
                       capture_output=True, text=True)
    got = {tuple(line.split("\t")[:2]): line.split("\t") for line in p.stdout.splitlines()[1:]}
    toy = got.get(("transformers", "toyrope"), [])
    t.check(p.returncode == 0 and len(got) == 5, f"models_inventory: 3 model types + 2 architectures (got {len(got)}, "
            f"exit {p.returncode}) {p.stderr.strip()[:120]}")
    t.check(len(toy) == 6 and {"rotary", "rotate_every_two"} <= set(toy[4].split(","))
            and {"no_rope_layers", "rope_theta"} <= set(toy[5].split(",")),
            f"models_inventory: toyrope markers and keys {toy[4:] if toy else None}")
    alias = got.get(("transformers", "toy_alias"), [])
    t.check(len(alias) == 6 and alias[3] == "toyrope", "models_inventory: an alias model type finds its class's directory")
    alibi = got.get(("transformers", "toyalibi"), [])
    t.check(len(alibi) == 6 and alibi[4] == "alibi", "models_inventory: toyalibi -> alibi marker")
    b = got.get(("llama.cpp", "toy-b"), [])
    t.check(len(b) == 6 and b[3] == "NORM" and "no_rope_step" in b[4] and got.get(("llama.cpp", "toya"), [""] * 4)[3] == "NONE",
            f"models_inventory: rope types NONE/NORM and the no-rope step marker ({b[3:5] if b else None})")


def main():
    t = Checks()
    t.check(os.path.exists(BIN), f"posenc binary at {BIN}")
    rows = load_rows()
    check_docs(t, rows)
    check_inventory(t)
    check_rows(t, rows)
    t.finish()


if __name__ == "__main__":
    main()
