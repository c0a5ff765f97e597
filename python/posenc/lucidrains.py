"""A drop-in for lucidrains' rotary_embedding_torch.RotaryEmbedding (rotary-embedding-torch
0.9.1) that rotates with posenc's C kernels:

    from posenc.lucidrains import RotaryEmbedding      # was: from rotary_embedding_torch import ...
    rot = RotaryEmbedding(dim=32)                       # same arguments
    q = rot.rotate_queries_or_keys(q)                   # [B, H, S, D] (seq_before_head_dim=True: [B, S, H, D])
    q, k = rot.rotate_queries_with_cached_keys(q, k)

Same bits as the package in float32 (python/tests/test_lucidrains.py): its layout is GPT-J's
interleaved pairs, its angles HF's float32 chain (inv_freq = 1 / theta ** (arange(0, d, 2) / d)
in float32, angle = position * inv_freq rounded once), which is posenc's mode="torch";
interpolate_factor f is posenc's linear scaling, the same bits when f is a power of two
(its angle is (p / f) * w, posenc's p * (w / f): one rounding apart otherwise, so another f is
refused by name). Refused by name, because posenc has no such schedule: freqs_for="pixel" /
"constant", custom_freqs, learned_freq=True, use_xpos=True. float16/bfloat16: the package
computes positions in the input's dtype (bfloat16 holds integers exactly only up to 256,
float16 up to 2048), posenc in integers: the same bits while every position is below that.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

import torch as _torch

from ._common import integer
from ._errors import InvalidArgumentError, UnsupportedError
from .config import RopeParams, rope_frequencies
from .torch import apply_rope


class RotaryEmbedding(_torch.nn.Module):
    """rotary_embedding_torch.RotaryEmbedding's arguments and its rotate_queries_or_keys /
    rotate_queries_with_cached_keys / forward (angles) methods, on posenc (module docstring
    says what is refused and why). Differentiable (posenc.torch.apply_rope)."""

    def __init__(self, dim: int, custom_freqs: Any = None, freqs_for: str = "lang", theta: float = 10000,
                 max_freq: float = 10, num_freqs: int = 1, learned_freq: bool = False, use_xpos: bool = False,
                 xpos_scale_base: int = 512, interpolate_factor: float = 1.0, theta_rescale_factor: float = 1.0,
                 seq_before_head_dim: bool = False, cache_if_possible: bool = True, cache_max_seq_len: int = 8192):
        super().__init__()
        refused = [(custom_freqs is not None, "custom_freqs", "a frequency list of your own"),
                   (freqs_for != "lang", "freqs_for=%r" % (freqs_for,),
                    "pixel (linspace(1, max_freq/2) * pi) and constant frequencies are not a RoPE base schedule"),
                   (bool(learned_freq), "learned_freq=True", "trainable frequencies"),
                   (bool(use_xpos), "use_xpos=True", "xPos's per-position scale")]
        for bad, name, why in refused:
            if bad:
                raise UnsupportedError("posenc.lucidrains.RotaryEmbedding: %s is not reproduced (%s); use "
                                       "rotary_embedding_torch for it" % (name, why), 8)
        self.dim = integer(dim, "dim")
        if self.dim <= 0 or self.dim % 2:
            raise InvalidArgumentError("dim must be a positive even number of rotated channels, got %d" % self.dim, 1)
        f = float(interpolate_factor)
        if not f >= 1.0:
            raise InvalidArgumentError("interpolate_factor must be >= 1, got %r" % (interpolate_factor,), 1)
        if math.frexp(f)[0] != 0.5:
            raise UnsupportedError("interpolate_factor=%r: the package rounds (p / f) * w, posenc p * (w / f); they "
                                   "agree bit for bit only for a power of two (1, 2, 4, ...)" % (interpolate_factor,), 8)
        self.interpolate_factor = f
        # the package's own rescale, in Python floats as it does
        self.theta = float(theta) * float(theta_rescale_factor) ** (self.dim / (self.dim - 2))
        self.seq_before_head_dim = bool(seq_before_head_dim)
        self.default_seq_dim = -3 if seq_before_head_dim else -2
        self._params: Dict[int, RopeParams] = {}

    def params(self, head_dim: int) -> RopeParams:
        """posenc's RopeParams for a head of head_dim channels (the first dim rotate)."""
        p = self._params.get(head_dim)
        if p is None:
            scaling = {} if self.interpolate_factor == 1.0 else dict(scaling="linear", factor=self.interpolate_factor)
            p = RopeParams(head_dim=head_dim, rotary_dim=self.dim, base=self.theta, mode="torch", layout="gptj",
                           **scaling)
            p.check()
            self._params[head_dim] = p
        return p

    def _tensor_layout(self, t: _torch.Tensor, seq_dim: Optional[int]) -> str:
        seq_dim = self.default_seq_dim if seq_dim is None else seq_dim
        if t.dim() not in (3, 4):
            raise InvalidArgumentError("t must be [B, S, D], [B, H, S, D] or [B, S, H, D], got shape %s"
                                       % (tuple(t.shape),), 1)
        seq_dim = seq_dim - t.dim() if seq_dim >= 0 else seq_dim
        if seq_dim == -2:
            return "bhsd"  # [B, H, S, D]; a 3-D [B, S, D] is posenc's [H, S, D]
        if seq_dim == -3 and t.dim() == 4:
            return "bshd"
        raise InvalidArgumentError("seq_dim must be the axis before the features (-2) or, for 4-D t, "
                                   "before the heads (-3), got %r" % (seq_dim,), 1)

    def rotate_queries_or_keys(self, t: _torch.Tensor, seq_dim: Optional[int] = None, offset: int = 0,
                               scale: Any = None) -> _torch.Tensor:
        if scale is not None and not (isinstance(scale, (int, float)) and scale == 1):
            raise UnsupportedError("scale= (xPos) is not reproduced by posenc", 8)
        tl = self._tensor_layout(t, seq_dim)
        return apply_rope(t, offset=integer(offset, "offset"), tensor_layout=tl, layout="gptj",
                          params=self.params(t.shape[-1]))

    def rotate_queries_with_cached_keys(self, q: _torch.Tensor, k: _torch.Tensor, seq_dim: Optional[int] = None,
                                        offset: int = 0) -> Tuple[_torch.Tensor, _torch.Tensor]:
        tl = self._tensor_layout(q, seq_dim)
        axis = -2 if tl == "bhsd" else -3
        q_len, k_len = q.shape[axis], k.shape[axis]
        if q_len > k_len:
            raise InvalidArgumentError("q has %d positions but k only %d (q must be the last of k's)" % (q_len, k_len), 1)
        return (self.rotate_queries_or_keys(q, seq_dim=seq_dim, offset=k_len - q_len + offset),
                self.rotate_queries_or_keys(k, seq_dim=seq_dim))

    def forward(self, t: _torch.Tensor, seq_len: Optional[int] = None, offset: int = 0) -> _torch.Tensor:
        """The package's angles [*t.shape, dim] for (float) positions t: each pair's angle twice."""
        # the unscaled frequencies: the package divides the positions by interpolate_factor instead
        inv = _torch.tensor(rope_frequencies(RopeParams(head_dim=self.dim, base=self.theta, mode="torch")).inv_freq,
                            dtype=_torch.float32)
        return (t.to(_torch.float32)[..., None] * inv).repeat_interleave(2, dim=-1)

    def extra_repr(self) -> str:
        return "dim=%d, theta=%r, interpolate_factor=%r, seq_before_head_dim=%r" % (
            self.dim, self.theta, self.interpolate_factor, self.seq_before_head_dim)


__all__ = ["RotaryEmbedding"]
