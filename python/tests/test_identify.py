"""posenc.identify_rope: the C fit (posenc_rope_identify / posenc_rope_rotation_cache) through
ctypes, as a dataclass with the fields and the words of `posenc rope identify`. Caches are made
by posenc's own tables in HF's float32 steps (mode "torch", bit-identical to HF: test_rope.py)
and ggml's (mode "ggml", bit-identical to ggml: tests/test_rope_ggml.c), by HF's formulas in
torch (the rotation), and planted deviations; the words must be the CLI's, the config
departures the CLI's sentences."""
import math
import os
import subprocess

import numpy as np
import pytest

import posenc
from conftest import BIN

torch = pytest.importorskip("torch")  # conftest: a skip counts as a failure


def hf_cache(**kw):
    return posenc.rope_cos_sin(head_dim=128, positions=4096, mode="torch", duplicate="half", **kw)


def test_hf_llama3_cache_fields_and_words_match_the_cli(tmp_path):
    c, s = hf_cache(base=500000, scaling="llama3", factor=8, original_max_position=8192)
    r = posenc.identify_rope(c, s)
    assert (r.layout, r.rotary_dim, r.offset, r.scaling, r.base, r.factor, r.original_max_position) == \
        ("hf", 128, 0, "llama3", 500000.0, 8.0, 8192)
    assert r.arithmetic == "hf-f32" and r.residual["hf-f32"] == (0, 0) and r.residual["exact"][1] > 0
    assert r.grid == "f32" and "llama3_bands" in r.ambiguous and r.params.mode == "torch_compat"
    assert r.inv_freq.shape == (64,) and r.pair_factor.shape == (64,)
    assert abs(r.pair_factor[-1] - 8) < 1e-4 and abs(r.pair_factor[0] - 1) < 1e-6
    np.save(tmp_path / "c.npy", c)
    np.save(tmp_path / "s.npy", s)
    cli = subprocess.run([BIN, "rope", "identify", str(tmp_path / "c.npy"), "--sin", str(tmp_path / "s.npy")],
                         capture_output=True, text=True, check=True).stdout
    norm = [" ".join(line.split()) for line in cli.splitlines()]
    for w in r.words:
        if w.startswith("cannot tell apart"):
            continue
        assert any(" ".join(w.split()) in line for line in norm), (w, cli)


def test_ggml_cache_is_told_from_hf():
    c, s = posenc.rope_cos_sin(head_dim=128, positions=2048, mode="ggml", scaling="yarn", factor=4,
                               original_max_position=4096)
    cache = np.empty((2048, 128), np.float32)
    cache[:, 0::2], cache[:, 1::2] = c, s
    r = posenc.identify_rope(cache)
    assert r.layout == "ggml" and r.scaling == "yarn" and r.factor == 4 and r.original_max_position == 4096
    assert r.arithmetic == "ggml-f32" and r.residual["ggml-f32"][1] == 0 and r.residual["hf-f32"][1] > 0
    assert r.params.mode == "ggml"
    assert abs(r.magnitude - (0.1 * math.log(4) + 1)) < 1e-6


def test_torch_bf16_cache_and_layout_override():
    c, s = hf_cache(base=10000)
    ct, st = torch.from_numpy(c).bfloat16(), torch.from_numpy(s).bfloat16()
    r = posenc.identify_rope(ct, st, layout="hf")
    assert r.grid == "bf16" and r.layout == "hf" and r.scaling == "none" and r.residual["hf-f32"][1] == 0
    vllm = np.concatenate([c[:, :64], s[:, :64]], 1)
    assert posenc.identify_rope(vllm).layout == "vllm"
    assert posenc.identify_rope(c[:, :64], s[:, :64]).layout == "plain"


def test_rotated_q_with_its_input_partial_rotary():
    """HF's apply_rotary_pos_emb on the first 32 of 80 channels (Phi-2), 4 heads, in torch."""
    T, R = 1024, 32
    inv = 1.0 / (10000.0 ** (torch.arange(0, R, 2, dtype=torch.int64).float() / R))
    freqs = torch.outer(torch.arange(T).float(), inv)
    emb = torch.cat((freqs, freqs), -1)
    x = torch.randn(T, 4, 80, generator=torch.Generator().manual_seed(3))
    q = x[..., :R]
    a, b = q.chunk(2, -1)
    y = x.clone()
    y[..., :R] = q * emb.cos()[:, None] + torch.cat((-b, a), -1) * emb.sin()[:, None]
    r = posenc.identify_rope(input=x, rotated=y)
    assert r.rotation.layout == "half" and r.rotation.rotary_offset == 0 and r.rotation.rotary_dim == 32
    assert r.rotation.head_dim == 80 and r.rotation.heads == 4
    assert r.scaling == "none" and r.base == 10000 and r.arithmetic == "hf-f32"
    assert r.residual["hf-f32"][0] <= 4 and r.residual["exact"][0] > 100  # y's rounding: ~1 ULP
    assert r.words[0].startswith("rotated channels 0..31 (rotary dim 32, half pairs); 48 channels pass through")


def test_against_a_config_names_the_dropped_attention_factor():
    c, s = hf_cache(base=10000, scaling="yarn", factor=4, original_max_position=4096, fold_attention=False)
    cfg = {"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 8, "max_position_embeddings": 16384,
           "rope_theta": 10000.0, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                   "original_max_position_embeddings": 4096}}
    r = posenc.identify_rope(c, s, config=cfg)
    assert r.config_matches is False
    assert any("magnitude 1 where the config's yarn gives 1.13863: the attention factor was dropped" in d
               for d in r.departures), r.departures
    c2, s2 = hf_cache(base=10000, scaling="yarn", factor=4, original_max_position=4096)
    r2 = posenc.identify_rope(c2, s2, config=cfg)
    assert r2.config_matches and r2.config_arithmetic == "HF's float32 arithmetic" and not r2.departures
    assert r2.config_residual["hf-f32"] == (0, 0)


def test_bad_input_is_refused_by_name():
    c, s = hf_cache(base=10000)
    bad = c.copy()
    bad[7, 3] = np.nan
    with pytest.raises(posenc.InvalidArgumentError, match=r"cache value at \[7, 3\] is nan"):
        posenc.identify_rope(bad, s)
    with pytest.raises(posenc.InvalidArgumentError, match=r"sin table is \[4096, 64\] but the cos table is"):
        posenc.identify_rope(c, s[:, :64])
    with pytest.raises(posenc.InvalidArgumentError, match="layout"):
        posenc.identify_rope(c, s, layout="mlx")
    with pytest.raises(posenc.InvalidArgumentError, match="input= and rotated= go together"):
        posenc.identify_rope(input=c)
    with pytest.raises(posenc.InvalidArgumentError, match="y is no rotation of x"):
        posenc.identify_rope(input=c[:, :16], rotated=c[:, :16] * np.linspace(0.55, 2.05, 16, dtype=np.float32))
    with pytest.raises(posenc.KeywordError, match="sine"):
        posenc.identify_rope(c, sine=s)


def test_one_table_yarn_magnitude_is_the_schemes_own():
    """Before: a cos-only cache's magnitude was made explicit against the first-guess factor
    (3.84 from the noisy one-table profile), so it read 'stated explicitly' at 16384 rows and
    missed every value by up to 16 ULP at 131072 rows."""
    c, _ = posenc.rope_cos_sin(head_dim=128, positions=16384, base=1e6, scaling="yarn", factor=4,
                               original_max_position=32768, mode="torch", duplicate="half")
    r = posenc.identify_rope(c)
    assert r.scaling == "yarn" and r.factor == 4 and r.attention_factor is None
    assert r.arithmetic == "hf-f32" and r.residual["hf-f32"] == (0, 0)


def test_longrope_switch_fields():
    """A cache whose factors switch at row 1024 (short 1 + k/400, long 1 + k/8, one run of positions)."""
    K, T = 48, 2048
    k = np.arange(K)
    w0 = 10000.0 ** (-2.0 * k / (2 * K))
    pos = np.arange(T, dtype=np.float64)[:, None]
    ang = np.where(pos < 1024, pos * (w0 / (1 + k / 400.0)), pos * (w0 / (1 + k / 8.0)))
    r = posenc.identify_rope(np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32))
    assert r.scaling == "longrope" and r.switch_position == 1024 and r.long_offset == 1024
    # the base and a smooth factor profile trade off (the base is the round number within 3%),
    # so compare what the data fixes: long / short per pair
    ratio = r.long_pair_factor / r.pair_factor
    assert np.abs(ratio / ((1 + k / 8.0) / (1 + k / 400.0)) - 1).max() < 1e-5
