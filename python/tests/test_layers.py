"""Keras 3 layers (posenc.keras, keras.ops on the torch backend) and the PyTorch nn.Modules
(posenc.nn, posenc.torch.Rotary) against posenc's C tables and C rotation.

Tolerance: none. Every value here is compared bit for bit: the sinusoidal, learned and ALiBi
layers hold the C tables themselves; the Keras RoPE computes x*cos + rotate(x)*sin in float32,
which rounds as the C kernel does (each product rounded, then the sum; no FMA on torch's CPU
eager ops), on the C kernel's own cos/sin values."""
import os
import shutil
import tempfile

import numpy as np
import pytest

# Keras reads these at import: the torch backend (no TensorFlow), and its config folder
# (~/.keras/keras.json otherwise) in a folder of this test, removed at exit; keras' torch
# backend imports torch._dynamo, which makes its cache folder at import (under the temporary
# folder unless TORCHINDUCTOR_CACHE_DIR says where): in the same folder
_KERAS_HOME = tempfile.mkdtemp(prefix="posenc-keras-")
os.environ["KERAS_BACKEND"] = "torch"
os.environ["KERAS_HOME"] = _KERAS_HOME
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_KERAS_HOME, "inductor")

import keras  # noqa: E402
import torch  # noqa: E402

import posenc  # noqa: E402
import posenc.keras as pk  # noqa: E402
import posenc.nn as pnn  # noqa: E402
import posenc.torch as pt  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _keras_home():
    yield
    shutil.rmtree(_KERAS_HOME, ignore_errors=True)


def _np(t):
    return keras.ops.convert_to_numpy(t)


def _same_bits(a, b):
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    return a.shape == b.shape and np.array_equal(a.view(np.int32), b.view(np.int32))


def test_keras_runs_on_torch():
    assert keras.backend.backend() == "torch"


# ---- sinusoidal ------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"layout": "half", "freqs": "t2t", "base": 500.0}])
def test_keras_sinusoidal_is_the_c_table(kw):
    x = np.zeros((2, 7, 12), np.float32)
    layer = pk.SinusoidalEmbedding(64, **kw)
    got = _np(layer(x, start_index=5))
    want = posenc.sinusoid_table(64, 12, **kw)[5:12]
    assert got.shape == (2, 7, 12)
    assert _same_bits(got[0], want) and _same_bits(got[1], want)
    assert not layer.trainable_weights


def test_torch_sinusoidal_is_the_c_table():
    pe = pnn.SinusoidalEmbedding(64, 12, mode="torch")
    ids = torch.tensor([[0, 3, 63], [7, 8, 9]])
    assert _same_bits(pe(ids).numpy(), posenc.sinusoid_table(64, 12, mode="torch")[ids.numpy()])
    with pytest.raises(IndexError, match="position 64 is outside the table's 0..63"):
        pe(torch.tensor([64]))


# ---- learned ---------------------------------------------------------------------------------

def test_keras_learned_is_the_c_init_and_trains():
    x = np.zeros((1, 5, 8), np.float32)
    layer = pk.LearnedEmbedding(16, seed=7)
    got = _np(layer(x, start_index=3))
    assert _same_bits(got[0], posenc.learned_init(16, 8, seed=7)[3:8])
    assert len(layer.trainable_weights) == 1


def test_torch_learned_forward_backward_are_the_c_kernels():
    wpe = pnn.LearnedEmbedding(10, 6, seed=3, padding_idx=0)
    table = posenc.learned_init(10, 6, seed=3, padding_idx=0)
    assert _same_bits(wpe.weight.detach().numpy(), table)
    ids = torch.tensor([[1, 4, 4, 0], [9, 1, 2, 4]])  # repeated ids accumulate, row 0 is padding
    y = wpe(ids)
    assert _same_bits(y.detach().numpy(), table[ids.numpy()])
    g = torch.randn(y.shape, generator=torch.Generator().manual_seed(0))
    y.backward(g)
    want = np.zeros_like(table)
    np.add.at(want, ids.numpy().reshape(-1), g.numpy().reshape(-1, 6))  # in order, as the C backward
    want[0] = 0.0  # padding_idx gets no gradient (nn.Embedding's rule)
    assert _same_bits(wpe.weight.grad.numpy(), want)
    assert _same_bits(wpe.weight.grad.numpy(), posenc.learned_backward(g.numpy().reshape(-1, 6), ids.numpy(), 10,
                                                                         padding_idx=0))
    with pytest.raises(posenc.Error, match="10"):
        wpe(torch.tensor([10]))


# ---- RoPE ------------------------------------------------------------------------------------

ROPES = [
    ({"base": 10000.0}, None),
    ({"base": 500000.0}, "gptj"),
    ({"base": 10000.0, "scaling": "yarn", "factor": 4.0, "original_max_position": 16}, None),  # A != 1
    ({"base": 10000.0, "partial_rotary_factor": 0.5}, "neox"),  # channels past R untouched
    ({"base": 10000.0, "mode": "torch", "scaling": "linear", "factor": 2.0}, None),
]


@pytest.mark.parametrize("flags,layout", ROPES)
def test_keras_rope_is_the_c_rotation(flags, layout):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 9, 3, 16)).astype(np.float32)  # [B, S, H, D]
    layer = pk.RotaryEmbedding(40, layout=layout, **flags)
    got = _np(layer(x, start_index=11))
    want = x.copy()
    posenc.apply_rope_(want, offset=11, layout=layout, tensor_layout="bshd", **flags)
    assert _same_bits(got, want)
    # [B, H, S, D]
    xh = np.ascontiguousarray(x.transpose(0, 2, 1, 3))
    got_h = _np(pk.RotaryEmbedding(40, layout=layout, sequence_axis=2, **flags)(xh, start_index=11))
    assert _same_bits(got_h, want.transpose(0, 2, 1, 3))


def test_keras_rope_refuses_what_a_table_cannot_hold():
    x = np.zeros((1, 4, 1, 8), np.float32)
    with pytest.raises(posenc.UnsupportedError, match="dynamic"):
        pk.RotaryEmbedding(16, base=10000.0, scaling="dynamic", factor=2.0, original_max_position=8)(x)
    with pytest.raises(posenc.InvalidArgumentError, match="base"):
        pk.RotaryEmbedding(16)(x)  # no silent default base
    with pytest.raises(posenc.InvalidArgumentError, match="sequence_axis"):
        pk.RotaryEmbedding(16, base=10000.0, sequence_axis=3)


@pytest.mark.parametrize("flags,layout", ROPES)
def test_torch_rotary_module_is_the_c_rotation(flags, layout):
    rng = np.random.default_rng(2)
    q = rng.standard_normal((2, 5, 2, 16)).astype(np.float32)
    k = rng.standard_normal((2, 5, 1, 16)).astype(np.float32)
    pos = np.array([[0, 1, 2, 3, 4], [30, 31, 32, 33, 34]])
    rot = pt.Rotary(tensor_layout="bshd", layout=layout, head_dim=16, **flags)
    qr, kr = rot(torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(pos))
    for got, x in ((qr, q), (kr, k)):
        want = x.copy()
        posenc.apply_rope_(want, positions=pos, layout=layout, tensor_layout="bshd", **flags)
        assert _same_bits(got.numpy(), want)


# ---- ALiBi -----------------------------------------------------------------------------------

def test_torch_alibi_is_the_c_bias():
    bias = pnn.ALiBiBias(6)
    got = bias(4, 7, query_start=3)
    slopes = posenc.alibi_slopes(6, dtype="f32")
    assert _same_bits(bias.slopes.numpy(), slopes)
    assert _same_bits(got.numpy(), posenc.alibi_bias(slopes, 4, 7, query_start=3))


@pytest.mark.parametrize("form", ["causal", "symmetric"])
def test_keras_alibi_is_the_c_bias(form):
    layer = pk.ALiBiBias(6, form=form)
    got = _np(layer(np.zeros((2, 6, 4, 9), np.float32), query_start=5, key_start=1))
    bias = posenc.alibi_bias(posenc.alibi_slopes(6, dtype="f32"), 4, 9, query_start=5, key_start=1, form=form)
    want = np.zeros_like(bias) + bias  # the layer adds the bias to the scores (0 + -0 is +0)
    assert _same_bits(got[0], want) and _same_bits(got[1], want)
    with pytest.raises(posenc.InvalidArgumentError, match="scores must be"):
        pk.ALiBiBias(6)(np.zeros((1, 5, 4, 4), np.float32))
