"""Learned absolute tables (BERT, GPT-2, RoBERTa): reproducible init, gather, its
backward, RoBERTa positions from input ids, and resizing. Tables are float32 [rows, dim]."""
from __future__ import annotations

from typing import Optional

import numpy as np

from . import _lib
from ._common import check_keywords, integer, call, choose
from ._errors import InvalidArgumentError


def _table(table: np.ndarray, name: str = "table") -> np.ndarray:
    t = np.ascontiguousarray(table, dtype=np.float32)
    if t.ndim != 2:
        raise InvalidArgumentError("%s must be [rows, dim], got shape %s" % (name, t.shape), 1)
    return t


def learned_init(rows: int, dim: int, *, seed: int = 0, sigma: float = 0.02,
                 padding_idx: Optional[int] = None) -> np.ndarray:
    """N(0, sigma^2) table [rows, dim] float32 from `seed` (splitmix64 + Box-Muller recipe of
    posenc.h, same bits as `posenc table --kind learned`); row padding_idx zeroed."""
    out = np.empty((integer(rows, "rows"), integer(dim, "dim")), np.float32)
    call(_lib.lib.posenc_learned_init_f32, integer(seed, "seed") & (2 ** 64 - 1), float(sigma),
         _lib.NO_PADDING if padding_idx is None else integer(padding_idx, "padding_idx"), integer(rows, "rows"), integer(dim, "dim"),
         out.ctypes.data, out.size)
    return out


def learned_gather(table: np.ndarray, positions, *, past_end: str = "error") -> np.ndarray:
    """table[positions] ([*positions.shape, dim] float32); past-the-end positions follow
    past_end ("error" -> OutOfRangeError naming the position, "clamp")."""
    t = _table(table)
    pos = np.ascontiguousarray(positions, dtype=np.int64)
    out = np.empty(pos.shape + (t.shape[1],), np.float32)
    call(_lib.lib.posenc_learned_gather_f32, t.ctypes.data, t.shape[0], t.shape[1], pos.ctypes.data, pos.size,
         choose(_lib.PAST_END, past_end, "past_end"), out.ctypes.data, out.size)
    return out


def learned_backward(grad_out: np.ndarray, positions, rows: int, *, past_end: str = "error",
                     padding_idx: Optional[int] = None,
                     grad_table: Optional[np.ndarray] = None) -> np.ndarray:
    """Gradient of the gather: grad_table[positions[i]] += grad_out[i] (float32 [rows, dim]),
    nn.Embedding semantics (padding row gets none). Accumulates into grad_table if given."""
    pos = np.ascontiguousarray(positions, dtype=np.int64).reshape(-1)
    g = np.ascontiguousarray(grad_out, dtype=np.float32)
    dim = g.shape[-1] if g.ndim else 0
    g = g.reshape(-1, dim) if g.size else g.reshape(0, dim)
    if g.shape[0] != pos.size:
        raise InvalidArgumentError("grad_out has %d rows but positions has %d" % (g.shape[0], pos.size), 1)
    if grad_table is None:
        grad_table = np.zeros((integer(rows, "rows"), dim), np.float32)
    elif not (grad_table.dtype == np.float32 and grad_table.flags.c_contiguous and grad_table.shape == (rows, dim)):
        raise InvalidArgumentError("grad_table must be a C-contiguous float32 [%d, %d] array" % (rows, dim), 1)
    call(_lib.lib.posenc_learned_backward_f32, g.ctypes.data, pos.ctypes.data, pos.size, dim,
         choose(_lib.PAST_END, past_end, "past_end"), _lib.NO_PADDING if padding_idx is None else integer(padding_idx, "padding_idx"),
         grad_table.ctypes.data, integer(rows, "rows"))
    return grad_table


def positions_from_input_ids(input_ids, *, pad_id: int = 1, past_length: int = 0,
                             attention_mask=None) -> np.ndarray:
    """RoBERTa/fairseq positions (HF create_position_ids_from_input_ids), int64, same shape
    as input_ids ([seq] or [batch, seq]): pads get pad_id, real tokens pad_id+1, +2, ..."""
    ids = np.ascontiguousarray(input_ids, dtype=np.int64)
    shape = ids.shape
    ids2 = ids.reshape(1, -1) if ids.ndim == 1 else ids
    if ids2.ndim != 2:
        raise InvalidArgumentError("input_ids must be [seq] or [batch, seq], got shape %s" % (shape,), 1)
    mask = None
    if attention_mask is not None:
        mask = np.ascontiguousarray(np.asarray(attention_mask) != 0, dtype=np.uint8).reshape(ids2.shape)
    out = np.empty(ids2.shape, np.int64)
    call(_lib.lib.posenc_positions_from_input_ids, ids2.ctypes.data, None if mask is None else mask.ctypes.data,
         ids2.shape[0], ids2.shape[1], integer(pad_id, "pad_id"), integer(past_length, "past_length"), out.ctypes.data, out.size)
    return out.reshape(shape)


def learned_resize(table: np.ndarray, new_rows: int, *, keep: int = 0) -> np.ndarray:
    """Resize [rows, dim] to [new_rows, dim] by linear interpolation (align_corners), leaving
    the first `keep` rows (RoBERTa 2, ViT 1) untouched."""
    t = _table(table)
    out = np.empty((integer(new_rows, "new_rows"), t.shape[1]), np.float32)
    call(_lib.lib.posenc_learned_resize_f32, t.ctypes.data, t.shape[0], t.shape[1], integer(keep, "keep"), out.ctypes.data,
         integer(new_rows, "new_rows"), out.size)
    return out


__all__ = ["learned_init", "learned_gather", "learned_backward", "positions_from_input_ids", "learned_resize"]

check_keywords(globals(), __all__)  # a bad keyword raises posenc.KeywordError naming it
