"""Helpers shared by the modules: calling C with an error struct, positions, arrays."""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._errors import Error, InvalidArgumentError, UnsupportedError, error_for

PositionsLike = Union[None, int, Sequence[int], Sequence[float], np.ndarray]

NUMPY_DTYPE = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
               "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16}
FROM_NUMPY = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16",
              np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.uint8): "u8",
              np.dtype(np.uint16): "u16"}


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
        if n is None or n < 0:
            raise InvalidArgumentError("positions: give a count >= 0 or an array of positions, got %r"
                                       % (n,), 1)
        p.count, p.start = int(n), int(start)
        return p, None
    arr = np.asarray(positions)
    if arr.ndim != 1:
        raise InvalidArgumentError("positions must be 1-D, got shape %s" % (arr.shape,), 1)
    if arr.dtype.kind in "iu":
        arr = np.ascontiguousarray(arr, dtype=np.int64)
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


__all__ = ["call", "choose", "dtype_name", "make_positions", "to_array", "doubles", "text", "Error"]
