"""rotary_embedding_torch (lucidrains' package, 0.9.1) parity: posenc's rotation, and its drop-in
posenc.lucidrains.RotaryEmbedding, against the package's own RotaryEmbedding running.

Tolerance: 0 ULP (bit for bit) in float32. The package's angle is HF's float32 chain
(posenc mode="torch") and its rotation t*cos + rotate_half(t)*sin rounds as posenc's kernel;
cos/sin are this torch's own float32 kernel in both (posenc's torch-compat mode calls torch's
MKL VML where torch has it). Cases posenc does not reproduce are refused by name (tested)."""
import numpy as np
import pytest
import torch
from rotary_embedding_torch import RotaryEmbedding as Lucid

import posenc
import posenc.torch as pt
from posenc.lucidrains import RotaryEmbedding

CASES = [  # (dim, head_dim, theta, interpolate_factor, theta_rescale_factor, seq_before_head_dim)
    (32, 32, 10000, 1.0, 1.0, False),
    (16, 32, 500000, 1.0, 1.0, False),   # partial: the first 16 channels rotate, the rest pass
    (32, 32, 10000, 2.0, 1.0, True),     # [B, S, H, D], linear interpolation by 2
    (32, 32, 10000, 4.0, 2.0, False),    # theta rescaled (NTK-style) as the package does it
]


@pytest.mark.parametrize("dim,head_dim,theta,interp,rescale,seq_first", CASES)
def test_posenc_rotation_is_the_packages_bits(dim, head_dim, theta, interp, rescale, seq_first):
    torch.manual_seed(0)
    shape = (2, 1500, 3, head_dim) if seq_first else (2, 3, 1500, head_dim)
    t = torch.randn(shape)
    theirs = Lucid(dim, theta=theta, interpolate_factor=interp, theta_rescale_factor=rescale,
                   seq_before_head_dim=seq_first)
    ours = RotaryEmbedding(dim, theta=theta, interpolate_factor=interp, theta_rescale_factor=rescale,
                           seq_before_head_dim=seq_first)
    want = theirs.rotate_queries_or_keys(t, offset=37)
    got = ours.rotate_queries_or_keys(t, offset=37)
    assert torch.equal(got, want)
    # the same through posenc.torch.apply_rope's own arguments (the parity is posenc's, not the class's)
    scaling = {} if interp == 1.0 else dict(scaling="linear", factor=interp)
    direct = pt.apply_rope(t, offset=37, tensor_layout="bshd" if seq_first else "bhsd", layout="gptj",
                           rotary_dim=dim, base=ours.theta, mode="torch", **scaling)
    assert torch.equal(direct, want)
    # cached keys: q is the last q_len positions of k
    q, k = t[..., -4:, :] if not seq_first else t[:, -4:], t
    for a, b in zip(ours.rotate_queries_with_cached_keys(q.contiguous(), k),
                    theirs.rotate_queries_with_cached_keys(q.contiguous(), k)):
        assert torch.equal(a, b)
    # the angles (forward)
    pos = torch.arange(50, dtype=torch.float32)
    assert torch.equal(ours(pos), theirs(pos))


def test_gradients_match():
    torch.manual_seed(1)
    t = torch.randn(1, 2, 64, 32, requires_grad=True)
    t2 = t.detach().clone().requires_grad_(True)
    g = torch.randn(1, 2, 64, 32)
    RotaryEmbedding(32).rotate_queries_or_keys(t).backward(g)
    Lucid(32).rotate_queries_or_keys(t2).backward(g)
    # R^T g: posenc's C inverse rotation vs autograd through the package's expression; the
    # same products and sums (c*g0 + s*g1 vs the transposed expression): 0 ULP measured
    assert torch.equal(t.grad, t2.grad)


@pytest.mark.parametrize("dtype,positions", [(torch.bfloat16, 250), (torch.float16, 2000)])
def test_half_precision_while_positions_are_exact(dtype, positions):
    """The package computes positions in t's dtype: the same bits while they are integers there."""
    torch.manual_seed(2)
    t = torch.randn(1, 2, positions, 32).to(dtype)
    assert torch.equal(RotaryEmbedding(32).rotate_queries_or_keys(t, offset=5),
                       Lucid(32).rotate_queries_or_keys(t, offset=5))


@pytest.mark.parametrize("kw,name", [(dict(freqs_for="pixel"), "freqs_for='pixel'"),
                                     (dict(freqs_for="constant"), "freqs_for='constant'"),
                                     (dict(use_xpos=True), "use_xpos"), (dict(learned_freq=True), "learned_freq"),
                                     (dict(custom_freqs=torch.ones(16)), "custom_freqs"),
                                     (dict(interpolate_factor=3.0), "interpolate_factor=3.0")])
def test_what_posenc_does_not_reproduce_is_refused_by_name(kw, name):
    with pytest.raises(posenc.UnsupportedError, match=name.replace("(", r"\(")):
        RotaryEmbedding(32, **kw)
