"""Helpers shared by the modules: calling C with an error struct, positions, arrays."""
from __future__ import annotations

import ctypes
import difflib
import functools
import inspect
import math
import operator
from typing import Any, Callable, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np

from . import _lib
from ._errors import Error, InvalidArgumentError, KeywordError, UnsupportedError, error_for

PositionsLike = Union[None, int, Sequence[int], Sequence[float], np.ndarray]

NUMPY_DTYPE = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
               "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16}
FROM_NUMPY = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16",
              np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.uint8): "u8",
              np.dtype(np.uint16): "u16"}


def integer(value: Any, what: str) -> int:
    """An integer argument, or InvalidArgumentError naming it: a fractional value (1.5), a
    non-finite one or a bool is refused, never truncated (int(1.5) would be 1, silently)."""
    if isinstance(value, bool) or isinstance(value, np.bool_):
        raise InvalidArgumentError("%s must be an integer, got %r" % (what, value), 1)
    try:
        return operator.index(value)  # int, numpy integers, 0-d integer tensors
    except TypeError:
        pass
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError("%s must be an integer, got %r (%s)" % (what, value, type(value).__name__),
                                   1) from None
    if not math.isfinite(f) or f != math.floor(f):
        raise InvalidArgumentError("%s must be an integer, got %r (a fraction is never truncated)" % (what, value), 1)
    return int(f)


F = TypeVar("F", bound=Callable[..., Any])


def keywords_checked(fn: F) -> F:
    """A call with a misspelt, unknown or doubled keyword (or too many positionals) raises
    KeywordError (a posenc.Error and a TypeError) naming it, instead of Python's raw
    TypeError. Free on the happy path: the signature is bound only after a TypeError."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TypeError as exc:
            if isinstance(exc, Error):
                raise
            try:
                signature.bind(*args, **kwargs)
            except TypeError as bad:
                known = [n for n, prm in signature.parameters.items() if prm.kind != prm.VAR_KEYWORD]
                hints = ["%r (did you mean %r?)" % (k, close[0]) for k in kwargs if k not in signature.parameters
                         for close in [difflib.get_close_matches(k, known, n=1)] if close]
                raise KeywordError("%s(): %s%s" % (fn.__qualname__.replace(".__init__", ""), bad,
                                                   ("; " + ", ".join(hints)) if hints else ""), 1) from None
            raise

    checked.__signature__ = signature  # type: ignore[attr-defined]
    return checked  # type: ignore[return-value]


def check_keywords(namespace: dict, names: Sequence[str]) -> None:
    """Wrap every public function of a module (by name) with keywords_checked."""
    for name in names:
        obj = namespace.get(name)
        if inspect.isfunction(obj):
            namespace[name] = keywords_checked(obj)


def call(function, *args) -> None:
    """Call a library function whose last argument is posenc_error*; raise on failure."""
    err = _lib.Error()
    status = function(*args, ctypes.byref(err))
    if status != 0:
        raise_status(status, err)


def raise_status(status: int, err: "_lib.Error") -> None:
    message = err.message.decode("utf-8", "replace")
    if not message:
        message = _lib.lib.posenc_strerror(status).decode()
    raise error_for(status, message)


def choose(table: dict, value: Any, what: str) -> int:
    """Map a name ("half", "neox", ...) or the enum's int to the C value."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if int(value) in table.values():
            return int(value)
    elif isinstance(value, str) and value.lower().replace("-", "_") in table:
        return table[value.lower().replace("-", "_")]
    elif isinstance(value, str) and value.lower() in table:
        return table[value.lower()]
    raise InvalidArgumentError("%s must be one of %s, got %r" % (what, ", ".join(sorted(
        k for k in table if isinstance(k, str))), value), 1)


def dtype_name(dtype: Any) -> str:
    """Accept "f32", "bf16", np.float32, "float16" ...; return the posenc short name."""
    if isinstance(dtype, str):
        aliases = {"float32": "f32", "float64": "f64", "float16": "f16", "half": "f16",
                   "bfloat16": "bf16", "int32": "i32", "int64": "i64", "uint8": "u8",
                   "uint16": "u16", "float": "f32", "double": "f64"}
        name = aliases.get(dtype.lower(), dtype.lower())
        if name in _lib.DTYPE:
            return name
    else:
        try:
            return FROM_NUMPY[np.dtype(dtype)]
        except (TypeError, KeyError):
            pass
    raise UnsupportedError("dtype must be one of f32, f64, f16, bf16 (or a numpy float dtype), got %r"
                           % (dtype,), 8)


def make_positions(positions: PositionsLike = None, count: Optional[int] = None,
                   start: int = 0) -> Tuple["_lib.Positions", Any]:
    """A posenc_positions for: a range (positions None: start..start+count-1), an int
    count (range from start), or explicit ids (integer array) / real values (float array).
    Returns (struct, keepalive) -- keep the second alive while the struct is used."""
    p = _lib.Positions()
    if positions is None or (isinstance(positions, (int, np.integer)) and not isinstance(positions, bool)):
        n = count if positions is None else int(positions)
        n = None if n is None else integer(n, "length")
        if n is None or n < 0:
            raise InvalidArgumentError("positions: give a count >= 0 or an array of positions, got %r"
                                       % (n,), 1)
        p.count, p.start = n, integer(start, "start")
        return p, None
    arr = np.asarray(positions)
    if arr.ndim != 1:
        raise InvalidArgumentError("positions must be 1-D, got shape %s" % (arr.shape,), 1)
    if arr.dtype.kind in "iu":
        arr = np.ascontiguousarray(int64_ids(arr, "positions"))
        p.ids = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
    elif arr.dtype.kind == "f":
        arr = np.ascontiguousarray(arr, dtype=np.float64)
        p.values = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    elif arr.size == 0:
        arr = np.zeros(0, np.int64)
        p.ids = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
    else:
        raise UnsupportedError("positions must be integers or floats, got dtype %s" % arr.dtype, 8)
    p.count = arr.shape[0]
    return p, arr


def int64_ids(arr: np.ndarray, what: str) -> np.ndarray:
    """Integer ids as int64 (int64 input as is, maybe not contiguous), refusing uint64 values
    past int64's range (astype would wrap 2^64-1 to -1 without a word)."""
    if arr.dtype == np.int64:
        return arr
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise InvalidArgumentError("%s: %d does not fit int64 (largest %d)"
                                   % (what, int(arr.max()), np.iinfo(np.int64).max), 1)
    return np.ascontiguousarray(arr, dtype=np.int64)


def to_array(data: Any, name: str = "array") -> Tuple["_lib.Array", Any]:
    """Wrap a NumPy array (or a CPU torch tensor, bf16 included) as a posenc_array
    without copying when it is C-contiguous. Returns (struct, keepalive)."""
    dtype = None
    if type(data).__module__.startswith("torch"):
        import torch
        if not isinstance(data, torch.Tensor):
            raise UnsupportedError("%s: expected an array or tensor, got %s" % (name, type(data)), 8)
        if data.device.type != "cpu":
            raise UnsupportedError("%s: tensor must be on the CPU, got device %s" % (name, data.device), 8)
        data = data.detach()
        if data.dtype == torch.bfloat16:
            data = data.contiguous().view(torch.int16).numpy().view(np.uint16)
            dtype = "bf16"
        else:
            data = data.contiguous().numpy()
    arr = np.ascontiguousarray(data)
    if dtype is None:
        if arr.dtype == np.bool_:
            arr = arr.astype(np.uint8)
        if arr.dtype not in FROM_NUMPY:
            raise UnsupportedError("%s: dtype %s is not supported (f32, f64, f16, i32, i64, u8, u16)"
                                   % (name, arr.dtype), 8)
        dtype = FROM_NUMPY[arr.dtype]
    if arr.ndim > _lib.MAX_DIMS:
        raise UnsupportedError("%s: at most %d dimensions, got %d" % (name, _lib.MAX_DIMS, arr.ndim), 8)
    a = _lib.Array()
    a.dtype = _lib.DTYPE[dtype]
    a.ndim = arr.ndim
    for i, n in enumerate(arr.shape):
        a.shape[i] = n
    a.count = arr.size
    a.data = arr.ctypes.data
    return a, arr


def doubles(ptr, count: int) -> np.ndarray:
    """Copy `count` doubles from a C pointer into a new NumPy array (empty for NULL)."""
    if not ptr or count <= 0:
        return np.zeros(0, np.float64)
    return np.ctypeslib.as_array(ptr, shape=(count,)).copy()


def text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


__all__ = ["integer", "keywords_checked", "check_keywords", "int64_ids", "call", "choose", "dtype_name", "make_positions", "to_array", "doubles", "text", "Error"]
