"""CLI and Python name the same departures from the same library call.

`posenc rope identify CACHE --config C --json` and posenc.identify_rope(cache, config=C)
both call posenc_rope_identity_compare; each words the departures itself (the tool in
cli/identify_words.c, the package in identify.py's _departure_words). For caches that
depart from a config in many ways (dropped and DeepSeek attention factors, positions from
1, another base, another scheme, a partial rotary, 16-bit rounding, LongRoPE's other list),
the two must agree on matches, residuals, the kinds and every sentence, byte for byte. A
wording changed on one side only, or a Python call that differs from the tool's (another
config reading, sin left out, another layout), fails here."""
import json
import subprocess

import numpy as np
import pytest

import posenc
from conftest import BIN

torch = pytest.importorskip("torch")  # conftest: a skip counts as a failure

T = 2048
LLAMA = {"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 8, "max_position_embeddings": 16384}


def cfg(**rope):
    return {**LLAMA, **rope}


YARN = cfg(rope_theta=10000.0, rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                             "original_max_position_embeddings": 4096})
DEEPSEEK = cfg(rope_theta=10000.0, rope_scaling={"rope_type": "yarn", "factor": 40.0, "mscale": 0.707,
                                                 "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096})
LLAMA3 = cfg(rope_theta=500000.0, rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})
PLAIN = cfg(rope_theta=10000.0)
# Phi-3: a family whose rotary class reads the factor (Llama's does not, and posenc refuses the key there)
PARTIAL = cfg(model_type="phi3", rope_theta=10000.0, partial_rotary_factor=0.5)


def hf(**kw):
    return posenc.rope_cos_sin(head_dim=128, positions=T, mode="torch", duplicate="half", **kw)


def cases():
    yarn = dict(base=10000, scaling="yarn", factor=4, original_max_position=4096)
    out = []
    out.append(("yarn, attention factor dropped", *hf(fold_attention=False, **yarn), YARN))
    out.append(("yarn, matches", *hf(**yarn), YARN))
    out.append(("positions from 1", *posenc.rope_cos_sin(head_dim=128, count=T, start=1, mode="torch",
                                                         duplicate="half", **yarn), YARN))
    out.append(("base 500000 for 10000", *hf(base=500000), PLAIN))
    out.append(("linear for llama3", *hf(base=500000, scaling="linear", factor=8), LLAMA3))
    out.append(("deepseek mscale read as default yarn",
                *hf(base=10000, scaling="yarn", factor=40, original_max_position=4096), DEEPSEEK))
    out.append(("full rotary for a partial config", *hf(base=10000), PARTIAL))
    c, s = hf(**yarn)
    out.append(("f16 cache", c.astype(np.float16), s.astype(np.float16), YARN))
    c, s = hf(base=10000, scaling="yarn", factor=2, original_max_position=4096, fold_attention=False)
    out.append(("bf16, other factor", torch.from_numpy(c).to(torch.bfloat16),
                torch.from_numpy(s).to(torch.bfloat16), YARN))
    return out


def tool(tmp_path, name, cos, sin, config):
    files = []
    bf16 = []
    for tag, a in (("cos", cos), ("sin", sin)):
        if isinstance(a, torch.Tensor):  # the tool reads bf16 as uint16 bits with --bf16
            a = a.contiguous().view(torch.int16).numpy().view(np.uint16)
            bf16 = ["--bf16"]
        path = tmp_path / ("%s.npy" % tag)
        np.save(path, a)
        files.append(str(path))
    cpath = tmp_path / "config.json"
    cpath.write_text(json.dumps(config))
    done = subprocess.run([BIN, "rope", "identify", files[0], "--sin", files[1], "--config", str(cpath), "--json"]
                          + bf16, capture_output=True, text=True)
    assert done.returncode == 0, (name, done.stderr)
    return json.loads(done.stdout)["config"]


def test_cli_and_python_give_the_same_departures(tmp_path):
    kinds_seen = set()
    for i, (name, cos, sin, config) in enumerate(cases()):
        d = tmp_path / str(i)
        d.mkdir()
        cli = tool(d, name, cos, sin, config)
        py = posenc.identify_rope(cos, sin, config=config)
        print("%-40s %s" % (name, list(py.departure_kinds)))
        assert py.config_matches == cli["matches"], name
        assert py.config_arithmetic == cli["arithmetic"], name
        assert py.config_residual == {k: (v["max_ulp"], v["differ"]) for k, v in cli["residual"].items()}, name
        assert list(py.departure_kinds) == cli["departure_kinds"], (name, py.departure_kinds, cli)
        assert list(py.departures) == cli["departures"], (name, py.departures, cli["departures"])
        assert cli["departures_dropped"] == 0, name
        kinds_seen.update(py.departure_kinds)
    # the cases reach these kinds (else the comparison above proves little)
    want = {"magnitude", "offset", "frequencies", "rotary_dim", "grid"}
    assert want <= kinds_seen, kinds_seen
