"""Additive position tables as NumPy arrays: sinusoid (every option of `posenc table`),
baselines, Transformer-XL R, 2-D/3-D grids, hybrid and frequency-scaled tables.

Every table is row-major [positions, dim] (grids: [*shape, channels]). dtype "f32"
(default), "f64", "f16" (numpy float16) or "bf16" (returned as uint16 bits, the
way `posenc table --dtype bf16-bits` writes them; posenc.bf16_to_f32 widens them).
"""
from __future__ import annotations

import ctypes
from typing import Optional, Sequence

import numpy as np

from . import _lib
from ._common import check_keywords, integer, NUMPY_DTYPE, PositionsLike, call, choose, dtype_name, make_positions
from ._errors import InvalidArgumentError


def sinusoid_params(dim: int, *, base: float = 10000.0, freqs: str = "vaswani",
                    layout: str = "interleaved", odd: str = "error",
                    mode: str = "precise") -> "_lib.SinusoidParams":
    """The posenc_sinusoid_params struct for these options."""
    p = _lib.SinusoidParams()
    _lib.lib.posenc_sinusoid_params_default(ctypes.byref(p), integer(dim, "dim"))
    p.base = float(base)
    p.freqs = choose(_lib.FREQS, freqs, "freqs")
    p.layout = choose(_lib.LAYOUT, layout, "layout")
    p.odd = choose(_lib.ODD, odd, "odd")
    p.mode = choose(_lib.MODE, mode, "mode")
    return p


def _new(shape, dtype: str) -> np.ndarray:
    return np.empty(shape, NUMPY_DTYPE[dtype])


def sinusoid_table(length: Optional[int] = None, dim: int = 0, *, positions: PositionsLike = None,
                   start: int = 0, base: float = 10000.0, freqs: str = "vaswani",
                   layout: str = "interleaved", odd: str = "error", mode: str = "precise",
                   dtype="f32", threads: int = 0) -> np.ndarray:
    """Sinusoidal table [T, dim] ("Attention Is All You Need"), T = length (positions
    start..start+length-1) or len(positions) (int ids, or float real positions).

    freqs: "vaswani" (base^(-2k/d)) | "t2t" (fairseq/tensor2tensor); layout: "interleaved"
    ([s0 c0 s1 c1 ..]) | "half" ([s.. | c..]); odd: "error" | "pad" | "round_up"; mode:
    "precise" (<= 1 ULP) | "torch" (PyTorch's float32 steps). As `posenc table`."""
    p = sinusoid_params(dim, base=base, freqs=freqs, layout=layout, odd=odd, mode=mode)
    pos, keep = make_positions(positions if positions is not None else None,
                               length if positions is None else None, start)
    name = dtype_name(dtype)
    out = _new((int(pos.count), integer(dim, "dim")), name)
    exec_ = _lib.Exec()
    _lib.lib.posenc_exec_default(ctypes.byref(exec_))
    exec_.threads = integer(threads, "threads")
    call(_lib.lib.posenc_sinusoid_table_exec, ctypes.byref(p), ctypes.byref(pos), _lib.DTYPE[name],
         out.ctypes.data, out.size, ctypes.byref(exec_))
    del keep
    return out


def sinusoid_frequencies(dim: int, *, base: float = 10000.0, freqs: str = "vaswani",
                         odd: str = "error") -> np.ndarray:
    """The K angular frequencies w_k (radians per position), float64 [K]."""
    p = sinusoid_params(dim, base=base, freqs=freqs, odd=odd)
    pairs = ctypes.c_int32()
    call(_lib.lib.posenc_sinusoid_check, ctypes.byref(p), ctypes.byref(pairs))
    out = np.empty(pairs.value, np.float64)
    call(_lib.lib.posenc_sinusoid_frequencies_f64, ctypes.byref(p), out.ctypes.data, out.size)
    return out


def baseline_table(kind: str, length: Optional[int] = None, dim: int = 0, *,
                   positions: PositionsLike = None, start: int = 0, dtype="f32") -> np.ndarray:
    """Naive baselines [T, dim]: kind "index" (every channel = p) or "normalized" (p/(T-1))."""
    code = choose({"index": 1, "normalized": 2}, kind, "kind")
    pos, keep = make_positions(positions, length if positions is None else None, start)
    name = dtype_name(dtype)
    out = _new((int(pos.count), integer(dim, "dim")), name)
    call(_lib.lib.posenc_baseline_table, code, integer(dim, "dim"), ctypes.byref(pos), _lib.DTYPE[name],
         out.ctypes.data, out.size)
    return out


def xl_relative_table(length: int, dim: int, *, clamp: int = -1, mode: str = "precise",
                      dtype="f32") -> np.ndarray:
    """Transformer-XL relative sinusoid R [klen, dim]; row r encodes distance klen-1-r
    (clamped to `clamp` when >= 0), [sin | cos] halves."""
    name = dtype_name(dtype)
    out = _new((integer(length, "length"), integer(dim, "dim")), name)
    call(_lib.lib.posenc_xl_relative_table, integer(dim, "dim"), integer(length, "length"), integer(clamp, "clamp"), choose(_lib.MODE, mode, "mode"),
         _lib.DTYPE[name], out.ctypes.data, out.size)
    return out


def grid_table(shape: Sequence[int], channels: int, *, split: str = "tatp22", mode: str = "precise",
               dtype="f32") -> np.ndarray:
    """2-D/3-D (or 1-D) sinusoid grid [*shape, channels], channels last: each cell is
    [emb(x0) | emb(x1) | emb(x2)]. split: "tatp22" (ceil(C/2n)*2 per axis, surplus cut from
    the end) | "even" (C/n, C a multiple of 2n). mode "torch" = tatp22's float32 steps."""
    axes = len(shape)
    c_shape = (ctypes.c_size_t * max(axes, 1))(*[integer(s, "shape") for s in shape])
    name = dtype_name(dtype)
    count = ctypes.c_size_t()
    call(_lib.lib.posenc_grid_count, axes, c_shape, integer(channels, "channels"), ctypes.byref(count))
    out = _new(tuple(integer(s, "shape") for s in shape) + (integer(channels, "channels"),), name)
    call(_lib.lib.posenc_grid_table, axes, c_shape, integer(channels, "channels"), choose(_lib.GRID_SPLIT, split, "split"),
         choose(_lib.MODE, mode, "mode"), _lib.DTYPE[name], out.ctypes.data, out.size)
    return out


def grid_positions(shape: Sequence[int]) -> np.ndarray:
    """Cell coordinates in row-major order, int64 [cells, axes] (2x3 -> (0,0) (0,1) ..)."""
    axes = len(shape)
    c_shape = (ctypes.c_size_t * max(axes, 1))(*[integer(s, "shape") for s in shape])
    cells = int(np.prod([integer(s, "shape") for s in shape])) if axes else 0
    out = np.empty((cells, axes), np.int64)
    call(_lib.lib.posenc_grid_positions, axes, c_shape, out.ctypes.data, out.size)
    return out


def hybrid_table(learned: np.ndarray, length: Optional[int] = None, dim: int = 0, *,
                 positions: PositionsLike = None, start: int = 0, base: float = 10000.0,
                 past_end: str = "error") -> np.ndarray:
    """Hybrid [T, dim] float32: channels < learned.shape[1] gathered from the learned
    [rows, learned_dim] table, the rest the interleaved sinusoid."""
    table = np.ascontiguousarray(learned, dtype=np.float32)
    if table.ndim != 2:
        raise InvalidArgumentError("learned must be [rows, learned_dim], got shape %s" % (table.shape,), 1)
    p = sinusoid_params(dim, base=base)
    pos, keep = make_positions(positions, length if positions is None else None, start)
    out = np.empty((int(pos.count), integer(dim, "dim")), np.float32)
    call(_lib.lib.posenc_hybrid_table_f32, table.ctypes.data, table.shape[0], table.shape[1],
         ctypes.byref(p), ctypes.byref(pos), choose(_lib.PAST_END, past_end, "past_end"),
         out.ctypes.data, out.size)
    return out


def freq_scale_table(length: Optional[int] = None, dim: int = 0, scale: float = 1.0, *,
                     positions: PositionsLike = None, start: int = 0, base: float = 10000.0,
                     freqs: str = "vaswani", layout: str = "interleaved") -> np.ndarray:
    """Sinusoid table [T, dim] float32 with every frequency multiplied by scale (> 0)."""
    p = sinusoid_params(dim, base=base, freqs=freqs, layout=layout)
    pos, keep = make_positions(positions, length if positions is None else None, start)
    out = np.empty((int(pos.count), integer(dim, "dim")), np.float32)
    call(_lib.lib.posenc_freq_scale_table_f32, ctypes.byref(p), float(scale), ctypes.byref(pos),
         out.ctypes.data, out.size)
    return out


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """Widen bfloat16 bits (uint16) to float32 values (exact)."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


__all__ = ["sinusoid_table", "sinusoid_frequencies", "baseline_table", "xl_relative_table", "grid_table",
           "grid_positions", "hybrid_table", "freq_scale_table", "bf16_to_f32", "sinusoid_params"]

check_keywords(globals(), __all__)  # a bad keyword raises posenc.KeywordError naming it
