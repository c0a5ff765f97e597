"""Relative encodings and attention biases as NumPy arrays: ALiBi, T5 buckets, Shaw."""
from __future__ import annotations

import ctypes
from typing import Optional

import numpy as np

from . import _lib
from ._common import check_keywords, integer, PositionsLike, call, choose, make_positions
from ._errors import InvalidArgumentError


def alibi_slopes(heads: int, *, max_bias: float = 8.0, head_offset: int = 0, total_heads: int = 0,
                 mode: str = "precise", dtype: str = "f64") -> np.ndarray:
    """ALiBi slopes of heads [head_offset, head_offset + heads) of a total_heads model,
    [heads] float64 (or float32 with dtype="f32"). mode "torch" = BLOOM's float32 pow."""
    out = np.empty(integer(heads, "heads") if heads > 0 else 0, np.float64)
    call(_lib.lib.posenc_alibi_slopes_f64, integer(heads, "heads"), float(max_bias), integer(head_offset, "head_offset"), integer(total_heads, "total_heads"),
         choose(_lib.MODE, mode, "mode"), out.ctypes.data, out.size)
    if dtype in ("f32", "float32"):
        if choose(_lib.MODE, mode, "mode") == 1:  # BLOOM's float32 values are exact in f32
            return out.astype(np.float32)
        f = np.empty(out.size, np.float32)  # correctly rounded from long double, not from f64
        fn = _lib.lib.posenc_alibi_slopes_f32
        call(fn, integer(heads, "heads"), float(max_bias), integer(head_offset, "head_offset"), integer(total_heads, "total_heads"), 0, f.ctypes.data, f.size)
        return f
    return out


def alibi_bias(slopes: np.ndarray, query_len: Optional[int] = None, key_len: Optional[int] = None, *,
               queries: PositionsLike = None, keys: PositionsLike = None, query_start: int = 0,
               key_start: int = 0, form: str = "causal") -> np.ndarray:
    """Dense ALiBi bias [heads, Lq, Lk] float32: m (j - i) ("causal"; mask j > i yourself) or
    -m |i - j| ("symmetric"). Queries/keys: counts with starts (ranges) or explicit positions."""
    s = np.ascontiguousarray(slopes, dtype=np.float32)
    if s.ndim != 1:
        raise InvalidArgumentError("slopes must be 1-D [heads], got shape %s" % (s.shape,), 1)
    q, kq = make_positions(queries, query_len if queries is None else None, query_start)
    k, kk = make_positions(keys, (key_len if key_len is not None else query_len) if keys is None else None,
                           key_start)
    out = np.empty((s.size, int(q.count), int(k.count)), np.float32)
    call(_lib.lib.posenc_alibi_bias_f32_exec, s.ctypes.data, s.size, choose(_lib.ALIBI_FORM, form, "form"),
         ctypes.byref(q), ctypes.byref(k), out.ctypes.data, out.size, None)
    return out


def alibi_key_positions_from_mask(mask: np.ndarray) -> np.ndarray:
    """BLOOM's key positions under padding: cumsum(mask) - 1, times mask ([L] int64)."""
    m = np.ascontiguousarray(mask, dtype=np.int64).reshape(-1)
    out = np.empty(m.size, np.int64)
    call(_lib.lib.posenc_alibi_key_positions_from_mask, m.ctypes.data, m.size, out.ctypes.data, out.size)
    return out


def _t5(num_buckets: int, max_distance: int, bidirectional: bool) -> "_lib.T5Params":
    p = _lib.T5Params(integer(num_buckets, "num_buckets"), integer(max_distance, "max_distance"), 1 if bidirectional else 0)
    call(_lib.lib.posenc_t5_check, ctypes.byref(p))
    return p


def t5_buckets(query_len: Optional[int] = None, key_len: Optional[int] = None, *,
               queries: PositionsLike = None, keys: PositionsLike = None, query_start: int = 0,
               key_start: int = 0, num_buckets: int = 32, max_distance: int = 128,
               bidirectional: bool = True) -> np.ndarray:
    """T5 relative-position buckets [Lq, Lk] int64 of keys[b] - queries[a] (HF compute_bias)."""
    p = _t5(num_buckets, max_distance, bidirectional)
    q, kq = make_positions(queries, query_len if queries is None else None, query_start)
    k, kk = make_positions(keys, (key_len if key_len is not None else query_len) if keys is None else None,
                           key_start)
    out = np.empty((int(q.count), int(k.count)), np.int64)
    call(_lib.lib.posenc_t5_bucket_matrix_i64, ctypes.byref(p), ctypes.byref(q), ctypes.byref(k),
         out.ctypes.data, out.size)
    return out


def t5_bucket(relative_position, *, num_buckets: int = 32, max_distance: int = 128,
              bidirectional: bool = True) -> np.ndarray:
    """Buckets of relative positions r = key - query (any int array; same shape, int64)."""
    r = np.asarray(relative_position, dtype=np.int64)
    flat = np.ascontiguousarray(r.reshape(-1))
    p = _t5(num_buckets, max_distance, bidirectional)
    # positions must be >= 0: put the query at -min(r) and the keys at r - min(r)
    shift = max(0, -int(flat.min())) if flat.size else 0
    keys = np.ascontiguousarray(flat + shift)
    q = _lib.Positions(1, shift, None, None)
    k = _lib.Positions(keys.size, 0, keys.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), None)
    out = np.empty(flat.size, np.int64)
    call(_lib.lib.posenc_t5_bucket_matrix_i64, ctypes.byref(p), ctypes.byref(q), ctypes.byref(k),
         out.ctypes.data, out.size)
    del keys
    return out.reshape(r.shape)


def t5_bias(table: np.ndarray, query_len: Optional[int] = None, key_len: Optional[int] = None, *,
            queries: PositionsLike = None, keys: PositionsLike = None, query_start: int = 0,
            key_start: int = 0, max_distance: int = 128, bidirectional: bool = True) -> np.ndarray:
    """T5 bias [heads, Lq, Lk] float32 gathered from the learned [num_buckets, heads] table."""
    t = np.ascontiguousarray(table, dtype=np.float32)
    if t.ndim != 2:
        raise InvalidArgumentError("table must be [num_buckets, heads], got shape %s" % (t.shape,), 1)
    p = _t5(t.shape[0], max_distance, bidirectional)
    q, kq = make_positions(queries, query_len if queries is None else None, query_start)
    k, kk = make_positions(keys, (key_len if key_len is not None else query_len) if keys is None else None,
                           key_start)
    out = np.empty((t.shape[1], int(q.count), int(k.count)), np.float32)
    call(_lib.lib.posenc_t5_bias_f32_exec, ctypes.byref(p), t.ctypes.data, t.shape[1], ctypes.byref(q),
         ctypes.byref(k), out.ctypes.data, out.size, None)
    return out


def shaw_indices(clip: int, query_len: Optional[int] = None, key_len: Optional[int] = None, *,
                 queries: PositionsLike = None, keys: PositionsLike = None, query_start: Optional[int] = None,
                 key_start: int = 0) -> np.ndarray:
    """Shaw et al. indices [Lq, Lk] int32: clip(j - i, -clip, clip) + clip. With unequal
    lengths and no query_start, queries are the LAST Lq key positions (tensor2tensor)."""
    lk = key_len if key_len is not None else query_len
    if query_start is None:
        query_start = (lk - query_len) if (queries is None and lk is not None and query_len is not None) else 0
    q, kq = make_positions(queries, query_len if queries is None else None, query_start)
    k, kk = make_positions(keys, lk if keys is None else None, key_start)
    out = np.empty((int(q.count), int(k.count)), np.int32)
    call(_lib.lib.posenc_shaw_relative_indices_i32, integer(clip, "clip"), ctypes.byref(q), ctypes.byref(k),
         out.ctypes.data, out.size)
    return out


def shaw_gather(indices: np.ndarray, clip: int, table: np.ndarray) -> np.ndarray:
    """Rows of a [2*clip+1, depth] table (a_K or a_V) gathered by indices: [*indices.shape, depth]."""
    idx = np.ascontiguousarray(indices, dtype=np.int32)
    t = np.ascontiguousarray(table, dtype=np.float32)
    if t.ndim != 2:
        raise InvalidArgumentError("table must be [2*clip+1, depth], got shape %s" % (t.shape,), 1)
    out = np.empty(idx.shape + (t.shape[1],), np.float32)
    call(_lib.lib.posenc_shaw_gather_f32, idx.ctypes.data, idx.size, integer(clip, "clip"), t.ctypes.data, t.shape[1],
         out.ctypes.data, out.size)
    return out


__all__ = ["alibi_slopes", "alibi_bias", "alibi_key_positions_from_mask", "t5_buckets", "t5_bucket",
           "t5_bias", "shaw_indices", "shaw_gather"]

check_keywords(globals(), __all__)  # a bad keyword raises posenc.KeywordError naming it
