"""posenc.Error and its subclasses, one per posenc_status code.

Every exception carries the library's message (the one that names the bad
value, e.g. "dim must be even for layout=interleaved, got 65") in .message and
the numeric status in .status. Checks done in Python before calling C (dtype,
device, strides the C view cannot express) raise the same classes.
"""
from __future__ import annotations

from typing import Dict, Type


class Error(Exception):
    """Base of every posenc error. .status: the posenc_status code; .message: the text."""

    status = -1

    def __init__(self, message: str, status: int = -1):
        # Exception.__init__, not super(): torch.compile's dynamo cannot trace super().__init__ on
        # these multiple-inheritance classes, and a refusal inside a compiled function must still
        # raise this class with its message (the other base, ValueError etc., adds no state)
        Exception.__init__(self, message)
        self.message = message
        if status >= 0:
            self.status = status


class InvalidArgumentError(Error, ValueError):
    """POSENC_ERR_INVALID_ARGUMENT (1): a parameter is out of its domain."""
    status = 1


class KeywordError(InvalidArgumentError, TypeError):
    """A misspelt, unknown or doubled keyword argument (status 1, as InvalidArgumentError;
    also a TypeError, what Python raises for a bad keyword)."""


class OutOfMemoryError(Error, MemoryError):
    """POSENC_ERR_OUT_OF_MEMORY (2)."""
    status = 2


class BufferTooSmallError(Error, ValueError):
    """POSENC_ERR_BUFFER_TOO_SMALL (3): an array is shorter than the call needs."""
    status = 3


class SizeOverflowError(Error, OverflowError):
    """POSENC_ERR_SIZE_OVERFLOW (4): a size product overflows."""
    status = 4


class LimitError(Error, ValueError):
    """POSENC_ERR_LIMIT (5): larger than the documented or configured maximum."""
    status = 5


class PosencIOError(Error, OSError):
    """POSENC_ERR_IO (6): a file could not be opened, read, written or renamed."""
    status = 6

    def __init__(self, message: str, status: int = 6):
        Error.__init__(self, message, status)

    def __str__(self) -> str:
        return self.message


class FormatError(Error, ValueError):
    """POSENC_ERR_FORMAT (7): a file or document is malformed or truncated."""
    status = 7


class UnsupportedError(Error, TypeError):
    """POSENC_ERR_UNSUPPORTED (8): well-formed but not supported (dtype, device, layout, strides)."""
    status = 8


class OutOfRangeError(Error, IndexError):
    """POSENC_ERR_OUT_OF_RANGE (9): a position or index lies outside a table."""
    status = 9


class NullPointerError(Error, ValueError):
    """POSENC_ERR_NULL_POINTER (10)."""
    status = 10


class NonFiniteError(Error, ArithmeticError):
    """POSENC_ERR_NONFINITE (11): a result would be NaN or infinite (e.g. a rotation that
    overflows float16), or an input holds NaN/inf; the message names the first bad cell."""
    status = 11


BY_STATUS: Dict[int, Type[Error]] = {cls.status: cls for cls in (
    InvalidArgumentError, OutOfMemoryError, BufferTooSmallError, SizeOverflowError, LimitError,
    PosencIOError, FormatError, UnsupportedError, OutOfRangeError, NullPointerError, NonFiniteError)}


def error_for(status: int, message: str) -> Error:
    """The exception for a status code (Error itself for an unknown code)."""
    cls = BY_STATUS.get(status, Error)
    return cls(message, status)
