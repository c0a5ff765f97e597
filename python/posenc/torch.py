"""PyTorch: RoPE in place on CPU tensors, an autograd Function, and modules that
replace a Hugging Face rotary embedding.

    import posenc.torch as pt
    pt.apply_rope_(q, k, positions=position_ids, layout="neox", tensor_layout="bhsd", base=500000)

Tensors: float32, float16 or bfloat16 on the CPU; [S, D], [S, H, D], [B, S, H, D]
("bshd", default) or [B, H, S, D] ("bhsd"); any non-negative strides with a
contiguous last axis. The data pointer goes to C (zero-copy); ctypes releases
the GIL for the call. float64 (for gradcheck) is computed in torch from the
library's float64 cos/sin table, since libposenc has no float64 rotation.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
import torch as _torch

from . import rope as _rope
from ._errors import InvalidArgumentError, UnsupportedError
from .rope import ConfigLike, RopeParams, ThreadPool, make_exec, resolve_params

_DTYPE_CODE = {_torch.float32: 0, _torch.float16: 2, _torch.bfloat16: 3}


def _target(x: Any, name: str, tensor_layout: str) -> "_rope.Target":
    if not isinstance(x, _torch.Tensor):
        raise UnsupportedError("%s must be a torch.Tensor, got %s" % (name, type(x).__name__), 8)
    if x.device.type != "cpu":
        raise UnsupportedError("%s is on device %s; posenc runs on the CPU (move it with .cpu())"
                               % (name, x.device), 8)
    code = _DTYPE_CODE.get(x.dtype)
    if code is None:
        raise UnsupportedError("%s: dtype must be float32, float16 or bfloat16, got %s%s"
                               % (name, x.dtype, " (use apply_rope for float64)"
                                  if x.dtype == _torch.float64 else ""), 8)
    if x.requires_grad and _torch.is_grad_enabled():
        raise InvalidArgumentError("%s requires grad: an in-place rotation would bypass autograd; "
                                   "use posenc.torch.apply_rope (differentiable) or torch.no_grad()" % name, 1)
    shape, strides = _rope._as_bshd(tuple(x.shape), tuple(x.stride()), tensor_layout, name)
    return _rope.Target(x.data_ptr(), code, shape, strides, name)


def _params(params: Optional[RopeParams], config: Optional[ConfigLike], head_dim: int,
            flags: dict) -> RopeParams:
    if params is not None and not flags and config is None:
        return params
    return resolve_params(params, config, head_dim, **flags)


def apply_rope_(q: _torch.Tensor, k: Optional[_torch.Tensor] = None, *, positions: Any = None,
                offset: Any = 0, layout: Optional[str] = None, tensor_layout: str = "bshd",
                params: Optional[RopeParams] = None, config: Optional[ConfigLike] = None,
                seq_len: Optional[int] = None, inverse: bool = False, threads: Optional[int] = None,
                pool: Optional[ThreadPool] = None, **flags: Any) -> None:
    """Rotate q (and k) in place. Shapes/dtypes: see the module docstring.

    positions: int64 position ids [S] or [B, S] (a tensor or array); else offset + 0..S-1
    (offset: int, or one per batch row). layout: "neox" (= "half", HF rotate_half; default,
    or the config's) or "gptj" (= "interleaved"). params, config (path, dict, transformers
    config) or flags (base=, scaling=, factor=, rotary_dim=, partial_rotary_factor=,
    mode="torch" for HF's float32 arithmetic bit for bit, ...) give the RoPE; head_dim is the
    last axis. seq_len for DYNAMIC/LONGROPE defaults to max(position) + 1 (HF's rule).
    Errors (posenc.Error subclasses) are raised before anything is written.
    """
    tq = _target(q, "q", tensor_layout)
    targets = [tq]
    if k is not None:
        targets.append(_target(k, "k", tensor_layout))
    p = _params(params, config, tq.shape[3], flags)
    _rope.apply_targets_(targets, p, layout, positions, offset, seq_len, inverse, make_exec(threads, pool))


# ---- float64: the library's f64 cos/sin, rotation in torch ---------------------------

def _cos_sin_f64(p: RopeParams, pos: np.ndarray, seq_len: int) -> Tuple[_torch.Tensor, _torch.Tensor, int]:
    cos, sin = _rope.rope_cos_sin(p, pos.reshape(-1), seq_len=seq_len, dtype="f64")
    pairs = cos.shape[1]
    shape = pos.shape + (pairs,)
    return _torch.from_numpy(cos.reshape(shape)), _torch.from_numpy(sin.reshape(shape)), pairs


def _rotate_f64(x: _torch.Tensor, p: RopeParams, layout: str, pos: np.ndarray, seq_len: int,
                tensor_layout: str, transpose: bool) -> _torch.Tensor:
    """y = R x (or R^T x) in float64 with the library's float64 cos/sin (attention factor folded)."""
    cos, sin, pairs = _cos_sin_f64(p, pos, seq_len)
    # broadcast [S, K] / [B, S, K] over the heads axis
    if x.dim() == 2:
        pass
    elif x.dim() == 3:
        cos, sin = (cos.unsqueeze(-2), sin.unsqueeze(-2)) if tensor_layout == "bshd" else (cos, sin)
    else:
        axis = -2 if tensor_layout == "bshd" else -3
        cos, sin = cos.unsqueeze(axis), sin.unsqueeze(axis)
    if transpose:
        sin = -sin
    r = 2 * pairs
    if layout == "half":
        a, b = x[..., :pairs], x[..., pairs:r]
        ya, yb = a * cos - b * sin, b * cos + a * sin
        rotated = _torch.cat([ya, yb], dim=-1)
    else:
        a, b = x[..., 0:r:2], x[..., 1:r:2]
        ya, yb = a * cos - b * sin, b * cos + a * sin
        rotated = _torch.stack([ya, yb], dim=-1).flatten(-2)
    return _torch.cat([rotated, x[..., r:]], dim=-1)


def _positions_array(positions: Any, offset: Any, x: _torch.Tensor, tensor_layout: str) -> np.ndarray:
    if x.dim() == 2:
        b_n, s_n = 1, x.shape[0]
    elif x.dim() == 3:
        b_n, s_n = 1, (x.shape[0] if tensor_layout == "bshd" else x.shape[1])
    else:
        b_n, s_n = x.shape[0], (x.shape[1] if tensor_layout == "bshd" else x.shape[2])
    pos, _ = _rope._positions_for(positions, offset, b_n, s_n)
    if x.dim() < 4 and pos.ndim == 2:
        pos = pos[0]
    return pos


class RotaryFunction(_torch.autograd.Function):
    """y = RoPE(x), differentiable: backward is the transposed rotation R^T g = A R(-angle) g
    (A = attention factor). float32/16/bf16 run in C (forward on a copy, backward through
    the C inverse rotation times A^2); float64 runs in torch on the library's f64 cos/sin."""

    @staticmethod
    def forward(ctx, x, p, layout, positions, seq_len, tensor_layout):  # type: ignore[override]
        ctx.p, ctx.layout, ctx.positions, ctx.seq_len, ctx.tensor_layout = (p, layout, positions, seq_len,
                                                                           tensor_layout)
        if x.dtype == _torch.float64:
            return _rotate_f64(x, p, layout, positions, seq_len, tensor_layout, transpose=False)
        y = x.detach().clone()
        with _torch.no_grad():
            apply_rope_(y, positions=positions, layout=layout, tensor_layout=tensor_layout, params=p,
                        seq_len=seq_len)
        return y

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        p, layout, positions, seq_len, tl = ctx.p, ctx.layout, ctx.positions, ctx.seq_len, ctx.tensor_layout
        if grad.dtype == _torch.float64:
            gx = _rotate_f64(grad, p, layout, positions, seq_len, tl, transpose=True)
        else:
            gx = grad.detach().clone(memory_format=_torch.contiguous_format)
            with _torch.no_grad():
                apply_rope_(gx, positions=positions, layout=layout, tensor_layout=tl, params=p,
                            seq_len=seq_len, inverse=True)
                att = _rope.rope_frequencies(p, seq_len=seq_len).attention_factor
                if att != 1.0:  # the C inverse divides by A; the transpose multiplies by A
                    r = p.check()
                    gx[..., :r] *= att * att
        return gx, None, None, None, None, None


def apply_rope(x: _torch.Tensor, *, positions: Any = None, offset: Any = 0, layout: Optional[str] = None,
               tensor_layout: str = "bshd", params: Optional[RopeParams] = None,
               config: Optional[ConfigLike] = None, seq_len: Optional[int] = None,
               **flags: Any) -> _torch.Tensor:
    """Differentiable RoPE (out of place): returns RoPE(x), same shape and dtype (float64 too).
    Arguments as apply_rope_."""
    p = _params(params, config, x.shape[-1], flags)
    layout_name = {"neox": "half", "half": "half", "gptj": "interleaved",
                   "interleaved": "interleaved"}.get(layout or p.layout or "half")
    if layout_name is None:
        raise InvalidArgumentError("layout must be neox/half or gptj/interleaved, got %r" % (layout,), 1)
    pos = _positions_array(positions, offset, x, tensor_layout)
    if seq_len is None:
        seq_len = max(int(pos.max()) + 1, 0) if pos.size else 0
    return RotaryFunction.apply(x, p, layout_name, pos, seq_len, tensor_layout)


class Rotary(_torch.nn.Module):
    """Applies RoPE to q and k (differentiable, C kernels for f32/f16/bf16).

    forward(q, k, position_ids=None) -> (q_rot, k_rot); q, k [B, H, S, D] by default
    (HF's layout after the head transpose; tensor_layout="bshd" for [B, S, H, D]);
    position_ids [B, S] or [S] (default 0..S-1)."""

    def __init__(self, config: Optional[ConfigLike] = None, *, params: Optional[RopeParams] = None,
                 layout: Optional[str] = None, tensor_layout: str = "bhsd", head_dim: Optional[int] = None,
                 **flags: Any):
        super().__init__()
        self.params = resolve_params(params, config, head_dim, **flags)
        self.layout = layout
        self.tensor_layout = tensor_layout

    def forward(self, q: _torch.Tensor, k: _torch.Tensor,
                position_ids: Optional[_torch.Tensor] = None) -> Tuple[_torch.Tensor, _torch.Tensor]:
        kw = dict(positions=position_ids, layout=self.layout, tensor_layout=self.tensor_layout,
                  params=self.params)
        return apply_rope(q, **kw), apply_rope(k, **kw)


class RotaryEmbedding(_torch.nn.Module):
    """Drop-in for HF's LlamaRotaryEmbedding: forward(x, position_ids) -> (cos, sin), each
    [B, S, R] in x.dtype, attention scaling folded in, duplicated for rotate_half
    ([c_0..c_{K-1}, c_0..c_{K-1}]). mode="torch" (default) reproduces HF's float32 values bit
    for bit; mode="precise" gives the <= 1 ULP values. Takes the same config object as HF."""

    def __init__(self, config: Optional[ConfigLike] = None, device: Any = None, *,
                 params: Optional[RopeParams] = None, head_dim: Optional[int] = None,
                 mode: str = "torch", **flags: Any):
        super().__init__()
        self.params = resolve_params(params, config, head_dim, mode=mode, **flags)
        freqs = _rope.rope_frequencies(self.params)
        self.attention_scaling = freqs.attention_factor
        self.register_buffer("inv_freq", _torch.tensor(freqs.inv_freq, dtype=_torch.float32), persistent=False)

    @_torch.no_grad()
    def forward(self, x: _torch.Tensor, position_ids: _torch.Tensor) -> Tuple[_torch.Tensor, _torch.Tensor]:
        ids = position_ids.detach().cpu().numpy().astype(np.int64)
        seq_len = int(ids.max()) + 1 if ids.size else 0
        cos, sin = _rope.rope_cos_sin(self.params, ids.reshape(-1), seq_len=seq_len, duplicate="half")
        shape = tuple(ids.shape) + (cos.shape[1],)
        cos_t = _torch.from_numpy(cos.reshape(shape)).to(device=x.device, dtype=x.dtype)
        sin_t = _torch.from_numpy(sin.reshape(shape)).to(device=x.device, dtype=x.dtype)
        return cos_t, sin_t


__all__ = ["apply_rope_", "apply_rope", "RotaryFunction", "Rotary", "RotaryEmbedding"]
