"""PyTorch nn.Modules for the absolute and bias encodings, on posenc's C tables (RoPE's modules
are posenc.torch.Rotary and RotaryEmbedding):

    import posenc.nn as pnn
    pe = pnn.SinusoidalEmbedding(512, 64)            # fixed table, "Attention Is All You Need"
    x = x + pe(position_ids)                         # [B, S] int ids -> [B, S, 64]
    wpe = pnn.LearnedEmbedding(1024, 768, seed=0)    # GPT-2's N(0, 0.02^2) init, C gather/backward
    bias = pnn.ALiBiBias(12)(q_len, k_len)           # [12, Lq, Lk], added to the attention scores

Values: the tables are posenc's C tables, bit for bit (sinusoid_table, learned_init,
alibi_bias); LearnedEmbedding's forward and backward run the C gather and its backward
(posenc_learned_gather / posenc_learned_backward) through an autograd.Function.
Tested in python/tests/test_layers.py.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch as _torch

from ._common import integer, keywords_checked
from ._errors import UnsupportedError
from .bias import alibi_bias, alibi_slopes
from .learned import learned_backward, learned_gather, learned_init
from .tables import sinusoid_table


def _ids(positions: Any, name: str = "positions") -> _torch.Tensor:
    if not isinstance(positions, _torch.Tensor):
        positions = _torch.as_tensor(np.asarray(positions))
    if positions.dtype.is_floating_point or positions.dtype == _torch.bool or positions.is_complex():
        raise UnsupportedError("%s must be integer ids, got dtype %s" % (name, positions.dtype), 8)
    return positions


class SinusoidalEmbedding(_torch.nn.Module):
    """The fixed sinusoidal table [max_length, dim] (posenc.sinusoid_table: base, freqs, layout,
    mode as there) as a non-persistent buffer; forward(positions) -> table[positions]
    ([*positions.shape, dim]); a position outside 0..max_length-1 raises IndexError naming it."""

    def __init__(self, max_length: int, dim: int, *, base: float = 10000.0, freqs: str = "vaswani",
                 layout: str = "interleaved", mode: str = "precise"):
        super().__init__()
        table = sinusoid_table(integer(max_length, "max_length"), integer(dim, "dim"), base=base, freqs=freqs,
                               layout=layout, mode=mode)
        self.register_buffer("table", _torch.from_numpy(table), persistent=False)

    def forward(self, positions: Any) -> _torch.Tensor:
        ids = _ids(positions)
        _check_range(ids, self.table.shape[0], "max_length")
        return _torch.nn.functional.embedding(ids.to(self.table.device), self.table)

    def extra_repr(self) -> str:
        return "max_length=%d, dim=%d" % tuple(self.table.shape)


def _check_range(ids: _torch.Tensor, rows: int, what: str) -> None:
    if ids.numel():
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= rows:
            bad = lo if lo < 0 else hi
            raise IndexError("position %d is outside the table's 0..%d (%s %d)" % (bad, rows - 1, what, rows))


class _LearnedGather(_torch.autograd.Function):
    """y = table[ids] with the C gather; d table = the C backward (scatter-add in ids' order)."""

    @staticmethod
    def forward(ctx, table, ids, padding_idx):  # type: ignore[override]
        ctx.rows, ctx.ids, ctx.padding_idx = table.shape[0], ids, padding_idx
        with _torch.no_grad():
            out = learned_gather(table.detach().contiguous().numpy(), ids)
        return _torch.from_numpy(out)

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        g = grad.detach().contiguous().numpy().reshape(-1, grad.shape[-1])
        return _torch.from_numpy(learned_backward(g, ctx.ids.reshape(-1), ctx.rows,
                                                  padding_idx=ctx.padding_idx)), None, None


class LearnedEmbedding(_torch.nn.Module):
    """A learned absolute table [rows, dim] (BERT, GPT-2): initialised by posenc.learned_init
    (N(0, sigma^2) from seed, GPT-2's sigma 0.02; padding_idx zeroed), a trainable float32 CPU
    parameter; forward(positions) -> weight[positions] with the C gather, backward the C
    scatter-add. Past-the-end positions raise (posenc's "error" rule)."""

    def __init__(self, rows: int, dim: int, *, seed: int = 0, sigma: float = 0.02,
                 padding_idx: Optional[int] = None):
        super().__init__()
        self.padding_idx = padding_idx  # gets no gradient (nn.Embedding's rule)
        self.weight = _torch.nn.Parameter(_torch.from_numpy(
            learned_init(rows, dim, seed=seed, sigma=sigma, padding_idx=padding_idx)))

    def forward(self, positions: Any) -> _torch.Tensor:
        if self.weight.device.type != "cpu" or self.weight.dtype != _torch.float32:
            raise UnsupportedError("LearnedEmbedding runs the C gather on float32 CPU weights, got %s on %s"
                                   % (self.weight.dtype, self.weight.device), 8)
        ids = _ids(positions).detach().cpu().numpy().astype(np.int64)
        return _LearnedGather.apply(self.weight, ids, self.padding_idx)

    def extra_repr(self) -> str:
        return "rows=%d, dim=%d" % tuple(self.weight.shape)


class ALiBiBias(_torch.nn.Module):
    """ALiBi (Press et al.): slopes of `heads` heads (posenc.alibi_slopes, max_bias 8) and
    forward(query_len, key_len=None, *, query_start=0, key_start=0, form="causal") -> the C
    bias [heads, Lq, Lk] float32 (causal: m (j - i); mask j > i yourself)."""

    def __init__(self, heads: int, *, max_bias: float = 8.0, mode: str = "precise"):
        super().__init__()
        slopes = alibi_slopes(heads, max_bias=max_bias, mode=mode, dtype="f32")
        self.register_buffer("slopes", _torch.from_numpy(slopes), persistent=False)

    def forward(self, query_len: int, key_len: Optional[int] = None, *, query_start: int = 0, key_start: int = 0,
                form: str = "causal") -> _torch.Tensor:
        if self.slopes.device.type != "cpu":
            raise UnsupportedError("ALiBiBias builds the bias in C on the CPU; move it after", 8)
        return _torch.from_numpy(alibi_bias(self.slopes.numpy(), integer(query_len, "query_len"),
                                            None if key_len is None else integer(key_len, "key_len"),
                                            query_start=query_start, key_start=key_start, form=form))

    def extra_repr(self) -> str:
        return "heads=%d" % self.slopes.shape[0]


__all__ = ["SinusoidalEmbedding", "LearnedEmbedding", "ALiBiBias"]

for _cls in (SinusoidalEmbedding, LearnedEmbedding, ALiBiBias):
    _cls.__init__ = keywords_checked(_cls.__init__)  # type: ignore[method-assign]
del _cls
