"""A model's positions layer by layer (posenc.h section 8.1, posenc_model).

    m = posenc.load_config("config.json")              # or a .gguf, a dict, an HF config object
    [layer.scheme for layer in m.layers]               # "rope", "nope", "alibi", "learned", "t5"
    m.layers[0].rope                                   # RopeParams of a RoPE layer, else None
    posenc.load_config("odd.json", assume="llama")     # an unknown model_type, read on purpose

An unknown model_type / GGUF architecture raises UnsupportedError naming it, its position keys
and the closest families; `assume` reads it as that family and `.assumed` says so. The fields
of the one-RoPE reading (ModelConfig: family, layout, rope, layer_types, ...) are there too
(`.config`, and as attributes of the result) whenever the model has a RoPE layer.
"""
import ctypes
import os
from ctypes import POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t
from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

from . import _lib
from ._common import raise_status, text
from .rope import ConfigLike, LayerType, ModelConfig, RopeParams, _mrope_sections, config_source

SCHEMES = ("nope", "rope", "alibi", "learned", "t5")  # posenc_layer_scheme values 0..4
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


class _Model(Structure):
    _fields_ = [("config", _lib.ModelConfig), ("assumed", c_int), ("assumed_family", c_char * 32),
                ("rope_count", c_int32), ("ropes", _ModelRope * MAX_ROPES), ("alibi_heads", c_int32),
                ("alibi_max_bias", c_double), ("alibi_slopes", POINTER(c_double)), ("alibi_before_scale", c_int), ("learned_tensor", c_char * 64),
                ("learned_offset", c_int64), ("learned_size", c_int64), ("t5", _lib.T5Params),
                ("layer_count", c_int32), ("layers", POINTER(_ModelLayer)), ("unused_keys", c_char * 512),
                ("position_start", c_int64)]


# ctypes classes -> C type names, for the layout check in python/tests/test_config.py
STRUCTS = {_Options: "posenc_config_options", _ModelRope: "posenc_model_rope", _ModelLayer: "posenc_model_layer",
           _Model: "posenc_model"}

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
    scheme: str                          # "rope", "nope", "alibi", "learned", "t5"
    kind: str                            # "attention", "sliding_attention", "linear_attention", "mamba", ...
    sliding_window: int                  # 0 = whole context
    rope_index: Optional[int] = None     # rope: index into Model.ropes
    rope: Optional[RopeParams] = field(default=None, repr=False)
    rotary_offset: int = 0               # rope: first rotated channel of the head
    alibi_slopes: Optional[Tuple[float, ...]] = field(default=None, repr=False)  # alibi: one per head
    tensor: Optional[str] = None         # learned: the table's tensor
    offset: int = 0                      # learned: row = position + offset (OPT: 2)
    size: int = 0                        # learned: rows of the table
    num_buckets: int = 0                 # t5
    max_distance: int = 0                # t5
    bidirectional: Optional[bool] = None  # t5: encoder True, decoder False


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

    def __getattr__(self, name: str) -> Any:
        """The ModelConfig fields (layout, rope, layer_types, keys_used, ...) for models with RoPE."""
        config = self.__dict__.get("config")
        if config is not None and not name.startswith("_"):
            return getattr(config, name)
        raise AttributeError("%s has no attribute %r%s" % (type(self).__name__, name,
                                                           "" if config is not None else " (the model has no RoPE)"))


def _model_config(c: "_lib.ModelConfig", mode: Optional[str]) -> ModelConfig:
    """posenc_model_config -> ModelConfig, as rope.load_config builds it."""
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
            scheme = SCHEMES[entry.scheme] if 0 <= entry.scheme < len(SCHEMES) else "?"
            extra: dict = {}
            if scheme == "rope":
                extra = dict(rope_index=int(entry.rope), rope=ropes[entry.rope],
                             rotary_offset=int(m.ropes[entry.rope].rotary_offset))
            elif scheme == "alibi":
                extra = dict(alibi_slopes=slopes)
            elif scheme == "learned":
                extra = dict(tensor=text(m.learned_tensor), offset=int(m.learned_offset), size=int(m.learned_size))
            elif scheme == "t5":
                extra = dict(num_buckets=int(m.t5.num_buckets), max_distance=int(m.t5.max_distance),
                             bidirectional=text(entry.kind) == "encoder")
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
                     config=_model_config(c, mode) if m.rope_count > 0 else None)
    finally:  # the model owns its layer list, slopes and factor lists: always release it
        _lib.lib.posenc_model_free(ctypes.byref(m))
