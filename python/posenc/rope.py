"""RoPE: cos/sin tables and in-place rotation of NumPy arrays (the 1-D and multi-axis
kernels). The parameters, frequencies and model configs are posenc.config's (re-exported
here); this module imports config, never the other way.

Shapes: head_dim D, rotary dim R (<= D, even), K = R/2 pairs. Tables are
[positions, K] (one value per pair); `duplicate="half"` gives HF's [T, R]
(cos[t][k mod K]). Arrays to rotate are [S, D], [S, H, D] or [B, S, H, D]
("bshd", default) / [B, H, S, D] ("bhsd"), float32 or float16, or uint16
holding bfloat16 bits (dtype="bf16").
"""
from __future__ import annotations

import ctypes
import dataclasses
import json
import os
from dataclasses import dataclass, field
import difflib
import threading
from typing import Any, Dict, List, Literal, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._common import (PositionsLike, call, check_keywords, choose, int64_ids, integer, keywords_checked,
                      make_positions, raise_status, text)
from ._errors import InvalidArgumentError, KeywordError, NonFiniteError, UnsupportedError, error_for

from .config import (ConfigLike, Layout, LongropeSelect, Mode, Model, ModelConfig, LayerType, RopeFrequencies,
                     RopeParams, Scaling, TensorLayout, check_flags, checked_seq_len, config_source,
                     resolve_params, rope_frequencies)
from .config import load_model_config as load_config  # posenc.rope.load_config: the one-RoPE reading


def rope_cos_sin(params: Optional[RopeParams] = None, positions: PositionsLike = None, *,
                 count: Optional[int] = None, start: int = 0, seq_len: int = 0,
                 fold_attention: bool = True, dtype: str = "f32", duplicate: Optional[str] = None,
                 config: Optional[ConfigLike] = None, head_dim: Optional[int] = None,
                 **flags: Any) -> Tuple[np.ndarray, np.ndarray]:
    """cos and sin tables, each [T, K] (float32 or float64), T = positions (an int count,
    ids, real values, or count/start for a range). fold_attention multiplies both by the
    attention factor (HF's tables). duplicate="half" returns HF's [T, R] (cos[t][k mod K]),
    "interleaved" GPT-J's [T, R] (each value twice in a row)."""
    p = resolve_params(params, config, head_dim, **flags)
    pairs = p.check() // 2
    pos, keep = make_positions(positions, count, start)
    n = int(pos.count) * pairs
    wide = {"f32": False, "f64": True, "float32": False, "float64": True}.get(str(dtype))
    if wide is None:
        raise UnsupportedError("dtype must be f32 or f64, got %r" % (dtype,), 8)
    np_dtype = np.float64 if wide else np.float32
    cos = np.empty((int(pos.count), pairs), np_dtype)
    sin = np.empty((int(pos.count), pairs), np_dtype)
    fn = _lib.lib.posenc_rope_table_f64 if wide else _lib.lib.posenc_rope_table_f32
    call(fn, ctypes.byref(p.to_c()), integer(seq_len, "seq_len"), ctypes.byref(pos), 1 if fold_attention else 0,
         cos.ctypes.data, sin.ctypes.data, n)
    del keep
    if duplicate is None:
        return cos, sin
    if duplicate in ("half", "neox"):
        return np.concatenate([cos, cos], axis=1), np.concatenate([sin, sin], axis=1)
    if duplicate in ("interleaved", "gptj"):
        return np.repeat(cos, 2, axis=1), np.repeat(sin, 2, axis=1)
    raise InvalidArgumentError("duplicate must be None, 'half' or 'interleaved', got %r" % (duplicate,), 1)


# ---- in-place rotation ------------------------------------------------------

class ThreadPool:
    """posenc_threadpool: worker threads kept alive between calls (saves ~50-80 us per
    threaded call). Pass as apply_rope_(..., pool=pool). Close with close() or `with`.

    Safe across Python threads: calls using the pool are counted while they run, and
    close() waits for them to finish before freeing the C pool (freeing it under a running
    call deadlocked or corrupted the heap); a call with a closed pool raises
    InvalidArgumentError naming it. A pool is a live resource: it cannot be pickled."""

    def __init__(self, threads: int = 0):
        handle = ctypes.c_void_p()
        call(_lib.lib.posenc_threadpool_create, integer(threads, "threads"), ctypes.byref(handle))
        self._handle = handle
        self._idle = threading.Condition()
        self._in_flight = 0
        self._closing = False  # set by close(): new calls are refused while it waits
        self.exec = _lib.Exec()
        _lib.lib.posenc_exec_default(ctypes.byref(self.exec))
        self.exec.pool = handle.value

    @property
    def size(self) -> int:
        with self._idle:
            return int(_lib.lib.posenc_threadpool_size(self._handle)) if self._handle else 0

    @property
    def closed(self) -> bool:
        return not self._handle or self._closing

    def acquire(self) -> None:
        """Count one call in flight (refused once closed); pair with release()."""
        with self._idle:
            if not self._handle or self._closing:
                raise InvalidArgumentError("pool: this posenc.ThreadPool is closed; create a new one "
                                           "or pass threads= instead", 1)
            self._in_flight += 1

    def release(self) -> None:
        with self._idle:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.notify_all()

    def close(self) -> None:
        """Free the worker threads, after every call in flight (other Python threads) is done."""
        idle = getattr(self, "_idle", None)
        if idle is None:  # __init__ failed before the pool existed
            return
        with idle:
            self._closing = True  # refuse new calls, so busy threads cannot keep it open forever
            while self._in_flight:
                idle.wait()
            if self._handle:
                _lib.lib.posenc_threadpool_free(self._handle)
                self._handle = None
                self.exec.pool = None

    def __enter__(self) -> "ThreadPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __reduce__(self) -> Any:
        raise UnsupportedError("a posenc.ThreadPool holds live worker threads and cannot be pickled or "
                               "copied; create one where it is used", 8)

    def __repr__(self) -> str:
        return "ThreadPool(size=%d%s)" % (self.size, ", closed" if self.closed else "")

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def make_exec(threads: Optional[int] = None, pool: Optional[ThreadPool] = None) -> Optional["_lib.Exec"]:
    """The posenc_exec for threads= / pool= (None = the library's defaults). A pool's exec
    is only valid between pool.acquire() and pool.release() (see apply_targets_)."""
    if threads is not None:
        threads = integer(threads, "threads")
        if threads < 0:
            raise InvalidArgumentError("threads must be >= 0 (0 = the machine's cores), got %d" % threads, 1)
    if pool is not None:
        if not isinstance(pool, ThreadPool):
            raise InvalidArgumentError("pool must be a posenc.ThreadPool, got %s" % type(pool).__name__, 1)
        if pool.closed:
            raise InvalidArgumentError("pool: this posenc.ThreadPool is closed; create a new one "
                                       "or pass threads= instead", 1)
        e = _lib.Exec()
        ctypes.memmove(ctypes.byref(e), ctypes.byref(pool.exec), ctypes.sizeof(e))
        if threads:
            e.threads = threads
        return e
    if threads:
        e = _lib.Exec()
        _lib.lib.posenc_exec_default(ctypes.byref(e))
        e.threads = threads
        return e
    return None


class Target(NamedTuple):
    """One array to rotate, described as [B, S, H, D] with element strides."""
    address: int
    dtype_code: int
    shape: Tuple[int, int, int, int]
    strides: Tuple[int, int, int, int]
    name: str


def _plan_views(t: Target) -> Tuple[str, List[Tuple[int, "_lib.RopeView", int, int]]]:
    """Cut a [B, S, H, D] strided array into posenc_rope_views. Returns (kind, calls) where
    each call is (address, view, x_count, batch index b or -1 for all, head index) ..."""
    b_n, s_n, h_n, d_n = t.shape
    sb, ss, sh, sd = t.strides
    if 0 in (b_n, s_n, h_n):
        return "tokens", []  # nothing to rotate: a no-op, as torch's own ops on an empty tensor
    if min(t.strides) < 0:
        raise UnsupportedError("%s: negative strides %s cannot be handed to C; call .copy()/.contiguous() "
                               "first" % (t.name, t.strides), 8)
    if d_n > 1 and sd != 1:
        raise UnsupportedError("%s: the head_dim axis must be contiguous (stride 1), got stride %d; "
                               "the C view needs each head's channels adjacent" % (t.name, sd), 8)
    # no two elements may share memory (an expand()ed tensor would be rotated twice)
    axes = sorted(((st, n) for st, n in zip((sb, ss, sh), (b_n, s_n, h_n)) if n > 1))
    span = d_n
    for st, n in axes:
        if st < span:
            raise UnsupportedError("%s: strides %s (elements) make elements overlap (an expand()ed or "
                                   "broadcast array?); pass a copy" % (t.name, t.strides), 8)
        span = st * (n - 1) + span
    size = 4 if t.dtype_code == 0 else 2
    head_stride = sh if h_n > 1 else d_n
    row_span = (h_n - 1) * head_stride + d_n
    # stride from one token to the next; a size-1 axis's stride means nothing
    token_stride = ss if s_n > 1 else (sb if b_n > 1 else row_span)
    token_major = s_n <= 1 or ss >= row_span
    calls = []
    if token_major:
        if b_n == 1 or s_n == 1 or sb == s_n * ss:
            tokens = b_n * s_n
            count = (tokens - 1) * token_stride + row_span if tokens else 0
            calls.append((t.address, _lib.RopeView(tokens, h_n, token_stride, head_stride), count, -1))
        else:
            count = (s_n - 1) * ss + row_span if s_n else 0
            for b in range(b_n):
                calls.append((t.address + b * sb * size, _lib.RopeView(s_n, h_n, ss, head_stride), count, b))
        return "tokens", calls
    # heads-first ([B, H, S, D]): the C view puts tokens outermost (row_stride >= the
    # span of all heads), so each (b, h) is a call of its own. A token-major scratch copy
    # (one call per batch row, cos/sin once per token) was measured slower: q[1, 32, 4096, 128]
    # f32, 2 cores, 53.8 ms with the two copies against 24.2 ms for the 32 calls (issue 41).
    count = (s_n - 1) * ss + d_n if s_n else 0
    for b in range(b_n):
        for h in range(h_n):
            calls.append((t.address + (b * sb + h * sh) * size, _lib.RopeView(s_n, 1, ss, d_n), count, b))
    return "heads", calls


def _offset(offset: Any) -> Any:
    """offset as an int or an int64 array [B]; a fraction (1.5) is refused, never truncated."""
    if type(offset) is int:
        return offset
    if type(offset).__module__.startswith("torch"):
        offset = offset.detach().cpu().numpy()
    if isinstance(offset, (np.ndarray, list, tuple)):
        arr = np.asarray(offset)
        if arr.dtype.kind in "iu":
            return int64_ids(arr, "offset")
        if arr.dtype.kind == "f" and arr.size and np.all(np.isfinite(arr)) and np.all(arr == np.floor(arr)):
            return arr.astype(np.int64)
        if arr.size == 0:
            return arr.astype(np.int64)
        raise InvalidArgumentError("offset must be an int or integers (one per batch row), got %r"
                                   % (offset,), 1)
    return integer(offset, "offset")


def _positions_for(positions: Any, offset: Any, b_n: int, s_n: int) -> Tuple[Optional[np.ndarray], bool]:
    """int64 positions [B, S] (or [S] shared by every batch row) and whether shared."""
    if type(offset) is not int:
        offset = _offset(offset)
    if positions is None:
        off = np.asarray(offset, dtype=np.int64)
        if off.ndim == 0:
            return np.arange(int(off), int(off) + s_n, dtype=np.int64), True
        if off.shape != (b_n,):
            raise InvalidArgumentError("offset must be an int or one per batch row [%d], got shape %s"
                                       % (b_n, off.shape), 1)
        return off[:, None] + np.arange(s_n, dtype=np.int64)[None, :], False
    if (type(positions) is np.ndarray and positions.dtype == np.int64 and positions.ndim == 1
            and positions.shape[0] == s_n and positions.flags.c_contiguous
            and type(offset) is int and offset == 0):  # the common case: no conversions
        return positions, True
    pos = integer_ids(positions)
    if pos.ndim == 2 and pos.shape[0] == 1 and b_n != 1:
        pos = pos[0]
    if offset is not None and not (np.ndim(offset) == 0 and int(offset) == 0):
        pos = pos + np.asarray(offset, dtype=np.int64).reshape((-1,) + (1,) * (pos.ndim - 1) if np.ndim(offset) else ())
    if pos.ndim == 1:
        if pos.shape[0] != s_n:
            raise InvalidArgumentError("positions has %d entries but the sequence has %d tokens"
                                       % (pos.shape[0], s_n), 1)
        return np.ascontiguousarray(pos), True
    if pos.ndim == 2 and pos.shape == (b_n, s_n):
        return np.ascontiguousarray(pos), False
    raise InvalidArgumentError("positions must be [S] = [%d] or [B, S] = [%d, %d], got shape %s"
                               % (s_n, b_n, s_n, pos.shape), 1)


def _byte_end(t: Target) -> int:
    """One past the last byte of t (strides are >= 0 here: _plan_views checked them)."""
    (n0, n1, n2, n3), (s0, s1, s2, s3) = t.shape, t.strides
    last = (n0 - 1) * s0 + (n1 - 1) * s1 + (n2 - 1) * s2 + (n3 - 1) * s3
    return t.address + (last + 1) * (4 if t.dtype_code == 0 else 2)


def _overlap(a: Target, b: Target) -> bool:
    """Whether two strided arrays share an element (exact: NumPy's solver), e.g. q and k that
    are one tensor or overlapping views of it; two slices of a fused QKV buffer do not.
    Both are non-empty with a contiguous last axis (checked before)."""
    a_end, b_end = _byte_end(a), _byte_end(b)
    if a_end <= b.address or b_end <= a.address:
        return False  # disjoint byte ranges: the common case, no arrays needed
    views = []
    for t, end in ((a, a_end), (b, b_end)):
        dtype = np.float32 if t.dtype_code == 0 else np.uint16
        base = np.frombuffer((ctypes.c_char * (end - t.address)).from_address(t.address), dtype=dtype)
        views.append(np.lib.stride_tricks.as_strided(base, shape=t.shape,
                                                     strides=tuple(st * base.itemsize for st in t.strides)))
    return bool(np.shares_memory(views[0], views[1]))


def _shared_axes(targets: Sequence[Target], head_dim: int) -> Tuple[int, int]:
    """(batch, sequence) of the targets, which q and k must share, after checking that each
    one's last axis is head_dim."""
    b_n, s_n = targets[0].shape[0], targets[0].shape[1]
    for t in targets[1:]:
        if t.shape[:2] != (b_n, s_n):
            raise InvalidArgumentError("q and k must share batch and sequence axes, got %s and %s"
                                       % (targets[0].shape[:2], t.shape[:2]), 1)
    for t in targets:
        if t.shape[3] != head_dim:
            raise InvalidArgumentError("%s: last axis is %d but head_dim is %d" % (t.name, t.shape[3], head_dim), 1)
    return b_n, s_n


def apply_targets_(targets: Sequence[Target], params: RopeParams, layout: Optional[str],
                   positions: Any, offset: Any, seq_len: Optional[int], inverse: bool,
                   threads: Optional[int] = None, pool: Optional[ThreadPool] = None) -> None:
    """Rotate every target in place, or raise before writing anything. The one exception,
    NonFiniteError (a rotated value is inf/NaN), comes after every target is rotated, as the
    C library leaves x rotated in full; it names the first bad value. A pool is held
    (pool.acquire) while the C calls run, so pool.close() in another thread waits for them."""
    if type(params) is not RopeParams and not isinstance(params, RopeParams):
        raise InvalidArgumentError("params must be a posenc.RopeParams, got %s" % type(params).__name__, 1)
    if seq_len is not None and type(seq_len) is not int:
        seq_len = integer(seq_len, "seq_len")
    layout_name = layout or params.layout or "half"
    layout_c = _lib.LAYOUT.get(layout_name) if isinstance(layout_name, str) else None
    if layout_c is None:
        layout_c = choose(_lib.LAYOUT, layout_name, "layout")
    c_params = params.to_c()
    b_n, s_n = _shared_axes(targets, c_params.head_dim)
    if type(offset) is not int:
        offset = _offset(offset)
    default_range = positions is None and type(offset) is int and offset == 0
    if positions is None and type(offset) is int:  # the common case, without numpy reductions
        pos, shared = np.arange(offset, offset + s_n, dtype=np.int64), True
        if seq_len is None:
            seq_len = max(offset + s_n, 0)
    else:
        pos, shared = _positions_for(positions, offset, b_n, s_n)
    if seq_len is None:  # HF's rule (and the CLI's): max(position_ids) + 1
        seq_len = checked_seq_len(max(int(pos.max()) + 1, 0), "positions") if pos.size else 0
    plans = [_plan_views(t) for t in targets]  # refuses negative strides, overlapping elements within one
    if not (plans[0][1] or (len(plans) > 1 and plans[1][1])):
        params.check()  # nothing to rotate (an empty array): a no-op, after the parameters are checked
        return
    if len(targets) == 2 and _overlap(targets[0], targets[1]):
        raise InvalidArgumentError("%s and %s share memory (the same tensor, or overlapping views of one): it "
                                   "would be rotated twice; pass separate tensors" % (targets[0].name, targets[1].name), 1)
    for t, (_, calls) in zip(targets, plans):  # C's view rules, before anything is written
        for _, view, count, _ in calls[:1]:
            _check_view(view, c_params.head_dim, count, t.name)
    if pool is None:
        _run_calls(targets, plans, c_params, seq_len, layout_c, pos, shared, default_range, inverse,
                   make_exec(threads, None) if threads is not None else None)
        return
    if not isinstance(pool, ThreadPool):
        raise InvalidArgumentError("pool must be a posenc.ThreadPool, got %s" % type(pool).__name__, 1)
    pool.acquire()
    try:
        _run_calls(targets, plans, c_params, seq_len, layout_c, pos, shared, default_range, inverse,
                   make_exec(threads, pool))
    finally:
        pool.release()


def _run_calls(targets: Sequence[Target], plans: List[Tuple[str, List[Tuple[int, "_lib.RopeView", int, int]]]],
               c_params: "_lib.RopeParams", seq_len: int, layout_c: int, pos: np.ndarray, shared: bool,
               default_range: bool, inverse: bool, exec_: Optional["_lib.Exec"]) -> None:
    """The C calls of apply_targets_, everything checked before."""
    err = _lib.Error()
    lib = _lib.lib
    b_n, s_n = targets[0].shape[0], targets[0].shape[1]
    # Every call goes to posenc_rope_apply_exec: the per-dtype entry points are thin wrappers
    # of the same checked body (views, layout, positions |p| < 2^53, the torch-compat float32
    # angle), and exec_ = None passes NULL (the library's defaults).
    exec_ref = None if exec_ is None else ctypes.byref(exec_)
    if pos.size and any(len(calls) > 1 for _, calls in plans):
        # Calls share params and the views are checked above; they differ only in their
        # positions, so a 2-token probe with the extreme positions fails exactly when a later
        # call would (after an earlier one wrote). One call per target needs no probe.
        probe = np.zeros(2 * c_params.head_dim, np.float32)
        probe_pos = np.array([pos.min(), pos.max()], np.int64)
        view = _lib.RopeView(2, 1, c_params.head_dim, c_params.head_dim)
        status = lib.posenc_rope_apply_exec(ctypes.byref(c_params), seq_len, layout_c, ctypes.byref(view),
                                            probe_pos.ctypes.data, 1 if inverse else 0, 0, probe.ctypes.data,
                                            probe.size, None, ctypes.byref(err))
        if status != 0:
            raise_status(status, err)
    pos_flat = pos if shared or pos.ndim == 1 else pos.reshape(-1)
    inv = 1 if inverse else 0
    nonfinite = None  # the first POSENC_ERR_NONFINITE, raised once everything is rotated
    params_ref = ctypes.byref(c_params)
    for t, (kind, calls) in zip(targets, plans):
        for address, view, count, b in calls:
            if view.tokens == 0:
                continue
            if default_range and view.tokens == s_n:
                ids_address = None  # NULL = positions 0..tokens-1 (same bits as explicit ids)
            else:
                if b < 0:
                    ids = pos_flat if (b_n == 1 or not shared) else np.tile(pos, b_n)
                else:
                    ids = pos if shared else pos[b]
                ids_address = ids.ctypes.data
            status = lib.posenc_rope_apply_exec(params_ref, seq_len, layout_c, ctypes.byref(view), ids_address,
                                                inv, t.dtype_code, address, count, exec_ref, ctypes.byref(err))
            if status == NonFiniteError.status:
                if nonfinite is None:
                    where = t.name if b < 0 else "%s[batch %d]" % (t.name, b)  # tokens count within the call
                    nonfinite = "%s: %s" % (where, err.message.decode(errors="replace"))
            elif status != 0:
                raise_status(status, err)
    if nonfinite is not None:
        raise NonFiniteError(nonfinite, NonFiniteError.status)


def _check_view(view: "_lib.RopeView", head_dim: int, count: int, name: str) -> None:
    """posenc's view rules (rope_check_view_), so a later call cannot fail after an earlier wrote."""
    if view.tokens == 0:
        return
    if view.heads > 1 and view.head_stride < head_dim:
        raise InvalidArgumentError("%s: head_stride must be >= head_dim (%d), got %d"
                                   % (name, head_dim, view.head_stride), 1)
    row_span = (view.heads - 1) * view.head_stride + head_dim
    if view.tokens > 1 and view.row_stride < row_span:
        raise InvalidArgumentError("%s: row_stride must be >= %d, got %d" % (name, row_span, view.row_stride), 1)


_NP_DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 2}


def _numpy_target(x: np.ndarray, name: str, tensor_layout: str, dtype: Optional[str]) -> Target:
    if not isinstance(x, np.ndarray):
        raise UnsupportedError("%s must be a numpy.ndarray, got %s" % (name, type(x).__name__), 8)
    if dtype in ("bf16", "bfloat16"):
        if x.dtype != np.uint16:
            raise UnsupportedError("%s: dtype='bf16' needs uint16 bits, got %s" % (name, x.dtype), 8)
        code = 3
    elif x.dtype in _NP_DTYPE_CODE:
        code = _NP_DTYPE_CODE[x.dtype]
    else:
        raise UnsupportedError("%s: dtype must be float32, float16 or uint16 bfloat16 bits with "
                               "dtype='bf16', got %s" % (name, x.dtype), 8)
    if not x.flags.writeable:
        raise InvalidArgumentError("%s is read-only; apply_rope_ rotates in place" % name, 1)
    shape, strides = _as_bshd(x.shape, tuple(s // x.itemsize for s in x.strides), tensor_layout, name)
    if any(s % x.itemsize for s in x.strides):
        raise UnsupportedError("%s: strides %s are not multiples of the item size" % (name, x.strides), 8)
    return Target(x.ctypes.data, code, shape, strides, name)


_TENSOR_LAYOUTS = {"bshd": "bshd", "shd": "bshd", "bhsd": "bhsd", "hsd": "bhsd", "sd": "bshd"}


def tensor_layout_of(tensor_layout: Any, ndim: int, name: str) -> str:
    """"bshd" or "bhsd" for a 3-D/4-D array (required: the shape alone cannot say whether
    axis 1 is the sequence or the heads, and guessing wrong rotates the heads axis without
    a word); "sd" for [S, D], where any given value is accepted."""
    if tensor_layout is not None and (not isinstance(tensor_layout, str) or tensor_layout not in _TENSOR_LAYOUTS):
        raise InvalidArgumentError("tensor_layout must be 'bshd' ([B, S, H, D]; 'shd' for [S, H, D]) or "
                                   "'bhsd' ([B, H, S, D], Hugging Face's after the head transpose; 'hsd'), "
                                   "got %r" % (tensor_layout,), 1)
    if ndim == 2:
        return "sd"
    if tensor_layout is None and ndim in (3, 4):
        raise InvalidArgumentError("tensor_layout is required for a %d-D %s: 'bshd' (%s) or 'bhsd' (%s); "
                                   "the shape cannot tell the sequence axis from the heads axis"
                                   % (ndim, name, "[B, S, H, D]" if ndim == 4 else "[S, H, D]",
                                      "[B, H, S, D]" if ndim == 4 else "[H, S, D]"), 1)
    return _TENSOR_LAYOUTS[tensor_layout] if tensor_layout is not None else "bshd"


def _as_bshd(shape: Tuple[int, ...], strides: Tuple[int, ...], tensor_layout: Any,
             name: str) -> Tuple[Tuple[int, int, int, int], Tuple[int, int, int, int]]:
    nd = len(shape)
    if nd == 4 and tensor_layout == "bshd":  # the common case first
        return shape, strides  # type: ignore[return-value]
    if nd not in (2, 3, 4):
        raise InvalidArgumentError("%s must be [S, D], [S, H, D] / [H, S, D] or 4-D [B, S, H, D] / [B, H, S, D], "
                                   "got shape %s" % (name, tuple(shape)), 1)
    tl = tensor_layout_of(tensor_layout, nd, name)
    if nd == 2:   # [S, D]
        return (1, shape[0], 1, shape[1]), (0, strides[0], shape[1], strides[1])
    if nd == 3:
        if tl == "bhsd":  # [H, S, D]
            return (1, shape[1], shape[0], shape[2]), (0, strides[1], strides[0], strides[2])
        return (1,) + tuple(shape), (0,) + tuple(strides)  # type: ignore[return-value]
    if tl == "bshd":
        return tuple(shape), tuple(strides)  # type: ignore[return-value]
    return ((shape[0], shape[2], shape[1], shape[3]),
            (strides[0], strides[2], strides[1], strides[3]))


def apply_rope_(q: np.ndarray, k: Optional[np.ndarray] = None, *, positions: Any = None,
                offset: Any = 0, layout: Optional[Layout] = None, tensor_layout: Optional[TensorLayout] = None,
                params: Optional[RopeParams] = None, config: Optional[ConfigLike] = None,
                seq_len: Optional[int] = None, inverse: bool = False, dtype: Optional[str] = None,
                threads: Optional[int] = None, pool: Optional[ThreadPool] = None,
                **flags: Any) -> None:
    """Rotate q (and k) in place, zero-copy (the data pointer goes to C; the GIL is released).

    q, k: [S, D]; [S, H, D] / [B, S, H, D] with tensor_layout="bshd"; [H, S, D] / [B, H, S, D]
    with tensor_layout="bhsd" (required for 3-D and 4-D arrays: there is no default);
    float32, float16, or uint16 bfloat16 bits with dtype="bf16"; any non-negative strides
    with a contiguous last axis (others raise UnsupportedError before anything is written).
    positions: int ids [S] or [B, S]; else offset + 0..S-1 (offset: int or one per batch row).
    layout: "neox"/"half" (HF rotate_half, default) or "gptj"/"interleaved".
    params / config / flags (base=, scaling=, factor=, rotary_dim=, mode="torch", ...): the
    RoPE parameters; head_dim is the last axis. seq_len (DYNAMIC / LONGROPE) defaults to
    max(position) + 1, as HF and `posenc rope apply`. inverse=True undoes a rotation.
    """
    tq = _numpy_target(q, "q", tensor_layout, dtype)
    targets = [tq]
    if k is not None:
        targets.append(_numpy_target(k, "k", tensor_layout, dtype))
    p = params if (params is not None and not flags and config is None) else \
        resolve_params(params, config, head_dim_of(tq, flags), what="apply_rope_", **flags)
    apply_targets_(targets, p, layout, positions, offset, seq_len, inverse, threads, pool)


def head_dim_of(t: Target, flags: Dict[str, Any]) -> int:
    """head_dim is the last axis; an explicit head_dim= keyword must agree with it."""
    if "head_dim" in flags:
        given = integer(flags.pop("head_dim"), "head_dim")
        if given != t.shape[3]:
            raise InvalidArgumentError("head_dim=%d but %s's last axis is %d" % (given, t.name, t.shape[3]), 1)
    return t.shape[3]


# ---- multi-axis RoPE (M-RoPE: Qwen2-VL sections, Qwen3-VL interleaved, axial) ----------

MropeKind = Literal["sections", "interleaved", "axial"]

# what the 1-D apply takes but posenc_mrope_apply_f32 has no argument for: refused by name
_MROPE_REFUSED = {
    "offset": "give the ids of every axis in positions (an offset would have to move t, h and w alike)",
    "seq_len": "posenc_mrope_apply_f32 takes the frequencies at the trained length (seq_len 0)",
    "threads": "posenc_mrope_apply_f32 runs on the calling thread (no posenc_exec)",
    "pool": "posenc_mrope_apply_f32 runs on the calling thread (no posenc_exec)",
    "dtype": "multi-axis RoPE rotates float32 only (posenc_mrope_apply_f32)",
}


def _model_config_of(config: Any) -> ModelConfig:
    """The one-RoPE ModelConfig of config: a ModelConfig, a posenc.Model (posenc.load_config's),
    or anything load_config reads (a path, a dict, an object with to_dict())."""
    if isinstance(config, ModelConfig):
        return config
    if isinstance(config, Model):
        if config.config is None:
            raise InvalidArgumentError("config: the model (%s) has no RoPE layer" % (config.architecture or "?"), 1)
        return config.config
    return load_config(config)


def mrope_sections(sections: Any, kind: Any) -> "_lib.MropeSections":
    """posenc_mrope_sections from 1..4 pair counts and a kind name ("sections", "interleaved",
    "axial") or its enum value; a bad count or kind raises InvalidArgumentError naming it."""
    if isinstance(sections, (str, bytes)) or not hasattr(sections, "__len__"):
        raise InvalidArgumentError("sections must be 1 to %d pair counts, one per position axis (Qwen2-VL: "
                                   "(16, 24, 24)), got %r" % (_lib.MROPE_MAX_AXES, sections), 1)
    sizes = [integer(v, "sections[%d]" % i) for i, v in enumerate(sections)]
    if not 1 <= len(sizes) <= _lib.MROPE_MAX_AXES:
        raise InvalidArgumentError("sections must list 1 to %d pair counts, got %d: %r"
                                   % (_lib.MROPE_MAX_AXES, len(sizes), tuple(sizes)), 1)
    bad = [(i, v) for i, v in enumerate(sizes) if v < 0 or v > 2 ** 31 - 1]
    if bad:
        raise InvalidArgumentError("sections[%d] must be >= 0, got %d (sections %r)" % (bad[0] + (tuple(sizes),)), 1)
    c = _lib.MropeSections()
    c.kind = choose(_lib.MROPE_KIND, kind, "kind")
    c.axes = len(sizes)
    for i, v in enumerate(sizes):
        c.sizes[i] = v
    return c


def resolve_mrope(params: Optional[RopeParams], config: Optional[ConfigLike], head_dim: Optional[int],
                  sections: Any, kind: Any, flags: Dict[str, Any]) -> Tuple[RopeParams, "_lib.MropeSections"]:
    """The RoPE parameters and the checked sections of a multi-axis call. sections / kind
    default to the config's (mrope_section; interleaved for Qwen3-VL); without a config
    sections are required and kind defaults to "sections"."""
    for name, why in _MROPE_REFUSED.items():
        if name in flags:
            raise KeywordError("multi-axis RoPE takes no %s=: %s" % (name, why), 1)
    check_flags(flags)
    cfg = None
    if config is not None:
        if params is not None:
            raise InvalidArgumentError("give params or config, not both", 1)
        cfg = _model_config_of(config)
        p = cfg.rope.replace(**flags) if flags else cfg.rope
    else:
        p = resolve_params(params, None, head_dim, **flags)
    if sections is None:
        if cfg is None:
            raise InvalidArgumentError("sections are required: give sections=(s0, s1, s2), the pairs per position "
                                       "axis (Qwen2-VL: (16, 24, 24)), or a config with M-RoPE sections", 1)
        if not cfg.mrope_sections:
            raise InvalidArgumentError("config (%s) has no M-RoPE sections (rope_scaling.mrope_section); give "
                                       "sections=" % (cfg.architecture or "no model_type"), 1)
        sections = cfg.mrope_sections
    if kind is None:
        kind = "interleaved" if cfg is not None and cfg.mrope_interleaved else "sections"
    c = mrope_sections(sections, kind)
    pairs = p.check() // 2
    axis = np.empty(max(pairs, 1), np.int32)
    inv = np.empty(max(pairs, 1), np.float64)
    err = _lib.Error()
    status = _lib.lib.posenc_mrope_pair_map(ctypes.byref(p.to_c()), ctypes.byref(c), axis.ctypes.data,
                                            inv.ctypes.data, axis.size, ctypes.byref(err))
    if status != 0:  # the library's message (e.g. the sum it got), with the sections as given
        raise error_for(status, "sections %r, kind %s: %s" % (tuple(c.sizes[:c.axes]), _lib.MROPE_KIND_NAME[c.kind],
                                                          err.message.decode("utf-8", "replace")))
    return p, c


def _mrope_seq_len_check(p: RopeParams, pos: np.ndarray) -> None:
    """DYNAMIC and LONGROPE (by_seq_len) depend on the sequence length, which the C call does not
    take (it uses the trained length): refuse positions past it rather than rotate unlike HF."""
    if p.scaling not in ("dynamic", "longrope") or (p.scaling == "longrope" and p.longrope_select != "by_seq_len"):
        return
    if not pos.size:
        return
    n = max(int(pos.max()) + 1, 0)
    at_n, at_0 = rope_frequencies(p, seq_len=n), rope_frequencies(p, seq_len=0)
    if not (np.array_equal(at_n.inv_freq, at_0.inv_freq) and at_n.attention_factor == at_0.attention_factor):
        raise UnsupportedError("positions reach %d, past the trained length: %s scaling then depends on the "
                               "sequence length, which posenc_mrope_apply_f32 does not take (it rotates at the "
                               "trained length)%s" % (n - 1, p.scaling, "; pass longrope_select='short' or 'long'"
                                                     if p.scaling == "longrope" else ""), 8)


def integer_ids(positions: Any) -> np.ndarray:
    """positions (a torch tensor, array or sequence) as int64 ids; non-integers refused by name."""
    if type(positions).__module__.startswith("torch"):
        positions = positions.detach().cpu().numpy()
    pos = np.asarray(positions)
    if pos.dtype.kind not in "iu":
        raise UnsupportedError("positions must be integers, got dtype %s" % pos.dtype, 8)
    return int64_ids(pos, "positions")


def mrope_positions(positions: Any, axes: int, b_n: int, s_n: int) -> np.ndarray:
    """int64 positions [axes, B, S] from [axes, S] (shared by every batch row) or [axes, B, S]
    (HF's position_ids [3, B, S]); anything else raises naming the shape."""
    if positions is None:
        raise InvalidArgumentError("positions are required: int ids [axes, S] or [axes, B, S] (t, h, w rows; "
                                   "posenc.mrope_position_ids builds Qwen2-VL's)", 1)
    pos = integer_ids(positions)
    if pos.ndim == 2:
        pos = pos[:, None, :]
    if pos.ndim != 3 or pos.shape[0] != axes or pos.shape[2] != s_n or pos.shape[1] not in (1, b_n):
        raise InvalidArgumentError("positions must be [axes, S] = [%d, %d] or [axes, B, S] = [%d, %d, %d] "
                                   "(one row per section), got shape %s"
                                   % (axes, s_n, axes, b_n, s_n, tuple(np.shape(positions))), 1)
    return np.ascontiguousarray(np.broadcast_to(pos, (axes, b_n, s_n)))


def mrope_targets_(targets: Sequence[Target], params: RopeParams, sections: "_lib.MropeSections",
                   layout: Optional[str], positions: Any, inverse: bool) -> None:
    """Rotate every float32 target with posenc_mrope_apply_f32, in place, or raise before writing
    anything (NonFiniteError excepted: it comes after the whole rotation, as in apply_targets_)."""
    layout_c = choose(_lib.LAYOUT, layout or params.layout or "half", "layout")
    for t in targets:
        if t.dtype_code != 0:
            raise UnsupportedError("%s: multi-axis RoPE rotates float32 only (posenc_mrope_apply_f32)" % t.name, 8)
    c_params = params.to_c()
    b_n, s_n = _shared_axes(targets, c_params.head_dim)
    axes = int(sections.axes)
    pos = mrope_positions(positions, axes, b_n, s_n)  # [axes, B, S]
    _mrope_seq_len_check(params, pos)
    plans = [_plan_views(t) for t in targets]
    if not (plans[0][1] or (len(plans) > 1 and plans[1][1])):
        return  # an empty array: a no-op (params and sections were checked by resolve_mrope)
    if len(targets) == 2 and _overlap(targets[0], targets[1]):
        raise InvalidArgumentError("%s and %s share memory (the same tensor, or overlapping views of one): it "
                                   "would be rotated twice; pass separate tensors" % (targets[0].name, targets[1].name), 1)
    for t, (_, calls) in zip(targets, plans):
        for _, view, count, _ in calls[:1]:
            _check_view(view, c_params.head_dim, count, t.name)
    err = _lib.Error()
    lib = _lib.lib
    sec_ref, params_ref = ctypes.byref(sections), ctypes.byref(c_params)
    inv = 1 if inverse else 0
    if pos.size and sum(len(calls) for _, calls in plans) > 1:
        # every call shares params, sections and layout; only the positions differ, so a 2-token
        # probe holding the extreme ids on every axis fails exactly when a later call would
        probe = np.zeros(2 * c_params.head_dim, np.float32)
        probe_pos = np.repeat(np.array([[pos.min(), pos.max()]], np.int64), axes, axis=0)
        view = _lib.RopeView(2, 1, c_params.head_dim, c_params.head_dim)
        status = lib.posenc_mrope_apply_f32(params_ref, sec_ref, layout_c, ctypes.byref(view), probe_pos.ctypes.data,
                                            inv, probe.ctypes.data, probe.size, ctypes.byref(err))
        if status != 0:
            raise_status(status, err)
    nonfinite = None
    for t, (kind, calls) in zip(targets, plans):
        for address, view, count, b in calls:
            if view.tokens == 0:
                continue
            # [axes][tokens] row-major: the whole batch flattened (one call), or batch row b
            ids = pos.reshape(axes, b_n * s_n) if b < 0 else np.ascontiguousarray(pos[:, b, :])
            status = lib.posenc_mrope_apply_f32(params_ref, sec_ref, layout_c, ctypes.byref(view), ids.ctypes.data,
                                                inv, address, count, ctypes.byref(err))
            if status == NonFiniteError.status:
                if nonfinite is None:
                    where = t.name if b < 0 else "%s[batch %d]" % (t.name, b)
                    nonfinite = "%s: %s" % (where, err.message.decode(errors="replace"))
            elif status != 0:
                raise_status(status, err)
    if nonfinite is not None:
        raise NonFiniteError(nonfinite, NonFiniteError.status)


def _mrope_numpy_target(x: Any, name: str, tensor_layout: Any) -> Target:
    if isinstance(x, np.ndarray) and x.dtype != np.float32:
        raise UnsupportedError("%s: multi-axis RoPE rotates float32 only (posenc_mrope_apply_f32), got %s"
                               % (name, x.dtype), 8)
    return _numpy_target(x, name, tensor_layout, None)


def mrope_apply_(q: np.ndarray, k: Optional[np.ndarray] = None, *, positions: Any = None,
                 sections: Optional[Sequence[int]] = None, kind: Optional[MropeKind] = None,
                 layout: Optional[Layout] = None, tensor_layout: Optional[TensorLayout] = None,
                 params: Optional[RopeParams] = None, config: Optional[ConfigLike] = None,
                 inverse: bool = False, **flags: Any) -> None:
    """Multi-axis RoPE (M-RoPE) on q (and k), in place (posenc_mrope_apply_f32).

    q, k: float32 only, shaped as for apply_rope_ ([S, D]; [S, H, D] / [B, S, H, D] with
    tensor_layout="bshd"; [H, S, D] / [B, H, S, D] with "bhsd", e.g. HF's q after the head
    transpose). positions (required, keyword): int ids [axes, S] (shared by every batch row)
    or [axes, B, S] (HF's position_ids [3, B, S]); row a holds the ids of axis a (t, h, w).
    sections: pairs per axis, summing to R/2 (Qwen2-VL (16, 24, 24), Qwen3-VL (24, 20, 20)).
    kind: "sections" (Qwen2-VL / Qwen2.5-VL: contiguous blocks of pairs), "interleaved"
    (Qwen3-VL: h at pairs 1, 4, .. < 3 s1, w at 2, 5, .. < 3 s2, t elsewhere) or "axial"
    (frequencies restart per section). Both default to the config's (mrope_section,
    mrope_interleaved); without a config sections are required and kind is "sections".
    params / config (a path, dict, transformers config, ModelConfig or posenc.Model) / flags
    (base=, mode="torch" for HF's float32 steps bit for bit, ...) as for apply_rope_; layout
    "neox"/"half" (HF, default) or "gptj"/"interleaved". inverse=True undoes a rotation.
    Frequencies are those at the trained length (no seq_len): DYNAMIC / LONGROPE by_seq_len
    with positions past it are refused. With every axis at the same id it is apply_rope_.
    Errors are raised before anything is written (NonFiniteError: after, naming the value).
    """
    targets = [_mrope_numpy_target(q, "q", tensor_layout)]
    if k is not None:
        if isinstance(k, np.ndarray) and k.dtype.kind in "iu" and positions is None:
            raise InvalidArgumentError("k is an integer array: positions are keyword-only "
                                       "(mrope_apply_(q, positions=ids))", 1)
        targets.append(_mrope_numpy_target(k, "k", tensor_layout))
    p, sec = resolve_mrope(params, config, head_dim_of(targets[0], flags), sections, kind, flags)
    mrope_targets_(targets, p, sec, layout, positions, inverse)


def mrope_position_ids(segments: Sequence[Any]) -> np.ndarray:
    """Qwen2-VL's get_rope_index position ids (posenc_mrope_position_ids): int64 [3, T] (t, h, w rows)
    for a sequence of segments, each an int (that many text tokens) or a (t, h, w) grid of vision
    tokens (already divided by the spatial merge size). Text token i of a run starting at s gets
    (s+i, s+i, s+i); a grid starting at s gets (s+ti, s+hi, s+wi), t-major; the next segment
    starts at 1 + the largest id so far. Stack rows for a batch: np.stack(..., axis=1) -> [3, B, T]."""
    if isinstance(segments, (str, bytes)) or not hasattr(segments, "__len__"):
        raise InvalidArgumentError("segments must be a list of text lengths (int) and (t, h, w) grids, got %r"
                                   % (segments,), 1)
    arr = (_lib.MropeSegment * max(len(segments), 1))()
    for i, seg in enumerate(segments):
        if isinstance(seg, (tuple, list, np.ndarray)):
            if len(seg) != 3:
                raise InvalidArgumentError("segments[%d]: a grid is (t, h, w), got %r" % (i, tuple(seg)), 1)
            arr[i].is_grid = 1
            arr[i].grid_t, arr[i].grid_h, arr[i].grid_w = (integer(v, "segments[%d][%d]" % (i, j))
                                                           for j, v in enumerate(seg))
        else:
            arr[i].length = integer(seg, "segments[%d]" % i)
    total = ctypes.c_size_t()
    call(_lib.lib.posenc_mrope_position_ids, arr, len(segments), None, 0, ctypes.byref(total))
    out = np.empty((3, total.value), np.int64)
    call(_lib.lib.posenc_mrope_position_ids, arr, len(segments), out.ctypes.data, out.size, None)
    return out


__all__ = ["RopeParams", "ModelConfig", "LayerType", "load_config", "resolve_params", "RopeFrequencies",
           "rope_frequencies", "rope_cos_sin", "apply_rope_", "ThreadPool", "Layout", "TensorLayout", "Mode",
           "Scaling", "mrope_apply_", "mrope_position_ids", "MropeKind"]

# apply_rope_ takes **flags (check_flags names a bad keyword): no wrapper on the per-call path
check_keywords(globals(), ["rope_cos_sin", "mrope_position_ids"])  # config.py wraps its own
ThreadPool.__init__ = keywords_checked(ThreadPool.__init__)  # type: ignore[method-assign]
