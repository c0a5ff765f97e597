"""Keras 3 layers on posenc's C tables, written with keras.ops (any backend runs them; tested
on the torch backend, KERAS_BACKEND=torch):

    import posenc.keras as pk
    x = x + pk.SinusoidalEmbedding(512)(x)              # [B, S, D] -> the table rows [B, S, D]
    x = x + pk.LearnedEmbedding(1024)(x)                # trainable, GPT-2's N(0, 0.02^2) init
    q = pk.RotaryEmbedding(4096, base=500000.0)(q)      # [B, S, H, D] (sequence_axis=1)

The tables come from the C library once, when the layer is built (sinusoid_table,
learned_init, rope_cos_sin): the sinusoidal and learned values are those tables bit for bit;
RotaryEmbedding rotates with keras.ops as x*cos + rotate(x)*sin, which in float32 rounds as
the C kernel does (a*c - b*s, b*c + a*s, no FMA), so its float32 result is posenc.apply_rope_'s
bits on the torch backend (python/tests/test_layers.py). The call signature follows
keras_hub's SinePositionEncoding / PositionEmbedding / RotaryEmbedding (start_index=).
"""
from __future__ import annotations

from typing import Any, Optional

import keras
from keras import ops

from ._common import integer
from ._errors import InvalidArgumentError, UnsupportedError
from .config import RopeParams, resolve_params
from .bias import alibi_slopes
from .learned import learned_init
from .rope import rope_cos_sin
from .tables import sinusoid_table


def _slice_rows(table: Any, start_index: Any, length: Any) -> Any:
    return ops.slice(table, (start_index, 0), (length, ops.shape(table)[1]))


class SinusoidalEmbedding(keras.layers.Layer):
    """The sinusoidal table of "Attention Is All You Need" (posenc.sinusoid_table: base, freqs,
    layout, mode) for max_length positions. call(inputs [B, S, D], start_index=0) returns the
    rows start_index..start_index+S-1 broadcast to inputs' shape (add them yourself)."""

    def __init__(self, max_length: int, *, base: float = 10000.0, freqs: str = "vaswani",
                 layout: str = "interleaved", mode: str = "precise", **kwargs: Any):
        super().__init__(**kwargs)
        self.max_length = integer(max_length, "max_length")
        self.base, self.freqs, self.table_layout, self.mode = float(base), freqs, layout, mode

    def build(self, input_shape: Any) -> None:
        dim = input_shape[-1]
        if dim is None:
            raise InvalidArgumentError("SinusoidalEmbedding: the last axis of the input must be known", 1)
        table = sinusoid_table(self.max_length, int(dim), base=self.base, freqs=self.freqs,
                               layout=self.table_layout, mode=self.mode)
        self.table = self.add_weight(shape=table.shape, initializer=keras.initializers.Constant(table),
                                     trainable=False, name="table", dtype="float32")

    def call(self, inputs: Any, start_index: Any = 0) -> Any:
        rows = _slice_rows(self.table, start_index, ops.shape(inputs)[-2])
        return ops.broadcast_to(ops.cast(rows, inputs.dtype), ops.shape(inputs))

    def get_config(self) -> dict:
        c = super().get_config()
        c.update(max_length=self.max_length, base=self.base, freqs=self.freqs, layout=self.table_layout,
                 mode=self.mode)
        return c


class LearnedEmbedding(keras.layers.Layer):
    """A learned absolute table [max_length, D] (BERT, GPT-2), trainable, initialised with
    posenc.learned_init (N(0, sigma^2) from seed; GPT-2's sigma 0.02). call(inputs [B, S, D],
    start_index=0) returns rows start_index.. broadcast to inputs' shape, as keras_hub's
    PositionEmbedding does."""

    def __init__(self, max_length: int, *, seed: int = 0, sigma: float = 0.02, **kwargs: Any):
        super().__init__(**kwargs)
        self.max_length = integer(max_length, "max_length")
        self.seed, self.sigma = integer(seed, "seed"), float(sigma)

    def build(self, input_shape: Any) -> None:
        dim = input_shape[-1]
        if dim is None:
            raise InvalidArgumentError("LearnedEmbedding: the last axis of the input must be known", 1)
        table = learned_init(self.max_length, int(dim), seed=self.seed, sigma=self.sigma)
        self.table = self.add_weight(shape=table.shape, initializer=keras.initializers.Constant(table),
                                     trainable=True, name="table", dtype="float32")

    def call(self, inputs: Any, start_index: Any = 0) -> Any:
        rows = _slice_rows(self.table, start_index, ops.shape(inputs)[-2])
        return ops.broadcast_to(ops.cast(rows, inputs.dtype), ops.shape(inputs))

    def get_config(self) -> dict:
        c = super().get_config()
        c.update(max_length=self.max_length, seed=self.seed, sigma=self.sigma)
        return c


class RotaryEmbedding(keras.layers.Layer):
    """RoPE on [B, S, H, D] (sequence_axis=1, the default) or [B, H, S, D] (sequence_axis=2)
    with posenc's cos/sin for positions 0..max_length-1 (any scaling posenc reads: params=,
    config=, or base=/scaling=/factor=/... flags; mode "precise" <= 1 ULP tables, "torch" HF's
    float32 ones). layout "neox"/"half" (HF, default or the config's) or "gptj"/"interleaved".
    call(inputs, start_index=0) rotates positions start_index..start_index+S-1. Scalings whose
    frequencies follow the running length (dynamic NTK, LongRoPE by sequence length) are
    refused by name: a fixed table cannot follow them."""

    def __init__(self, max_length: int, *, params: Optional[RopeParams] = None, config: Any = None,
                 layout: Optional[str] = None, sequence_axis: int = 1, **flags: Any):
        super().__init__(**{k: flags.pop(k) for k in ("name", "dtype", "trainable") if k in flags})
        self.max_length = integer(max_length, "max_length")
        if sequence_axis not in (1, 2):
            raise InvalidArgumentError("sequence_axis must be 1 ([B, S, H, D]) or 2 ([B, H, S, D]), got %r"
                                       % (sequence_axis,), 1)
        self.sequence_axis = sequence_axis
        self._params, self._config, self._flags, self.rope_layout = params, config, dict(flags), layout

    def build(self, input_shape: Any) -> None:
        head_dim = input_shape[-1]
        if head_dim is None or len(input_shape) != 4:
            raise InvalidArgumentError("RotaryEmbedding: inputs must be [B, S, H, D] or [B, H, S, D] with D known, "
                                       "got %s" % (tuple(input_shape),), 1)
        p = resolve_params(self._params, self._config, int(head_dim), what="RotaryEmbedding", **self._flags)
        if p.scaling == "dynamic" or (p.scaling == "longrope" and p.longrope_select == "by_seq_len"):
            raise UnsupportedError("RotaryEmbedding (Keras): scaling %r with frequencies by sequence length cannot "
                                   "be a fixed table; give longrope_select='short'/'long' or use posenc.torch"
                                   % p.scaling, 8)
        layout = {"neox": "half", "half": "half", "gptj": "interleaved",
                  "interleaved": "interleaved"}.get(self.rope_layout or p.layout or "half")
        if layout is None:
            raise InvalidArgumentError("layout must be neox/half or gptj/interleaved, got %r" % (self.rope_layout,), 1)
        self.layout, self.params = layout, p
        self.rotary_dim = p.check()
        cos, sin = rope_cos_sin(p, count=self.max_length, duplicate=layout)  # [T, R], attention factor folded
        self.cos = self.add_weight(shape=cos.shape, initializer=keras.initializers.Constant(cos), trainable=False,
                                   name="cos", dtype="float32")
        self.sin = self.add_weight(shape=sin.shape, initializer=keras.initializers.Constant(sin), trainable=False,
                                   name="sin", dtype="float32")

    def _rotate(self, x: Any) -> Any:
        """[-x2, x1] (half) or [-x1, x0, -x3, x2, ..] (interleaved) over the last axis."""
        if self.layout == "half":
            x1, x2 = ops.split(x, 2, axis=-1)
            return ops.concatenate([ops.negative(x2), x1], axis=-1)
        shape = ops.shape(x)
        pairs = ops.reshape(x, tuple(shape[:-1]) + (shape[-1] // 2, 2))
        even, odd = pairs[..., 0], pairs[..., 1]
        return ops.reshape(ops.stack([ops.negative(odd), even], axis=-1), shape)

    def call(self, inputs: Any, start_index: Any = 0) -> Any:
        r = self.rotary_dim
        seq = ops.shape(inputs)[self.sequence_axis]
        cos = _slice_rows(self.cos, start_index, seq)
        sin = _slice_rows(self.sin, start_index, seq)
        # [S, R] -> broadcast over batch and heads
        cos = ops.expand_dims(cos, 1 if self.sequence_axis == 1 else 0)
        sin = ops.expand_dims(sin, 1 if self.sequence_axis == 1 else 0)
        cos, sin = ops.cast(cos, inputs.dtype), ops.cast(sin, inputs.dtype)
        head = inputs if r == ops.shape(inputs)[-1] else inputs[..., :r]
        out = ops.add(ops.multiply(head, cos), ops.multiply(self._rotate(head), sin))
        return out if r == ops.shape(inputs)[-1] else ops.concatenate([out, inputs[..., r:]], axis=-1)

    def get_config(self) -> dict:
        if self._params is not None or self._config is not None:
            raise UnsupportedError("RotaryEmbedding.get_config: built from params=/config=, which do not serialize; "
                                   "give the RoPE as flags (base=, scaling=, ...) to save the layer", 8)
        c = super().get_config()
        c.update(max_length=self.max_length, layout=self.rope_layout, sequence_axis=self.sequence_axis, **self._flags)
        return c


class ALiBiBias(keras.layers.Layer):
    """ALiBi (Press et al.): call(scores [B, H, Lq, Lk], query_start=0, key_start=0) returns
    scores + m_h (j - i) ("causal"; mask j > i yourself) or scores - m_h |i - j| ("symmetric"),
    i = query_start + row, j = key_start + column, m_h posenc.alibi_slopes (float32, max_bias 8).
    The bias is a float32 product of the slope and the integer distance: posenc.alibi_bias's
    bits (the C rounds the exact product once, as a float32 multiply does for |j - i| < 2^24)."""

    def __init__(self, heads: int, *, max_bias: float = 8.0, mode: str = "precise", form: str = "causal",
                 **kwargs: Any):
        super().__init__(**kwargs)
        if form not in ("causal", "symmetric"):
            raise InvalidArgumentError("form must be 'causal' or 'symmetric', got %r" % (form,), 1)
        self.heads, self.max_bias, self.mode, self.form = integer(heads, "heads"), float(max_bias), mode, form
        self._slopes = alibi_slopes(self.heads, max_bias=self.max_bias, mode=mode, dtype="f32")

    def build(self, input_shape: Any) -> None:
        if len(input_shape) != 4 or (input_shape[1] is not None and input_shape[1] != self.heads):
            raise InvalidArgumentError("ALiBiBias: scores must be [B, %d, Lq, Lk], got %s"
                                       % (self.heads, tuple(input_shape)), 1)
        self.slopes = self.add_weight(shape=(self.heads,), initializer=keras.initializers.Constant(self._slopes),
                                      trainable=False, name="slopes", dtype="float32")

    def call(self, scores: Any, query_start: Any = 0, key_start: Any = 0) -> Any:
        shape = ops.shape(scores)
        i = ops.arange(shape[2], dtype="int32") + query_start
        j = ops.arange(shape[3], dtype="int32") + key_start
        distance = ops.cast(ops.expand_dims(j, 0) - ops.expand_dims(i, 1), "float32")  # [Lq, Lk]
        if self.form == "symmetric":
            distance = ops.negative(ops.abs(distance))
        bias = ops.multiply(ops.reshape(self.slopes, (self.heads, 1, 1)), distance)
        return ops.add(scores, ops.cast(bias, scores.dtype))

    def get_config(self) -> dict:
        c = super().get_config()
        c.update(heads=self.heads, max_bias=self.max_bias, mode=self.mode, form=self.form)
        return c


__all__ = ["SinusoidalEmbedding", "LearnedEmbedding", "RotaryEmbedding", "ALiBiBias"]
