"""Configs: what a model's positions are. RopeParams (every RoPE knob), its frequencies, the
one-RoPE reading of a config (ModelConfig), and a model layer by layer (posenc.h section 8.1,
posenc_model). Rotation (posenc.rope), torch (posenc.torch) and HF (posenc.hf) build on this
module; it imports none of them.

    m = posenc.load_config("config.json")              # or a .gguf, a dict, an HF config object
    [layer.scheme for layer in m.layers]               # "rope", "nope", "alibi", "learned", "t5"
    m.layers[0].rope                                   # RopeParams of a RoPE layer, else None
    posenc.load_config("odd.json", assume="llama")     # an unknown model_type, read on purpose

An unknown model_type / GGUF architecture raises UnsupportedError naming it, its position keys
and the closest families; `assume` reads it as that family and `.assumed` says so. The fields
of the one-RoPE reading (ModelConfig: family, layout, rope, layer_types, ...) are there too
(`.config`, and as attributes of the result) whenever the model has a RoPE layer.
"""
from __future__ import annotations

import ctypes
import dataclasses
import difflib
import json
import os
from ctypes import POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t
from dataclasses import dataclass, field
from typing import Any, Dict, Literal, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._common import call, check_keywords, choose, integer, keywords_checked, raise_status, text
from ._errors import InvalidArgumentError, KeywordError

# ---- RoPE parameters, frequencies and the one-RoPE config reading ------------------------
# (posenc.rope re-exports these: rotation builds on configs, configs never on rotation)

ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any], Any]

# The option strings, typed for IDEs and type checkers (the functions accept exactly these).
Layout = Literal["neox", "half", "gptj", "interleaved"]
TensorLayout = Literal["bshd", "bhsd", "shd", "hsd"]
Mode = Literal["precise", "torch", "torch_compat", "ggml"]
Scaling = Literal["none", "default", "linear", "ntk", "dynamic", "yarn", "longrope", "llama3"]
LongropeSelect = Literal["by_seq_len", "short", "long"]

_C_FIELDS = ("rotary_dim", "partial_rotary_factor", "base", "factor", "original_max_position",
             "max_position", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
             "attention_factor", "low_freq_factor", "high_freq_factor")


@dataclass(frozen=True)
class RopeParams:
    """Every RoPE knob of posenc_rope_params (posenc.h section 4). None = the library's
    default (base 10000, whole head, no scaling, beta 32/1, truncate, llama3 1/4, precise).

    scaling: "none" | "linear" | "ntk" | "dynamic" | "yarn" | "longrope" | "llama3".
    mode: "precise" (<= 1 ULP cos/sin), "torch" (HF's float32 steps, bit for bit) or "ggml"
    (ggml CPU's float32 theta chain, bit for bit; what identify_rope reports for ggml caches).
    layout: the pairing the model's runtime uses ("half" = neox, "interleaved" = gptj);
    it is not a C parameter, but apply_rope_ uses it when no layout is passed (configs set it).
    """

    head_dim: int
    rotary_dim: Optional[int] = None
    partial_rotary_factor: Optional[float] = None
    base: Optional[float] = None
    scaling: Scaling = "none"
    factor: Optional[float] = None
    original_max_position: Optional[int] = None
    max_position: Optional[int] = None
    beta_fast: Optional[float] = None
    beta_slow: Optional[float] = None
    mscale: Optional[float] = None
    mscale_all_dim: Optional[float] = None
    attention_factor: Optional[float] = None
    truncate: Optional[bool] = None
    low_freq_factor: Optional[float] = None
    high_freq_factor: Optional[float] = None
    short_factors: Optional[Tuple[float, ...]] = None
    long_factors: Optional[Tuple[float, ...]] = None
    longrope_select: LongropeSelect = "by_seq_len"
    mode: Mode = "precise"
    layout: Optional[Layout] = None

    def __post_init__(self) -> None:
        for name in ("short_factors", "long_factors"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(float(v) for v in value))

    def replace(self, **changes: Any) -> "RopeParams":
        """A copy with some fields changed (dataclasses.replace); an unknown field raises
        KeywordError naming it."""
        check_flags(changes, allow_head_dim=True)
        return dataclasses.replace(self, **changes)

    # The cached C struct (_c_keep) holds live pointers: never pickled, deep-copied or saved
    # (torch.save of a module holding these params, copy.deepcopy(model), EMA copies).
    def __getstate__(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_c_keep"}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)

    def resolved(self) -> Tuple[Optional[int], Optional[float], str]:
        """(rotary dim R, attention factor A at the trained length, "" or the error) as the
        library resolves them (R: head_dim * partial_rotary_factor unless rotary_dim is
        set; A: YaRN/LongRoPE's formula unless attention_factor is set)."""
        try:
            r = self.check()
            return r, rope_frequencies(self).attention_factor, ""
        except Exception as exc:  # a repr must not raise: show why instead
            return None, None, str(exc)

    def __repr__(self) -> str:
        rotary, attention, problem = self.resolved()
        parts = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "rotary_dim":
                value = rotary if rotary is not None else value
            elif f.name == "attention_factor":
                value = attention if attention is not None else value
            elif value is None:
                continue
            elif f.name in ("short_factors", "long_factors"):
                value = "(%d factors)" % len(value)
                parts.append("%s=%s" % (f.name, value))
                continue
            parts.append("%s=%r" % (f.name, value))
        if problem:
            parts.append("invalid=%r" % problem)
        return "RopeParams(%s)" % ", ".join(parts)

    def to_c(self) -> "_lib.RopeParams":
        """The posenc_rope_params struct (cached; its factor lists stay alive with self)."""
        cached = self.__dict__.get("_c_keep")  # (struct, the arrays its pointers use), set at once
        if cached is not None:
            return cached[0]
        c = _lib.RopeParams()
        _lib.lib.posenc_rope_params_default(ctypes.byref(c), int(self.head_dim))
        for name in _C_FIELDS:
            value = getattr(self, name)
            if value is not None:
                setattr(c, name, value)
        if self.truncate is not None:
            c.truncate = 1 if self.truncate else 0
        c.scaling = choose(_lib.ROPE_SCALING, self.scaling, "scaling")
        c.longrope_select = choose(_lib.LONGROPE_SELECT, self.longrope_select, "longrope_select")
        c.mode = choose(_lib.ROPE_MODE, self.mode, "mode")
        keep = []
        lengths = set()
        for name in ("short_factors", "long_factors"):
            value = getattr(self, name)
            if value is not None:
                arr = np.ascontiguousarray(value, dtype=np.float64)
                keep.append(arr)
                lengths.add(arr.size)
                setattr(c, name, arr.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        if lengths:
            if len(lengths) > 1:
                raise InvalidArgumentError("short_factors and long_factors must have the same length, "
                                           "got %s" % sorted(lengths), 1)
            c.factors_count = lengths.pop()
        # one attribute for both, so threads racing to fill the cache can never pair a struct
        # with another thread's factor arrays (which could then be freed under it)
        object.__setattr__(self, "_c_keep", (c, keep))
        return c

    def check(self) -> int:
        """Validate (InvalidArgumentError names the bad value); return the rotary dim R."""
        rotary = ctypes.c_int32()
        call(_lib.lib.posenc_rope_check, ctypes.byref(self.to_c()), ctypes.byref(rotary))
        return rotary.value

    @property
    def rotary_dim_effective(self) -> int:
        """R, the rotated channels (head_dim * partial_rotary_factor unless rotary_dim is set)."""
        return self.check()

    @classmethod
    def from_config(cls, config: ConfigLike, mode: Optional[str] = None) -> "RopeParams":
        """RoPE parameters of a model config: a path (config.json or .gguf), a dict (a parsed
        config.json), or an object with to_dict() (a transformers PretrainedConfig)."""
        return load_model_config(config, mode=mode).rope

    @classmethod
    def _from_c(cls, c: "_lib.RopeParams", layout: Optional[str]) -> "RopeParams":
        n = int(c.factors_count)
        short = tuple(c.short_factors[i] for i in range(n)) if n and c.short_factors else None
        long_ = tuple(c.long_factors[i] for i in range(n)) if n and c.long_factors else None
        # 0 = "resolve it" in C (rotary_dim from partial_rotary_factor, attention_factor from
        # the scaling's formula): None here, so a repr never shows a placeholder as a value
        return cls(head_dim=c.head_dim, rotary_dim=c.rotary_dim or None,
                   partial_rotary_factor=c.partial_rotary_factor, base=c.base,
                   scaling=_lib.ROPE_SCALING_NAME.get(c.scaling, str(c.scaling)), factor=c.factor,
                   original_max_position=c.original_max_position, max_position=c.max_position,
                   beta_fast=c.beta_fast, beta_slow=c.beta_slow, mscale=c.mscale,
                   mscale_all_dim=c.mscale_all_dim, attention_factor=c.attention_factor or None,
                   truncate=bool(c.truncate), low_freq_factor=c.low_freq_factor,
                   high_freq_factor=c.high_freq_factor, short_factors=short, long_factors=long_,
                   longrope_select={0: "by_seq_len", 1: "short", 2: "long"}[c.longrope_select],
                   mode=_lib.MODE_NAME[c.mode], layout=layout)


@dataclass(frozen=True)
class LayerType:
    """One kind of attention layer and its RoPE (posenc_config_layer_type), e.g. Gemma-3's
    "full_attention" (rope_theta 1e6, the model's scaling) and "sliding_attention"
    (rope_local_base_freq 1e4, unscaled)."""

    name: str                        # "full_attention", "sliding_attention"
    layers: int                      # layers of this type (0 = unknown)
    sliding_window: int              # attention window of these layers, 0 = whole context
    rope: RopeParams = field(repr=False)


@dataclass(frozen=True)
class ModelConfig:
    """What posenc read from a model config (posenc_model_config, field for field)."""

    format: str                      # "hf_json" or "gguf"
    architecture: str                # model_type / general.architecture ("" if absent)
    family: str                      # the family-table entry used ("" = generic reading)
    scaling_name: str                # the scaling type as written ("" if none)
    num_attention_heads: int         # 0 if absent
    hidden_size: int                 # 0 if absent
    num_hidden_layers: int           # 0 if absent
    max_position_embeddings: int     # 0 if absent
    layout: str                      # "half" (neox) or "interleaved" (gptj): the runtime's pairing
    layout_known: bool               # False: architecture not in the built-in list (half assumed)
    attention_head_dim: int          # channels of one q/k head as the runtime holds it (MLA: 192)
    rotary_offset: int               # first rotated channel of that head (MLA: the last ones rotate)
    softmax_head_dim: int            # d of the 1/sqrt(d) softmax scale
    softmax_scale_factor: float      # extra multiplier on 1/sqrt(softmax_head_dim) (DeepSeek), else 1
    mrope_sections: Tuple[int, ...]  # Qwen2-VL M-RoPE pairs per axis, () = none
    mrope_interleaved: bool          # True: the sections interleave (Qwen3-VL; GGUF IMROPE)
    warnings: Tuple[str, ...]        # "no_theta", "no_original", "factor_mismatch", ...
    rope_given: int                  # POSENC_ROPE_GIVEN_* bits of `rope` (for posenc_rope_resolve)
    duplicate_key: str               # warning "duplicate_key": the (first) key given twice
    keys_used: str                   # warning "unknown_family": the keys read, comma-separated
    defaults_used: str               # absent keys filled from the family's defaults ("" = none)
    layer_types: Tuple[LayerType, ...]  # () = one kind of layer; else [0] is the same as `rope`
    rope: RopeParams = field(repr=False)


def config_source(config: ConfigLike) -> Tuple[Optional[bytes], Optional[bytes]]:
    """(path, None) for a file path, else (None, the config as config.json bytes): a dict, or an
    object with to_dict() such as a transformers PretrainedConfig."""
    if isinstance(config, (str, bytes, os.PathLike)):
        return os.fsencode(config), None
    if hasattr(config, "to_dict") and not isinstance(config, Mapping):
        config = config.to_dict()
    if not isinstance(config, Mapping):
        raise InvalidArgumentError("config must be a path, a dict or an object with to_dict(), "
                                   "got %s" % type(config).__name__, 1)
    return None, json.dumps(config, default=str).encode()


def _mrope_sections(raw: Sequence[int]) -> Tuple[int, ...]:
    """Every section up to the last nonzero one (() = none): HF splits by all of them, so a
    zero in the middle gives its axis no pairs and keeps the axes after it."""
    sections = [int(v) for v in raw]
    while sections and sections[-1] == 0:
        sections.pop()
    return tuple(sections)


def load_model_config(config: ConfigLike, mode: Optional[str] = None) -> ModelConfig:
    """Parse a model config (path to config.json / .gguf, dict, or object with to_dict())."""
    c = _lib.ModelConfig()
    err = _lib.Error()
    path, document = config_source(config)
    if path is not None:
        status = _lib.lib.posenc_config_read(path, 0, ctypes.byref(c), ctypes.byref(err))
    else:
        status = _lib.lib.posenc_config_parse_hf_json(document, len(document), ctypes.byref(c), ctypes.byref(err))
    if status != 0:
        _lib.lib.posenc_model_config_free(ctypes.byref(c))  # idempotent; the readers free on failure too
        raise_status(status, err)
    try:
        layout = _lib.LAYOUT_NAME[c.layout]
        rope = RopeParams._from_c(c.rope, layout)
        if mode is not None:
            rope = rope.replace(mode=mode)
        warnings = tuple(name for bit, name in sorted(_lib.CONFIG_WARNINGS.items()) if c.warnings & bit)
        layer_types = []
        for i in range(max(0, min(int(c.layer_type_count), _lib.CONFIG_MAX_LAYER_TYPES))):
            entry = c.layer_types[i]
            entry_rope = RopeParams._from_c(entry.rope, layout)  # copies the factor lists
            if mode is not None:
                entry_rope = entry_rope.replace(mode=mode)
            layer_types.append(LayerType(name=text(entry.name), layers=int(entry.layers),
                                         sliding_window=int(entry.sliding_window), rope=entry_rope))
        return ModelConfig(format="gguf" if c.format == 1 else "hf_json",
                           architecture=text(c.architecture), family=text(c.family),
                           scaling_name=text(c.scaling_name),
                           num_attention_heads=c.num_attention_heads, hidden_size=c.hidden_size,
                           num_hidden_layers=c.num_hidden_layers,
                           max_position_embeddings=c.max_position_embeddings, layout=layout,
                           layout_known=bool(c.layout_known), attention_head_dim=c.attention_head_dim,
                           rotary_offset=c.rotary_offset, softmax_head_dim=c.softmax_head_dim,
                           softmax_scale_factor=c.softmax_scale_factor,
                           mrope_sections=_mrope_sections(c.mrope_sections),
                           mrope_interleaved=bool(c.mrope_interleaved),
                           warnings=warnings, rope_given=int(c.rope_given),
                           duplicate_key=text(c.duplicate_key), keys_used=text(c.keys_used),
                           defaults_used=text(c.defaults_used), layer_types=tuple(layer_types),
                           rope=rope)
    finally:  # the config owns its factor lists (GGUF ones too): always release it
        _lib.lib.posenc_model_config_free(ctypes.byref(c))


_FLAG_NAMES = tuple(f.name for f in dataclasses.fields(RopeParams) if f.name != "head_dim")


# the keywords of the apply functions themselves, for "did you mean" on a misspelt one
_CALL_KEYWORDS = ("positions", "offset", "layout", "tensor_layout", "params", "config", "seq_len", "inverse",
                  "threads", "pool", "dtype", "count", "start", "fold_attention", "duplicate", "sections", "kind")


def check_flags(flags: Mapping[str, Any], allow_head_dim: bool = False) -> None:
    """RoPE keyword arguments (base=, scaling=, ...): an unknown or misspelt one raises
    KeywordError naming it (and the closest known name)."""
    for name in flags:
        if name in _FLAG_NAMES or (allow_head_dim and name == "head_dim"):
            continue
        close = difflib.get_close_matches(name, _FLAG_NAMES + ("head_dim",) + _CALL_KEYWORDS, n=1)
        raise KeywordError("unknown keyword argument %r%s; RoPE keywords are: %s"
                           % (name, " (did you mean %r?)" % close[0] if close else "",
                              ", ".join(("head_dim",) + _FLAG_NAMES)), 1)


def resolve_params(params: Optional[RopeParams] = None, config: Optional[ConfigLike] = None,
                   head_dim: Optional[int] = None, *, what: Optional[str] = None, **flags: Any) -> RopeParams:
    """One RopeParams from exactly one of: params, config (plus flag overrides such as
    mode="torch"), or flags with head_dim (e.g. base=500000, scaling="yarn", factor=4)."""
    check_flags(flags)
    if params is not None and not isinstance(params, RopeParams):
        raise InvalidArgumentError("params must be a posenc.RopeParams, got %s" % type(params).__name__, 1)
    if params is not None and config is not None:
        raise InvalidArgumentError("give params or config, not both", 1)
    if params is None and config is not None:
        params = RopeParams.from_config(config)
    if params is not None:
        return params.replace(**flags) if flags else params
    if head_dim is None:
        raise InvalidArgumentError("head_dim is required when neither params nor config is given", 1)
    if what is not None and "base" not in flags:
        # an apply call rotates data: no silent default: 10000 is the 2017-2023 models' base, Llama 3 uses 500000, Qwen 1e6
        raise InvalidArgumentError("%s: give params=, config= or base=: posenc will not guess the "
                                   "RoPE base (10000 for Llama 2, 500000 for Llama 3, 1000000 for Qwen2/3)" % what, 1)
    return RopeParams(head_dim=integer(head_dim, "head_dim"), **flags)


_INT64_MAX = (1 << 63) - 1


def checked_seq_len(seq_len: int, what: str) -> int:
    """seq_len = max(position) + 1 as derived from ids: refuse one past int64 by name (2^63 - 1
    + 1 would wrap to -2^63 in the C call and be reported as a negative seq_len)."""
    if seq_len > _INT64_MAX:
        raise InvalidArgumentError("%s: position %d is the largest int64, so seq_len = max(position) + 1 does not "
                                   "fit int64; RoPE positions must satisfy |p| < 2^53" % (what, seq_len - 1), 1)
    return seq_len


class RopeFrequencies(NamedTuple):
    inv_freq: np.ndarray        # [K] float64, radians per position
    attention_factor: float     # cos/sin magnitude (YaRN/LongRoPE scaling), 1 otherwise


def rope_frequencies(params: Optional[RopeParams] = None, *, seq_len: int = 0,
                     config: Optional[ConfigLike] = None, head_dim: Optional[int] = None,
                     **flags: Any) -> RopeFrequencies:
    """The K = R/2 inverse frequencies (float64 [K]; in mode "torch" HF's float32 values
    widened) and the attention factor, for a sequence of seq_len tokens (DYNAMIC,
    LONGROPE by_seq_len; 0 = the trained length)."""
    p = resolve_params(params, config, head_dim, **flags)
    pairs = p.check() // 2
    out = np.empty(max(pairs, 1), np.float64)
    att = ctypes.c_double()
    call(_lib.lib.posenc_rope_frequencies, ctypes.byref(p.to_c()), integer(seq_len, "seq_len"), out.ctypes.data,
         out.size, ctypes.byref(att))
    return RopeFrequencies(out[:pairs], att.value)



# ---- a model layer by layer (posenc_model) --------------------------------------------------


SCHEMES = ("nope", "rope", "alibi", "learned", "t5", "sinusoidal", "deberta", "sine_2d")  # posenc_layer_scheme 0..7
SCHEMES_BY_VALUE = {8: "window_relative", 9: "conv_position", 10: "rope_2d"}  # later posenc_layer_scheme values
MAX_STAGES = 8  # POSENC_MODEL_MAX_STAGES
ROPE2D_KINDS = ("pixtral", "axial", "dinov3")  # posenc_rope2d_kind


class Rope2d(NamedTuple):
    """posenc_model.rope2d* (posenc.h section 4c): the 2-D RoPE of a ROPE_2D layer, as `rope explain --json` prints it."""
    kind: str              # "pixtral", "axial", "dinov3"
    head_dim: int          # D, all rotated
    base: float
    merge: int             # patch order: 1 raster, m: m x m merge windows
    window: int            # Qwen2.5-VL: blocks in windows of window x window (0: none)
    patch_size: int        # pixels a patch side
    merge_per_image: bool  # VideoLLaMA3: the merge size comes with each image at run time
    lead: int              # MLCD: leading tokens at learned angles (lead_tensor)
    lead_tensor: str
    resized_table: str     # a learned table also added, resized per image, not described ("" none)
    plain: int             # DINOv3: leading tokens not rotated (CLS + registers)
MAX_ROPES = 4  # POSENC_MODEL_MAX_ROPES


class _Options(Structure):
    _fields_ = [("assume_family", c_char_p)]


class _MropeSections(Structure):
    _fields_ = [("kind", c_int), ("axes", c_int32), ("sizes", c_int32 * 4)]


class _ModelRope(Structure):
    _fields_ = [("name", c_char * 32), ("params", _lib.RopeParams), ("layout", c_int), ("rotary_dim", c_int32),
                ("attention_head_dim", c_int32), ("rotary_offset", c_int32), ("mrope", _MropeSections),
                ("dynamic_alpha", c_double)]


class _ModelLayer(Structure):
    _fields_ = [("scheme", c_int), ("rope", c_int32), ("kind", c_char * 24), ("sliding_window", c_int64)]


class _QueryScale(Structure):
    _fields_ = [("layers", c_int), ("beta", c_double), ("divisor", c_int64), ("shift", c_int64)]


class _DebertaParams(Structure):
    _fields_ = [("position_buckets", c_int32), ("max_relative_positions", c_int32)]


class _WindowStage(Structure):
    _fields_ = [("depth", c_int32), ("heads", c_int32), ("resolution_height", c_int32),
                ("resolution_width", c_int32), ("window_height", c_int32), ("window_width", c_int32),
                ("shift", c_int32), ("pretrained_window", c_int32), ("table_rows", c_int64), ("query_stride", c_int32)]


class _Rope2dParams(Structure):
    _fields_ = [("kind", c_int), ("head_dim", c_int32), ("base", c_double), ("merge", c_int32), ("mode", c_int),
                ("window", c_int32)]


class _Sine2dParams(Structure):
    _fields_ = [("num_pos_feats", c_int32), ("temperature_y", c_double), ("temperature_x", c_double),
                ("normalize", c_int32), ("offset", c_double), ("eps", c_double), ("scale", c_double),
                ("exponent_by_product", c_int32), ("layout", c_int), ("mode", c_int)]


class _Model(Structure):
    _fields_ = [("config", _lib.ModelConfig), ("assumed", c_int), ("assumed_family", c_char * 32),
                ("rope_count", c_int32), ("ropes", _ModelRope * MAX_ROPES), ("alibi_heads", c_int32),
                ("alibi_max_bias", c_double), ("alibi_slopes", POINTER(c_double)), ("alibi_before_scale", c_int), ("learned_tensor", c_char * 64),
                ("learned_offset", c_int64), ("learned_size", c_int64), ("t5", _lib.T5Params),
                ("layer_count", c_int32), ("layers", POINTER(_ModelLayer)), ("unused_keys", c_char * 512),
                ("position_start", c_int64), ("sinusoid", _lib.SinusoidParams), ("sinusoid_tensor", c_char * 64),
                ("sinusoid_size", c_int64), ("decoder_learned_tensor", c_char * 64),
                ("decoder_learned_offset", c_int64), ("decoder_learned_size", c_int64),
                ("query_scale", _QueryScale),
                ("sinusoid_offset", c_int64), ("sinusoid_zero_row", c_int64), ("sinusoid_grows", c_int32),
                ("sinusoid_skips_padding", c_int32),
                ("decoder_sinusoid_tensor", c_char * 64), ("decoder_sinusoid_offset", c_int64),
                ("decoder_sinusoid_size", c_int64),
                ("deberta", _DebertaParams), ("deberta_span", c_int32), ("deberta_c2p", c_int32),
                ("deberta_p2c", c_int32), ("deberta_share_att_key", c_int32), ("deberta_norm_rel_ebd", c_int32),
                ("deberta_absolute", c_int32), ("deberta_tensor", c_char * 64),
                ("t5_bias_every_layer", c_int32), ("t5_tensor", c_char * 96),
                ("patch_image_size", c_int64), ("patch_size", c_int64), ("patch_grid_height", c_int64),
                ("patch_grid_width", c_int64), ("patch_prefix_rows", c_int32), ("patch_prefix_plain", c_int32),
                ("patch_resize", c_int32),
                ("window_stage_count", c_int32), ("window_stages", _WindowStage * MAX_STAGES), ("window_cls", c_int32),
                ("window_continuous", c_int32), ("window_absolute", c_int32), ("window_shared", c_int32),
                ("window_per_layer", c_int32), ("window_abs_offsets", c_int32),
                ("conv_pos_kernel", c_int32), ("conv_pos_groups", c_int32), ("conv_pos_layers", c_int32),
                ("conv_pos_padding", c_int32), ("conv_pos_trim", c_int32), ("conv_pos_stride", c_int32),
                ("conv_pos_norm", c_int32), ("conv_pos_activation", c_char * 32), ("conv_pos_tensor", c_char * 64),
                ("wavlm_num_buckets", c_int32), ("wavlm_max_distance", c_int32), ("wavlm_tensor", c_char * 96),
                ("rope2d", _Rope2dParams), ("rope2d_patch_size", c_int64),
                ("rope2d_merge_per_image", c_int32), ("rope2d_lead", c_int32), ("rope2d_lead_tensor", c_char * 64),
                ("rope2d_table", c_char * 64), ("rope2d_plain", c_int32),
                ("sine2d", _Sine2dParams), ("sine2d_module", c_char * 64), ("sine2d_levels", c_int32),
                ("sine2d_level_tensor", c_char * 64)]


# ctypes classes -> C type names, for the layout check in python/tests/test_config.py
STRUCTS = {_Options: "posenc_config_options", _ModelRope: "posenc_model_rope", _ModelLayer: "posenc_model_layer",
           _Model: "posenc_model", _QueryScale: "posenc_query_scale", _DebertaParams: "posenc_deberta_params",
           _WindowStage: "posenc_window_stage", _Rope2dParams: "posenc_rope2d_params",
           _Sine2dParams: "posenc_sine2d_params"}

_E = POINTER(_lib.Error)
_lib.lib.posenc_model_read.restype = c_int
_lib.lib.posenc_model_read.argtypes = [c_char_p, c_size_t, POINTER(_Options), POINTER(_Model), _E]
_lib.lib.posenc_model_parse_hf_json.restype = c_int
_lib.lib.posenc_model_parse_hf_json.argtypes = [c_char_p, c_size_t, POINTER(_Options), POINTER(_Model), _E]
_lib.lib.posenc_model_free.restype = None
_lib.lib.posenc_model_free.argtypes = [POINTER(_Model)]


@dataclass(frozen=True)
class Layer:
    """One layer's position scheme (posenc_model_layer plus what its scheme carries)."""

    index: int
    scheme: str                          # "rope", "nope", "alibi", "learned", "t5", "sinusoidal", "deberta",
                                         # "conv_position"
    scheme: str                          # "rope", "nope", "alibi", "learned", "t5", "sinusoidal", "deberta", "sine_2d"
    kind: str                            # "attention", "sliding_attention", "linear_attention", "mamba", ...
    sliding_window: int                  # 0 = whole context
    rope_index: Optional[int] = None     # rope: index into Model.ropes
    rope: Optional[RopeParams] = field(default=None, repr=False)
    rotary_offset: int = 0               # rope: first rotated channel of the head
    alibi_slopes: Optional[Tuple[float, ...]] = field(default=None, repr=False)  # alibi: one per head
    tensor: Optional[str] = None         # learned / sinusoidal: the table's tensor; t5: this layer's bias table
    offset: int = 0                      # learned / sinusoidal: row = position + offset (OPT: 2)
    size: int = 0                        # learned / sinusoidal: rows of the table
    dim: int = 0                         # sinusoidal: channels (posenc_sinusoid_params)
    base: float = 0.0                    # sinusoidal: frequency base
    freqs: Optional[str] = None          # sinusoidal: "t2t" (Whisper) or "vaswani"
    layout: Optional[str] = None         # sinusoidal: "half" ([sin | cos], Whisper) or "interleaved"
    num_buckets: int = 0                 # t5
    max_distance: int = 0                # t5
    bidirectional: Optional[bool] = None  # t5: encoder True, decoder False
    zero_row: int = -1                   # sinusoidal: the row the runtime zeroes (fairseq's padding_idx), -1 none
    grows: bool = False                  # sinusoidal: the runtime rebuilds a longer table past `size` rows
    skips_padding: bool = False          # sinusoidal: positions count non-padding tokens; padding reads zero_row
    position_buckets: int = 0            # deberta: log buckets (0 = none)
    max_relative_positions: int = 0      # deberta: resolved (the config's < 1 = max_position_embeddings)
    span: int = 0                        # deberta: the relative table has 2 x span rows
    c2p: bool = False                    # deberta: pos_att_type terms
    p2c: bool = False
    absolute: bool = False               # deberta: the learned absolute table (tensor, size) is added too
    patch_grid: Optional[Tuple[int, int]] = None  # learned over an image: (rows, columns) of patches, else None
    patch_prefix_rows: int = 0           # learned over an image: leading tokens reading rows 0.. (CLS)
    patch_prefix_plain: int = 0          # learned over an image: then tokens with no row (registers)
    window: Optional[Tuple[int, int]] = None  # window_relative: (height, width) of the window in patches
    window_stage: int = -1               # window_relative: the stage (posenc_model.window_stages) of this layer
    heads: int = 0                       # window_relative: the bias table's columns
    table_rows: int = 0                  # window_relative: learned bias rows per head
    shift: int = 0                       # window_relative: this layer's cyclic window shift (0: none)
    window_cls: bool = False             # window_relative: BEiT's 3 CLS rows
    continuous: bool = False             # window_relative: SwinV2's MLP over log-spaced coordinates
    query_stride: int = 0                # window_relative: LeViT's subsample attention (queries every Nth patch)
    conv_kernel: int = 0                 # conv_position (posenc.h conv_pos_*): kernel, groups, stacked conv layers,
    conv_groups: int = 0                 # zero padding a side, frames dropped at the end, stride (SEW's squeeze),
    conv_layers: int = 0                 # norm ("weight", "batch", "layer"), activation; tensor: the module prefix
    conv_padding: int = 0
    conv_trim: int = 0
    conv_stride: int = 0
    conv_norm: Optional[str] = None
    conv_activation: Optional[str] = None
    wavlm_buckets: int = 0               # conv_position, WavLM: the gated bias's buckets (posenc_wavlm_bucket), 0 none
    wavlm_max_distance: int = 0
    wavlm_tensor: Optional[str] = None   # WavLM: layer 0's rel_attn_embed (every layer gates the bias it computes)
    rope_2d: Optional["Rope2d"] = None   # rope_2d: posenc_model.rope2d* as `rope explain --json` prints them
    sine2d: Optional[dict] = None        # sine_2d: posenc_sine2d_params as a dict, plus module, levels, level_tensor


@dataclass(frozen=True)
class QueryScale:
    """posenc_query_scale: q x (1 + beta * ln(1 + floor((pos + shift) / divisor))) on `layers`."""

    layers: str                          # "all" (every attention layer) or "nope" (the NoPE attention layers only)
    beta: float
    divisor: int
    shift: int


@dataclass(frozen=True)
class Model:
    """What posenc read from a model, layer by layer (posenc_model)."""

    format: str                          # "hf_json" or "gguf"
    architecture: str                    # model_type / general.architecture as written
    family: str                          # the family-table entry used ("" = generic HF rope keys)
    assumed: bool                        # read as assumed_family on purpose (or a nameless config)
    assumed_family: Optional[str]
    num_hidden_layers: int
    num_attention_heads: int
    hidden_size: int
    max_position_embeddings: int
    ropes: Tuple[RopeParams, ...]        # the RoPE variants (layers point into them)
    layers: Tuple[Layer, ...]            # one per layer, in order
    alibi_max_bias: Optional[float]
    alibi_before_scale: bool             # Falcon: bias added before 1/sqrt(head_dim) (effective slope / sqrt(d))
    unused_keys: Tuple[str, ...]         # position keys posenc did not use
    position_start: int                  # the first token's position id (PaliGemma: 1)
    warnings: Tuple[str, ...]            # the ModelConfig warning names
    config: Optional[ModelConfig] = field(default=None, repr=False)  # the one-RoPE view (None: no RoPE)
    query_scale: Optional[QueryScale] = None  # the position-dependent query scale (None: none)

    def __getattr__(self, name: str) -> Any:
        """The ModelConfig fields (layout, rope, layer_types, keys_used, ...) for models with RoPE."""
        config = self.__dict__.get("config")
        if config is not None and not name.startswith("_"):
            return getattr(config, name)
        raise AttributeError("%s has no attribute %r%s" % (type(self).__name__, name,
                                                           "" if config is not None else " (the model has no RoPE)"))


def _model_config(c: "_lib.ModelConfig", mode: Optional[str]) -> ModelConfig:
    """posenc_model_config -> ModelConfig, as load_model_config builds it."""
    layout = _lib.LAYOUT_NAME[c.layout]
    rope = RopeParams._from_c(c.rope, layout)
    if mode is not None:
        rope = rope.replace(mode=mode)
    layer_types = []
    for i in range(max(0, min(int(c.layer_type_count), _lib.CONFIG_MAX_LAYER_TYPES))):
        entry = c.layer_types[i]
        entry_rope = RopeParams._from_c(entry.rope, layout)
        if mode is not None:
            entry_rope = entry_rope.replace(mode=mode)
        layer_types.append(LayerType(name=text(entry.name), layers=int(entry.layers),
                                     sliding_window=int(entry.sliding_window), rope=entry_rope))
    return ModelConfig(format="gguf" if c.format == 1 else "hf_json", architecture=text(c.architecture),
                       family=text(c.family), scaling_name=text(c.scaling_name),
                       num_attention_heads=c.num_attention_heads, hidden_size=c.hidden_size,
                       num_hidden_layers=c.num_hidden_layers, max_position_embeddings=c.max_position_embeddings,
                       layout=layout, layout_known=bool(c.layout_known), attention_head_dim=c.attention_head_dim,
                       rotary_offset=c.rotary_offset, softmax_head_dim=c.softmax_head_dim,
                       softmax_scale_factor=c.softmax_scale_factor,
                       mrope_sections=_mrope_sections(c.mrope_sections),
                       mrope_interleaved=bool(c.mrope_interleaved),
                       warnings=_warnings(c), rope_given=int(c.rope_given), duplicate_key=text(c.duplicate_key),
                       keys_used=text(c.keys_used), defaults_used=text(c.defaults_used),
                       layer_types=tuple(layer_types), rope=rope)


def _warnings(c: "_lib.ModelConfig") -> Tuple[str, ...]:
    names = dict(_lib.CONFIG_WARNINGS)
    names.setdefault(1 << 8, "llama3_flat")
    names.setdefault(1 << 9, "unused_keys")
    return tuple(name for bit, name in sorted(names.items()) if c.warnings & bit)


def load_config(config: ConfigLike, mode: Optional[str] = None, assume: Optional[str] = None) -> Model:
    """Read a model: a path to config.json / .gguf, a dict, or an object with to_dict().
    assume: read an unknown model_type / GGUF architecture as this family, on purpose.
    mode: the RoPE mode of the returned RopeParams ("torch" for HF's float32 steps)."""
    m = _Model()
    err = _lib.Error()
    options = _Options(os.fsencode(assume) if assume is not None else None)
    path, document = config_source(config)
    if path is not None:
        status = _lib.lib.posenc_model_read(path, 0, ctypes.byref(options), ctypes.byref(m), ctypes.byref(err))
    else:
        status = _lib.lib.posenc_model_parse_hf_json(document, len(document), ctypes.byref(options),
                                                     ctypes.byref(m), ctypes.byref(err))
    if status != 0:
        _lib.lib.posenc_model_free(ctypes.byref(m))
        raise_status(status, err)
    try:
        c = m.config
        ropes = []
        for i in range(max(0, min(int(m.rope_count), MAX_ROPES))):
            r = RopeParams._from_c(m.ropes[i].params, _lib.LAYOUT_NAME[m.ropes[i].layout])
            ropes.append(r.replace(mode=mode) if mode is not None else r)
        slopes = tuple(m.alibi_slopes[h] for h in range(m.alibi_heads)) if m.alibi_heads > 0 else None
        layers = []
        for i in range(max(0, int(m.layer_count))):
            entry = m.layers[i]
            scheme = (SCHEMES[entry.scheme] if 0 <= entry.scheme < len(SCHEMES)
                      else SCHEMES_BY_VALUE.get(entry.scheme, "?"))
            extra: dict = {}
            if scheme == "rope":
                extra = dict(rope_index=int(entry.rope), rope=ropes[entry.rope],
                             rotary_offset=int(m.ropes[entry.rope].rotary_offset))
            elif scheme == "alibi":
                extra = dict(alibi_slopes=slopes)
            elif scheme == "rope_2d":  # posenc.h section 4c: the rotation over each image's own patch grid
                r2 = m.rope2d
                extra = dict(rope_2d=Rope2d(
                    kind=ROPE2D_KINDS[r2.kind] if 0 <= r2.kind < len(ROPE2D_KINDS) else "?", head_dim=int(r2.head_dim),
                    base=float(r2.base), merge=int(r2.merge), window=int(r2.window),
                    patch_size=int(m.rope2d_patch_size), merge_per_image=bool(m.rope2d_merge_per_image),
                    lead=int(m.rope2d_lead), lead_tensor=text(m.rope2d_lead_tensor),
                    resized_table=text(m.rope2d_table), plain=int(m.rope2d_plain)))
            elif scheme == "learned":
                if m.decoder_learned_size > 0 and text(entry.kind) == "decoder":  # BART: the decoder's own table
                    extra = dict(tensor=text(m.decoder_learned_tensor), offset=int(m.decoder_learned_offset),
                                 size=int(m.decoder_learned_size))
                else:
                    extra = dict(tensor=text(m.learned_tensor), offset=int(m.learned_offset),
                                 size=int(m.learned_size))
                    if m.patch_grid_height > 0:  # a ViT-style image table (posenc.h: patch_*)
                        extra.update(patch_grid=(int(m.patch_grid_height), int(m.patch_grid_width)),
                                     patch_prefix_rows=int(m.patch_prefix_rows),
                                     patch_prefix_plain=int(m.patch_prefix_plain))
            elif scheme == "sinusoidal":  # posenc_sinusoid_table with these, rows = position + offset
                own = m.decoder_sinusoid_size > 0 and text(entry.kind) == "decoder"  # Marian: the decoder's table
                extra = dict(tensor=text(m.decoder_sinusoid_tensor if own else m.sinusoid_tensor),
                             size=int(m.decoder_sinusoid_size if own else m.sinusoid_size),
                             offset=int(m.decoder_sinusoid_offset if own else m.sinusoid_offset),
                             dim=int(m.sinusoid.dim),
                             base=float(m.sinusoid.base), freqs="t2t" if m.sinusoid.freqs == 1 else "vaswani",
                             layout=_lib.LAYOUT_NAME[m.sinusoid.layout], zero_row=int(m.sinusoid_zero_row),
                             grows=bool(m.sinusoid_grows), skips_padding=bool(m.sinusoid_skips_padding))
            elif scheme == "t5":  # tensor: this layer's bias table (block 0's of its stack unless every layer owns one)
                stack = text(entry.kind)
                block = i - next(k for k in range(i + 1) if text(m.layers[k].kind) == stack)
                tensor = text(m.t5_tensor).replace("{stack}", stack).replace(
                    "{block}", str(block if m.t5_bias_every_layer else 0))
                extra = dict(num_buckets=int(m.t5.num_buckets), max_distance=int(m.t5.max_distance),
                             bidirectional=stack == "encoder", tensor=tensor or None)
            elif scheme == "deberta":  # section 5.3b; the absolute table where position_biased_input
                extra = dict(position_buckets=int(m.deberta.position_buckets),
                             max_relative_positions=int(m.deberta.max_relative_positions), span=int(m.deberta_span),
                             c2p=bool(m.deberta_c2p), p2c=bool(m.deberta_p2c), absolute=bool(m.deberta_absolute))
                if m.deberta_absolute:
                    extra.update(tensor=text(m.learned_tensor), offset=int(m.learned_offset), size=int(m.learned_size))
            elif scheme == "window_relative":  # section 5.3c; the stage holds the window, heads and table
                first, stage = 0, -1
                for k in range(min(int(m.window_stage_count), MAX_STAGES)):
                    first += int(m.window_stages[k].depth)
                    if i < first:
                        stage = k
                        break
                st = m.window_stages[max(stage, 0)]
                extra = dict(window=(int(st.window_height), int(st.window_width)), window_stage=stage,
                             heads=int(st.heads), table_rows=int(st.table_rows),
                             shift=int(st.shift) if text(entry.kind) == "shifted_window" else 0,
                             window_cls=bool(m.window_cls), continuous=bool(m.window_continuous),
                             query_stride=int(st.query_stride),
                             absolute=bool(m.window_absolute))
                if m.window_absolute:
                    extra.update(tensor=text(m.learned_tensor), offset=int(m.learned_offset), size=int(m.learned_size),
                                 patch_grid=(int(m.patch_grid_height), int(m.patch_grid_width)),
                                 patch_prefix_rows=int(m.patch_prefix_rows))
            elif scheme == "conv_position":  # added to the encoder's input, the same for every layer
                extra = dict(conv_kernel=int(m.conv_pos_kernel), conv_groups=int(m.conv_pos_groups),
                             conv_layers=int(m.conv_pos_layers), conv_padding=int(m.conv_pos_padding),
                             conv_trim=int(m.conv_pos_trim), conv_stride=int(m.conv_pos_stride),
                             conv_norm=("weight", "batch", "layer")[m.conv_pos_norm] if 0 <= m.conv_pos_norm < 3
                             else "?", conv_activation=text(m.conv_pos_activation), tensor=text(m.conv_pos_tensor))
                if m.wavlm_num_buckets > 0:
                    extra.update(wavlm_buckets=int(m.wavlm_num_buckets), wavlm_max_distance=int(m.wavlm_max_distance),
                                 wavlm_tensor=text(m.wavlm_tensor))
            elif scheme == "sine_2d":  # section 6f: posenc_sine2d_table_f32 with these, for an H x W feature map
                q = m.sine2d
                extra = dict(sine2d=dict(num_pos_feats=int(q.num_pos_feats), temperature_y=float(q.temperature_y),
                                         temperature_x=float(q.temperature_x), normalize=int(q.normalize),
                                         offset=float(q.offset), eps=float(q.eps), scale=float(q.scale),
                                         exponent_by_product=int(q.exponent_by_product),
                                         layout="rtdetr" if q.layout == 1 else "detr",
                                         mode="torch_compat" if q.mode == 1 else "precise",
                                         module=text(m.sine2d_module), levels=int(m.sine2d_levels),
                                         level_tensor=text(m.sine2d_level_tensor)))
            layers.append(Layer(index=i, scheme=scheme, kind=text(entry.kind),
                                sliding_window=int(entry.sliding_window), **extra))
        unused = tuple(k for k in text(m.unused_keys).split(", ") if k)
        return Model(format="gguf" if c.format == 1 else "hf_json", architecture=text(c.architecture),
                     family=text(c.family), assumed=bool(m.assumed),
                     assumed_family=text(m.assumed_family) if m.assumed else None,
                     num_hidden_layers=int(c.num_hidden_layers), num_attention_heads=int(c.num_attention_heads),
                     hidden_size=int(c.hidden_size), max_position_embeddings=int(c.max_position_embeddings),
                     ropes=tuple(ropes), layers=tuple(layers),
                     alibi_max_bias=float(m.alibi_max_bias) if m.alibi_heads > 0 else None,
                     alibi_before_scale=bool(m.alibi_before_scale),
                     unused_keys=unused, position_start=int(m.position_start), warnings=_warnings(c),
                     config=_model_config(c, mode) if m.rope_count > 0 else None,
                     query_scale=QueryScale(layers={1: "all", 2: "nope"}.get(m.query_scale.layers, "?"),
                                            beta=float(m.query_scale.beta), divisor=int(m.query_scale.divisor),
                                            shift=int(m.query_scale.shift)) if m.query_scale.layers else None)
    finally:  # the model owns its layer list, slopes and factor lists: always release it
        _lib.lib.posenc_model_free(ctypes.byref(m))


check_keywords(globals(), ["load_model_config", "resolve_params", "rope_frequencies"])
RopeParams.__init__ = keywords_checked(RopeParams.__init__)  # type: ignore[method-assign]
RopeParams.from_config = classmethod(keywords_checked(RopeParams.from_config.__func__))  # type: ignore
