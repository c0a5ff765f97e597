#!/usr/bin/python3
"""Every GGUF architecture llama.cpp knows: posenc reads it as llama.cpp runs it, or refuses it by name.

The oracle is llama.cpp's own source, stored as tests/fixtures/llama_cpp/rope_per_arch.tsv (written by
scripts/llama_cpp_rope_fixture.py from a llama.cpp checkout; provenance in its '#' lines): per arch, the
rope type (llama_model_rope_type), the SWA pattern and when load_hparams sets it, the NoPE step, the
sliding layers' base/scale overrides, and what its graph builder does per layer (rope only on SWA layers,
plain rope on SWA layers, use_rope switch). For every arch in the fixture a GGUF is written with gguf-py
(the writer convert_hf_to_gguf.py uses, with the keys it writes: rope.freq_base, rope.dimension_count,
rope.scaling.*, attention.sliding_window, rope.dimension_sections, rope.scaling.finetuned), then
`posenc rope explain --json` is checked layer by layer against the rule the fixture gives. An arch posenc
does not read must exit non-zero naming the arch (never read with a guessed layout).
Needs the test environment (POSENC_PYTHON): gguf-py."""
import json
import os
import re

from common import Checks, run, tmpdir

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "rope.md")
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "llama_cpp", "rope_per_arch.tsv")

# posenc's GGUF table (src/config/config_family.c gguf_archs): the archs it reads.
READ = {"llama", "llama4", "deci", "baichuan", "internlm2", "minicpm", "xverse", "command-r", "cohere2", "olmo",
        "arctic", "deepseek", "deepseek2", "plm", "chatglm", "glm4", "granite", "granitemoe", "chameleon",
        "bailingmoe", "mistral3", "falcon", "grok", "dbrx", "nomic-bert", "stablelm", "bitnet", "qwen", "qwen2",
        "qwen2moe", "qwen2vl", "qwen25vl", "qwen3", "qwen3moe", "qwen3vl", "qwen3vlmoe", "olmo2", "olmoe", "phi2",
        "phi3", "phimoe", "plamo", "gemma", "gemma2", "gemma3", "starcoder2", "openelm", "gptneox", "codeshell",
        "orion", "nemotron", "exaone", "minicpm3", "smollm3", "ernie4_5", "ernie4_5-moe", "bloom", "mpt"}
# names posenc reads that llama.cpp has no arch for (llama.cpp's converter writes Qwen2.5-VL as qwen2vl)
NOT_IN_LLAMA_CPP = {"qwen25vl"}

LAYERS, HEAD, HEADS, BASE, WINDOW = 12, 64, 8, 500000.0, 4096
FACTOR = {"linear": 4.0, "yarn": 8.0}


def load_fixture():
    rows = {}
    with open(FIXTURE, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if not line.startswith("#")]
    cols = lines[0].split("\t")
    for line in lines[1:]:
        row = dict(zip(cols, line.split("\t")))
        rows[row["arch"]] = {k: ("" if v == "-" else v) for k, v in row.items()}
    return rows


def write_gguf(path, arch, row, window=WINDOW, finetuned=None, scaling="linear", sections=False, n_rot=HEAD):
    """The position keys convert_hf_to_gguf.py writes (no tensors: posenc reads the header only)."""
    import gguf
    w = gguf.GGUFWriter(path, arch)
    w.add_context_length(8192)
    w.add_embedding_length(HEAD * HEADS)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(1024)
    w.add_head_count(HEADS)
    w.add_head_count_kv(2)
    w.add_key_length(HEAD)
    w.add_value_length(HEAD)
    w.add_rope_dimension_count(n_rot)
    w.add_rope_freq_base(BASE)
    if scaling == "linear":
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(FACTOR["linear"])
    elif scaling == "yarn":
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(FACTOR["yarn"])
        w.add_rope_scaling_orig_ctx_len(1024)
    if row["rope_type"] in ("MROPE", "IMROPE") or sections:
        w.add_rope_dimension_sections([8, 12, 12, 0])  # 32 pairs = dimension_count / 2
    if window is not None and "ATTENTION_SLIDING_WINDOW" in row.get("rope_keys", ""):
        w.add_sliding_window(window)
    if finetuned is not None:
        w.add_rope_scaling_finetuned(finetuned)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def expected_layers(row, window, finetuned, scaling):
    """llama.cpp's per-layer reading, from the fixture's facts only."""
    rt = row["rope_type"]
    if "?" in rt:  # glm4: use_mrope() ? MROPE : NORM -- no sections written, so the else branch
        rt = rt.split(":")[-1].strip()
    pattern, dense_first = 0, False
    if row["swa_pattern"]:
        first = row["swa_pattern"].split(";")[0].split(",")
        when = row["swa_when"]
        if (when == "always" or (when == "sliding_window>0" and bool(window))
                or (when == "unless sliding_window==0" and window != 0)):
            pattern, dense_first = int(first[0]), len(first) > 1 and first[1] == "true"
    # build_graph picks one builder: the *_iswa one when the SWA pattern is set (llama4), else the other
    builders = dict(b.split(":") for b in row["builder_facts"].split(";"))
    if len(builders) > 1:
        iswa = [b for b in builders if "iswa" in b]
        builders = {b: f for b, f in builders.items() if (b in iswa) == bool(pattern)}
    facts = set(",".join(builders.values()).split(",")) - {"", "-"}
    step = 0
    if "nope_step" in facts:
        step = 4  # llama_hparams::n_no_rope_layer_step's default
        if row["nope_step"].isdigit():
            step = int(row["nope_step"])
        elif row["nope_step"] == "n_layer" and row["swa_when"] == "unless sliding_window==0" and window == 0:
            step = LAYERS
    swa_rope = dict(kv.split("=") for kv in row["swa_rope"].split(",") if kv)
    out = []
    for il in range(LAYERS):
        swa = bool(pattern) and ((il % pattern != 0) if dense_first else (il % pattern < pattern - 1))
        rope = rt != "NONE"
        if step:
            rope = rope and (il + 1) % step != 0
        if "rope_swa_only" in facts and pattern:
            rope = rope and swa
        if "use_rope" in facts and "ROPE_SCALING_FINETUNED" in row["rope_keys"] and finetuned is False:
            rope = False
        plain = swa and ("swa_plain" in facts or swa_rope.get("scale", "").startswith("1.0"))
        base = float(swa_rope["base"].rstrip("f")) if swa and "base" in swa_rope else BASE
        out.append(dict(rope=rope, swa=swa, layout="interleaved" if rt == "NORM" else "half",
                        scaling="none" if plain or scaling == "none" else scaling, base=base,
                        factor=1.0 if plain or scaling == "none" else FACTOR[scaling]))
    return out, rt


def check_arch(c, d, arch, row, window=WINDOW, finetuned=None, scaling="linear", n_rot=HEAD):
    label = f"{arch} (window {window}, finetuned {finetuned}, {scaling}, n_rot {n_rot})"
    path = write_gguf(os.path.join(d, arch + ".gguf"), arch, row, window, finetuned, scaling, n_rot=n_rot)
    # a window llama.cpp's loader sets itself when the file has none (gemma2: 4096)
    file_window = window if window is not None else int(row["n_swa_set"].split(";")[0] or 0)
    rc, out, err = run("rope", "explain", "--json", "--config", path)
    os.remove(path)
    if not c.check(rc == 0, f"{label}: read (rc {rc}) {err.strip()[:200]}"):
        return
    layers = json.loads(out)["layers"]
    want, rt = expected_layers(row, window, finetuned, scaling)
    bad = []
    for il, (got, exp) in enumerate(zip(layers, want)):
        if rt == "NONE":
            if got["scheme"] == "rope":
                bad.append(f"layer {il}: rope, llama.cpp rope type NONE")
            continue
        if (got["scheme"] == "rope") != exp["rope"]:
            bad.append(f"layer {il}: {got['scheme']}, llama.cpp {'rope' if exp['rope'] else 'no rope'}")
            continue
        # the kind is checked where llama.cpp's mask is a sliding window (STANDARD); llama4's CHUNKED
        # layers attend in 8192-token chunks, a mask posenc does not model (their positions are checked)
        standard = "STANDARD" in row["swa_type"]
        if standard and exp["swa"] != (got.get("kind") == "sliding_attention"):
            bad.append(f"layer {il}: kind {got.get('kind')}, llama.cpp swa={exp['swa']}")
        if standard and exp["swa"] and got.get("sliding_window") != file_window:
            bad.append(f"layer {il}: window {got.get('sliding_window')}, llama.cpp {file_window}")
        if not exp["rope"]:
            continue
        for k in ("layout", "scaling"):
            if got[k] != exp[k]:
                bad.append(f"layer {il}: {k} {got[k]}, llama.cpp {exp[k]}")
        if got["base"] != exp["base"] or got["rotary_dim"] != n_rot or got["factor"] != exp["factor"]:
            bad.append(f"layer {il}: base {got['base']} rotary_dim {got['rotary_dim']} factor {got['factor']}, "
                       f"llama.cpp {exp['base']} {n_rot} {exp['factor']}")
    c.check(len(layers) == LAYERS and not bad,
            f"{label}: {len(layers)} layers as llama.cpp ({rt}) {'; '.join(bad[:3])}")


def main():
    c = Checks()
    rows = load_fixture()
    d = tmpdir()
    c.check(len(rows) > 100 and "llama" in rows, f"fixture: {len(rows)} llama.cpp archs")
    c.check(READ - set(rows) == NOT_IN_LLAMA_CPP,
            f"posenc's GGUF archs missing from llama.cpp's list: {sorted(READ - set(rows))} "
            f"(expected {sorted(NOT_IN_LLAMA_CPP)})")
    for arch, row in sorted(rows.items()):
        if arch in READ:
            check_arch(c, d, arch, row)
            continue
        path = write_gguf(os.path.join(d, "refused.gguf"), arch, row)
        rc, out, err = run("rope", "explain", "--json", "--config", path)
        os.remove(path)
        c.check(rc != 0 and f"'{arch}'" in err and "not an architecture posenc knows" in err and not out,
                f"{arch}: refused by name (rc {rc}: {err.strip()[:120]})")
    # the load_hparams branches: OLMo 3 (olmo2 + sliding window) with YaRN, olmo2 / gemma3 without a
    # window (no SWA: every layer full, the file's scaling), llama4 with window 0 (RoPE on every layer),
    # granite's use_rope switch (rope.scaling.finetuned false: no RoPE at all)
    check_arch(c, d, "olmo2", rows["olmo2"], scaling="yarn")
    check_arch(c, d, "olmo2", rows["olmo2"], window=None, scaling="yarn")
    check_arch(c, d, "gemma3", rows["gemma3"], window=None)
    check_arch(c, d, "gemma3", rows["gemma3"], window=0)
    check_arch(c, d, "llama4", rows["llama4"], window=0)
    check_arch(c, d, "phi3", rows["phi3"], window=None)
    check_arch(c, d, "gemma2", rows["gemma2"], window=None)
    # rope.dimension_count below the head: a partial rotation where llama.cpp runs one, refused where its
    # loader refuses the file (llama, deci, falcon: "invalid n_rot"); deepseek2 (MLA) and the M-RoPE
    # archs have their own head rules and are left out here
    for arch, row in sorted(rows.items()):
        if arch not in READ or row["rope_type"] in ("NONE", "MROPE", "IMROPE") or arch == "deepseek2":
            continue
        if row["n_rot_is_head"] != "yes":
            check_arch(c, d, arch, row, n_rot=HEAD // 2)
            continue
        path = write_gguf(os.path.join(d, "partial.gguf"), arch, row, n_rot=HEAD // 2)
        rc, out, err = run("rope", "explain", "--json", "--config", path)
        os.remove(path)
        c.check(rc != 0 and f"{arch}.rope.dimension_count" in err and "invalid n_rot" in err and not out,
                f"{arch} with rope.dimension_count {HEAD // 2} < head {HEAD}: refused as llama.cpp does (rc {rc})")
    # glm4 with rope.dimension_sections: llama.cpp rotates it with M-RoPE (use_mrope()); posenc refuses
    path = write_gguf(os.path.join(d, "glm4v.gguf"), "glm4", rows["glm4"], sections=True)
    rc, out, err = run("rope", "explain", "--json", "--config", path)
    os.remove(path)
    c.check(rc != 0 and "glm4" in err and "dimension_sections" in err and not out,
            f"glm4 with rope.dimension_sections (llama.cpp: {rows['glm4']['rope_type']}): refused (rc {rc})")
    for arch in ("granite", "granitemoe", "minicpm"):
        check_arch(c, d, arch, rows[arch], finetuned=False)
        check_arch(c, d, arch, rows[arch], finetuned=True)
    # docs/rope.md lists the same read / refused split
    doc = open(DOC, encoding="utf-8").read()
    sec = doc[doc.index("#### Which GGUF architectures are read"):]
    sec = sec[:sec.index("\n### ")]
    read_part = sec[sec.index("Read ("):sec.index("Refused by name (")]
    refused_part = sec[sec.index("Refused by name ("):]
    names = lambda text: set(re.findall(r"[a-z][a-z0-9_.-]*[a-z0-9]", text))
    want_read, want_refused = READ & set(rows), set(rows) - READ
    c.check(want_read <= names(read_part) and not (want_refused & names(read_part)),
            f"docs/rope.md lists the {len(want_read)} read archs "
            f"(missing {sorted(want_read - names(read_part))}, wrongly {sorted(want_refused & names(read_part))})")
    c.check(want_refused <= names(refused_part) and not (want_read & names(refused_part)),
            f"docs/rope.md lists the {len(want_refused)} refused archs "
            f"(missing {sorted(want_refused - names(refused_part))}, wrongly {sorted(want_read & names(refused_part))})")
    c.finish()


if __name__ == "__main__":
    main()
