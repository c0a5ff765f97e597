"""Which RoPE is this? posenc_rope_identify over a cos/sin cache (or a rotated q with its
input, posenc_rope_rotation_cache), returned as a dataclass with the fitted fields and the
same words `posenc rope identify` prints. Against a model config, the library compares
(posenc_rope_identity_compare: each departure a kind with its numbers, the same call the
tool makes) and _departure_words words each one as the tool does (cli/identify_words.c;
python/tests/test_identify_same.py holds the two to each other)."""
from __future__ import annotations

import ctypes
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import _lib
from ._common import call, check_keywords, choose, doubles, to_array
from ._errors import InvalidArgumentError
from .rope import RopeParams, config_source

_GRID_NAME = {0: "f32", 2: "f16", 3: "bf16"}
_LAYOUT_WORDS = {"hf": "HF [T, R], each pair's value in both halves",
                 "vllm": "vLLM cos_sin_cache [T, R] = cat(cos, sin)",
                 "ggml": "ggml per-pair (cos, sin) interleaved", "plain": "plain [T, R/2], one value per pair"}
_ARITH_WORDS = {"exact": "exact (correctly rounded) arithmetic", "hf-f32": "HF transformers' float32 arithmetic",
                "ggml-f32": "ggml's float32 arithmetic (theta *= theta_scale per pair)"}


@dataclass(frozen=True)
class Rotation:
    """Where a rotated q's rotation sits (posenc_rope_rotation): pairing, head, rotated run."""
    layout: str               # "half" (j, j + R/2) or "interleaved" (2j, 2j + 1)
    head_dim: int
    rotary_offset: int        # first rotated channel
    rotary_dim: int           # R; the other head_dim - R channels pass through unchanged
    heads: int
    max_norm_misfit: float    # spread of |y| / |x| (a rotation: ~1e-7 in float32)
    max_head_misfit: float    # least-squares residual over heads, relative to |y|


@dataclass(frozen=True)
class RopeIdentity:
    """What posenc_rope_identify fitted. residual: per arithmetic ("exact", "hf-f32",
    "ggml-f32") (max_ulp, differ) in ULPs of the grid at [0.5, 1), max_ulp -1 = the
    arithmetic cannot express the scaling. params: the best candidate as a RopeParams
    (mode = the best arithmetic). words: the sentences `posenc rope identify` prints.
    config_*: filled when a config was given (departures are the tool's sentences)."""
    layout: str
    has_cos: bool
    has_sin: bool
    rotary_dim: int
    rows: int
    offset: int
    magnitude: float
    base: float
    scaling: str
    factor: float
    original_max_position: int
    attention_factor: Optional[float]   # None: the scheme's own
    params: RopeParams = field(repr=False)
    inv_freq: np.ndarray = field(repr=False)
    pair_factor: np.ndarray = field(repr=False)
    profile_residual: float
    ramp_pairs: Optional[Tuple[int, int]]
    yarn_low: float
    yarn_high: float
    yarn_context_range: Tuple[float, float]
    llama3_wavelength_edges: Tuple[float, float]
    ntk_base: float
    ntk_factor: float
    grid: str
    arithmetic: str
    residual: Dict[str, Tuple[int, int]]
    values: int
    ambiguous: Tuple[str, ...]
    switch_position: int                 # LongRoPE short -> long switch (0: none)
    long_offset: int                     # position of the first long row (0: vLLM's long_short_cache)
    long_pair_factor: Optional[np.ndarray] = field(repr=False)
    long_magnitude: float
    rotation: Optional[Rotation]
    words: Tuple[str, ...] = field(repr=False)
    config_matches: Optional[bool] = None
    config_arithmetic: Optional[str] = None
    config_residual: Optional[Dict[str, Tuple[int, int]]] = None
    departures: Tuple[str, ...] = ()
    departure_kinds: Tuple[str, ...] = ()   # posenc_rope_departure_kind_name of each departure

    def __str__(self) -> str:
        return "\n".join(self.words + tuple("against the config: " + d for d in self.departures))


def _words(c: "_lib.RopeIdentity", rotation: Optional[Rotation]) -> Tuple[str, ...]:
    """The sentences of cli/cmd_rope_identify.c's print_text (same numbers, same order)."""
    p = c.params
    layout = _lib.CACHE_LAYOUT_NAME.get(c.layout, "?")
    out = []
    if rotation is not None:
        out.append("rotated channels %d..%d (rotary dim %d, %s pairs)%s" % (
            rotation.rotary_offset, rotation.rotary_offset + rotation.rotary_dim - 1, rotation.rotary_dim,
            rotation.layout, "; %d channels pass through unchanged" % (rotation.head_dim - rotation.rotary_dim)
            if rotation.rotary_dim < rotation.head_dim else ""))
    out.append("layout: " + _LAYOUT_WORDS.get(layout, layout))
    out.append("holds: %s; rotary dim %d (%d pairs); positions %d..%d" % (
        "cos and sin" if c.has_cos and c.has_sin else "sin" if c.has_sin else "cos", c.rotary_dim,
        c.rotary_dim // 2, c.offset, c.offset + c.rows - 1))
    base = "base: %.10g" % p.base
    if c.ntk_factor > 0:
        base += " = %g * %g^(R/(R-2)): an NTK base change by factor %g of base %g" % (
            c.ntk_base, c.ntk_factor, c.ntk_factor, c.ntk_base)
    out.append(base)
    scaling = _lib.ROPE_SCALING_NAME.get(p.scaling, "?")
    s = "scaling: " + scaling
    if scaling == "linear":
        s += ", factor %g (every pair's frequency / %g)" % (p.factor, p.factor)
    elif scaling == "yarn":
        s += (", factor %g; ramp pairs %d..%d (low %g, high %g); original context %d with beta_fast 32 / "
              "beta_slow 1 (L0 from %.0f to %.0f fits)" % (p.factor, c.ramp_first, c.ramp_last, c.yarn_low,
                                                            c.yarn_high, p.original_max_position,
                                                            c.yarn_context_lo, c.yarn_context_hi))
    elif scaling == "llama3":
        s += (", factor %g; pairs %d..%d blend; kept below wavelength %.1f, divided above %.1f: original "
              "context %d with low/high freq factors 1/4" % (p.factor, c.ramp_first, c.ramp_last,
                                                             c.llama3_wave_lo, c.llama3_wave_hi,
                                                             p.original_max_position))
    elif scaling == "longrope":
        s += " (per-pair factors)"
        if c.switch_position > 0:
            s += ("; short factors before position %d, long factors from it on (one cache holding both, "
                  "as vLLM's Phi-3 cache)" % c.switch_position)
    out.append(s)
    out.append("magnitude: %.6g%s" % (c.magnitude, " (stated explicitly: not the scheme's own)"
                                      if p.attention_factor > 0 else " (the scheme's own)"))
    for a in range(_lib.ROPE_ARITHS):
        name = _lib.ARITH_NAME[a]
        best = "  <- best" if a == c.arith else ""
        if c.max_ulp[a] < 0:
            out.append("%s cannot express this scaling" % name)
        elif not c.differ[a]:
            out.append("%s bit for bit (%d values)%s" % (name, c.values, best))
        else:
            out.append("%s %d of %d values differ, at most %d ULP%s" % (name, c.differ[a], c.values,
                                                                         c.max_ulp[a], best))
    arith = _lib.ARITH_NAME.get(c.arith, "?")
    out.append("arithmetic: " + _ARITH_WORDS.get(arith, arith)
               + (" (closest; none reproduces every value)" if c.differ[c.arith] else ""))
    amb = c.ambiguous
    if amb & 1:
        out.append("cannot tell apart: NTK / dynamic NTK with factor s from plain RoPE with base %g = "
                   "base * s^(R/(R-2))" % p.base)
    if amb & 2:
        out.append("cannot tell apart: YaRN's original context from beta_fast/beta_slow (only L0/beta shows)")
    if amb & 4:
        out.append("cannot tell apart: Llama 3's original context from low/high_freq_factor")
    if amb & 8:
        out.append("cannot tell apart: the arithmetics that are bit for bit above")
    if amb & 64:
        out.append("cannot tell apart: the base (one pair turns at 1 radian per position whatever it is)")
    if amb & 16:
        out.append("cannot tell apart: cos from sin by the values alone (decided by the offset that fits)")
    return tuple(out)


def _identity(c: "_lib.RopeIdentity", rotation: Optional[Rotation]) -> RopeIdentity:
    K = c.rotary_dim // 2
    p = c.params
    params = RopeParams._from_c(p, None)
    scaling = _lib.ROPE_SCALING_NAME.get(p.scaling, "?")
    return RopeIdentity(
        layout=_lib.CACHE_LAYOUT_NAME.get(c.layout, "?"), has_cos=bool(c.has_cos), has_sin=bool(c.has_sin),
        rotary_dim=c.rotary_dim, rows=c.rows, offset=c.offset, magnitude=c.magnitude, base=p.base, scaling=scaling,
        factor=p.factor, original_max_position=p.original_max_position,
        attention_factor=p.attention_factor if p.attention_factor > 0 else None, params=params,
        inv_freq=doubles(c.inv_freq, K), pair_factor=doubles(c.pair_factor, K),
        profile_residual=c.profile_residual,
        ramp_pairs=(c.ramp_first, c.ramp_last) if c.ramp_first >= 0 else None, yarn_low=c.yarn_low,
        yarn_high=c.yarn_high, yarn_context_range=(c.yarn_context_lo, c.yarn_context_hi),
        llama3_wavelength_edges=(c.llama3_wave_lo, c.llama3_wave_hi), ntk_base=c.ntk_base,
        ntk_factor=c.ntk_factor, grid=_GRID_NAME.get(c.grid, "?"), arithmetic=_lib.ARITH_NAME.get(c.arith, "?"),
        residual={_lib.ARITH_NAME[a]: (int(c.max_ulp[a]), int(c.differ[a])) for a in range(_lib.ROPE_ARITHS)},
        values=c.values, ambiguous=tuple(n for b, n in _lib.IDENTIFY_AMBIGUOUS.items() if c.ambiguous & b),
        switch_position=c.switch_position, long_offset=c.long_offset,
        long_pair_factor=doubles(c.long_pair_factor, K) if c.long_pair_factor else None,
        long_magnitude=c.long_magnitude, rotation=rotation, words=_words(c, rotation))


_CONFIG_ARITH_WORDS = {0: "exact arithmetic", 1: "HF's float32 arithmetic", 2: "ggml's float32 arithmetic"}
_LIST_WORDS = (
    "holds the config's long factors at every position: vLLM's choice when max_model_len exceeds the original "
    "context (its long_short_cos_sin_cache keeps both lists; every position then reads the long half); HF takes the "
    "long factors only for a sequence longer than the original context, so for a sequence this short HF's table "
    "holds the short ones",
    "holds the config's long factors at every position: llama.cpp's choice when its context n_ctx exceeds the "
    "original context (it picks one list per context); HF takes the long factors only for a sequence longer than "
    "the original context, so for a sequence this short HF's table holds the short ones",
    "holds the config's short factors for positions past the original context: HF and llama.cpp would take the long "
    "ones there")
_DEEPSEEK_WORDS = (
    "YaRN's default 0.1 ln(factor) + 1: the config's mscale/mscale_all_dim were ignored",
    "m(factor, mscale) alone: the division by m(factor, mscale_all_dim) was dropped",
    "m(factor, mscale_all_dim): the softmax's share was put on cos/sin", "1: DeepSeek's mscale ratio was dropped")


def _scheme_text(p: "_lib.RopeParams") -> str:
    """cli/identify_words.c's scheme_text."""
    scaling = _lib.ROPE_SCALING_NAME.get(p.scaling, "?")
    if scaling == "linear":
        return "linear interpolation (factor %g)" % p.factor
    if scaling == "yarn":
        return "YaRN (factor %g, original context %d)" % (p.factor, p.original_max_position)
    if scaling == "llama3":
        return "llama3 bands (factor %g, original context %d, low/high %g/%g)" % (
            p.factor, p.original_max_position, p.low_freq_factor, p.high_freq_factor)
    if scaling == "none":
        return "no scaling"
    return "%s (factor %g)" % (scaling, p.factor)


def _departure_words(d: "_lib.RopeDeparture", c: "_lib.RopeIdentity", cmp: "_lib.RopeComparison") -> str:
    """One departure in the tool's words (cli/identify_words.c's cli_word_departure, sentence for sentence)."""
    cfg = cmp.config
    kind = _lib.DEPARTURE_KIND.get(d.kind, "?")
    if kind == "rotary_dim":
        return "rotary dim %d where the config gives %d (head_dim %d): %s" % (
            int(d.got), int(d.want), d.config_position,
            "a partial rotary the config does not state" if d.got < d.want else "the cache rotates more channels")
    if kind == "dynamic_length":
        that = ("the cache is that table bit for bit in HF's float32 arithmetic at that length" if d.differ == 0
                else "that table in HF's float32 arithmetic: %d values differ by up to %d ULP" % (d.differ, d.max_ulp))
        return ("holds the config's dynamic NTK at sequence length %d (base %.10g at every position, from position 0; "
                "%s): one table built for that length%s; HF recomputes the base per sequence and keeps base %g up to "
                "%d tokens (first visible at pair 1, position 1)" % (
                    d.position, d.got, that,
                    ", as vLLM builds its dynamic-NTK cache once, at max_position x factor" if d.reading else "",
                    d.want, d.config_position))
    if kind == "offset":
        return ("positions start at %d: row 0 holds position %d, the model's first token is position 0 (shows at "
                "pair 0, row 0)" % (d.position, d.position))
    if kind == "magnitude":
        out = "magnitude %.6g where the config's %s gives %.6g" % (
            d.got, _lib.ROPE_SCALING_NAME.get(cfg.scaling, "?"), d.want)
        ms, ma, s = cfg.mscale, cfg.mscale_all_dim, cfg.factor
        if d.reading == 0:
            out += ": the attention factor was dropped"
        elif d.reading == 1:
            out += ": an attention factor the config does not give was applied"
        elif d.reading == 2:
            out += ": a different attention factor was applied"
        elif d.reading == 7:
            out += (": DeepSeek's mscale: the config's mscale %g / mscale_all_dim %g give %.6g, the cache's magnitude "
                    "is none of its readings (default YaRN %.6g, m(s, mscale) %.6g, m(s, mscale_all_dim) %.6g)" % (
                        ms, ma, d.want, d.alt[0], d.alt[1], d.alt[2]))
        else:
            out += (": DeepSeek's mscale: the config's mscale %g / mscale_all_dim %g give m(%g, %g) / m(%g, %g) = "
                    "%.6g; the cache's is %s" % (ms, ma, s, ms, s, ma, d.want, _DEEPSEEK_WORDS[d.reading - 3]))
        return out + " (shows at pair 0, position %d)" % d.position
    if kind == "longrope_list":
        return "%s (original context %d)" % (_LIST_WORDS[d.reading % 3], d.config_position)
    if kind == "switch_scheme":
        return ("the cache switches frequencies at position %d (LongRoPE short/long factors), the config says %s "
                "(shows at row %d)" % (d.position, _scheme_text(cfg), d.position))
    if kind == "switch_at":
        at, l0 = d.position, d.config_position
        if at != l0:
            return ("switches from short to long factors at %d where HF switches at %d (the config's original "
                    "context: HF takes the long factors for every position once a sequence is longer than %d; "
                    "shows at row %d)" % (at, l0, l0, min(at, l0)))
        return ("switches from short to long factors at position %d, the config's original context%s; HF instead "
                "takes the long factors for every position of a sequence longer than %d, so for such a sequence "
                "rows 0..%d differ from HF's" % (
                    at, " (vLLM's long_short_cache: the long rows restart at position 0)" if d.reading else "", l0,
                    at - 1))
    if kind == "switch_factors":
        side = "long" if d.side else "short"
        if d.first >= 0:
            return "the %s factors depart from the config's from pair %d on (by up to %.3g%%)" % (
                side, d.first, 100 * d.worst)
        return "the %s factors are the config's (every pair within the fit's noise, ~1e-6)" % side
    if kind == "frequencies":
        if not d.side:
            return ("pairs %d-%d depart from the config's %s frequencies by up to %.3g%% (the cache fits %s, base %g; "
                    "first visible at pair %d, position %.0f)" % (
                        d.first, d.last, _scheme_text(cfg), d.worst * 100, _scheme_text(c.params), c.params.base,
                        d.first, d.shows_at))
        return ("pairs %d-%d follow %s, the config says %s (frequencies off by up to %.3g%%; first visible at pair %d, "
                "position %.0f)" % (d.first, d.last, _scheme_text(c.params), _scheme_text(cfg), d.worst * 100,
                                    d.first, d.shows_at))
    if kind == "imrope_still":
        s = d.sections
        return ("pairs %d-%d hold angle 0 at every row where the config, as HF reads it, turns them (%.3g rad per "
                "position at pair %d): HF's apply_interleaved_mrope keeps the pairs past the interleaved sections "
                "(t/h/w %d/%d/%d, h and w up to pair %d) on t, the token's position for text; llama.cpp's IMROPE "
                "takes them from a 4th position stream, 0 for text tokens (shows at pair %d, position 1)%s" % (
                    d.first, d.last, d.got, d.first, s[0], s[1], s[2], 3 * max(s[1], s[2]) - 1, d.first,
                    "; every other pair is the config's bit for bit in ggml's float32 arithmetic"
                    if d.differ == 0 else ""))
    if kind == "imrope_residual":
        return ("with pairs %d-%d put back, %d values still differ from the config in ggml's float32 arithmetic "
                "(up to %d ULP)" % (d.first, d.last, d.differ, d.max_ulp))
    if kind == "grid":
        return "the cache is rounded to %s (the config's table in float32 differs by up to %d of its ULPs)" % (
            _GRID_NAME.get(c.grid, "?"), d.max_ulp)
    if kind == "unexplained":
        return ("frequencies and magnitude agree with the config, but no arithmetic reproduces every value: closest "
                "%s, %d values differ by up to %d ULP; the cache itself fits %s" % (
                    _CONFIG_ARITH_WORDS.get(d.arith, "?"), d.differ, d.max_ulp,
                    _ARITH_WORDS.get(_lib.ARITH_NAME.get(c.arith, "?"), "?")))
    return "departure %d" % d.kind


def _read_config(config: Any) -> "_lib.ModelConfig":
    """The model config as the C reader fills it (free with posenc_model_config_free)."""
    path, document = config_source(config)
    c = _lib.ModelConfig()
    if path is not None:
        call(_lib.lib.posenc_config_read, path, 0, ctypes.byref(c))
    else:
        call(_lib.lib.posenc_config_parse_hf_json, document, len(document), ctypes.byref(c))
    return c


def _compare(c: "_lib.RopeIdentity", cache: "_lib.Array", sin: Optional["_lib.Array"], config: Any) -> Dict[str, Any]:
    """posenc_rope_identity_compare, the call `posenc rope identify --config` makes, with its departures worded."""
    mc = _read_config(config)
    try:
        im = _lib.MropeSections()
        im.kind, im.axes = 1, 3  # POSENC_MROPE_INTERLEAVED: t/h/w
        for i in range(3):
            im.sizes[i] = mc.mrope_sections[i]
        cmp = _lib.RopeComparison()
        call(_lib.lib.posenc_rope_identity_compare, ctypes.byref(c), ctypes.byref(cache),
             ctypes.byref(sin) if sin is not None else None, ctypes.byref(mc.rope),
             ctypes.byref(im) if mc.mrope_interleaved else None, ctypes.byref(cmp))
        n = max(0, min(int(cmp.departure_count), _lib.ROPE_MAX_DEPARTURES))
        return {"matches": bool(cmp.matches),
                "arithmetic": _CONFIG_ARITH_WORDS.get(cmp.arith) if cmp.matches else None,
                "residual": {_lib.ARITH_NAME[a]: (int(cmp.max_ulp[a]), int(cmp.differ[a]))
                             for a in range(_lib.ROPE_ARITHS)},
                "departures": tuple(_departure_words(cmp.departures[i], c, cmp) for i in range(n)),
                "kinds": tuple(_lib.DEPARTURE_KIND.get(cmp.departures[i].kind, "?") for i in range(n))}
    finally:
        _lib.lib.posenc_model_config_free(ctypes.byref(mc))


def identify_rope(cos: Any = None, sin: Any = None, layout: Optional[str] = None, config: Any = None, *,
                  input: Any = None, rotated: Any = None) -> RopeIdentity:
    """Which RoPE made this cache? (posenc_rope_identify; `posenc rope identify`.)

    cos: a cache as an engine keeps it ([T, R] HF / vLLM cat(cos, sin) / ggml interleaved
    (cos, sin), or plain [T, R/2]; NumPy or CPU torch, f32/f64/f16/bf16); sin: its partner
    for an HF or plain cos table; layout: None/"auto", "hf", "vllm", "ggml", "plain".
    Or input= x and rotated= R(x) ([T, D] or [T, H, D]) instead of cos: the cache is recovered
    from the rotation (pass-through channels, pairing and rotated run in .rotation).
    config: a config.json / .gguf path, a dict or a transformers config: .departures names
    where the cache departs from it (the tool's sentences), .config_matches says whether it
    matches bit for bit and .config_residual gives (max_ulp, differ) per arithmetic.
    Bad input raises InvalidArgumentError naming it (shape, NaN and its index, a rotation
    that is not one)."""
    from_rotation = input is not None or rotated is not None
    if from_rotation:
        if input is None or rotated is None:
            raise InvalidArgumentError("identify_rope: input= and rotated= go together (x and R(x))", 1)
        if cos is not None or sin is not None or (layout not in (None, "auto")):
            raise InvalidArgumentError("identify_rope: input=/rotated= replace the cache: give no cos, sin or "
                                       "layout", 1)
    elif cos is None:
        raise InvalidArgumentError("identify_rope: give a cache (cos=) or input= and rotated=", 1)
    out = _lib.RopeIdentity()
    rotation = None
    against = None
    if from_rotation:
        xa, kx = to_array(input, "input")
        ya, ky = to_array(rotated, "rotated")
        rot = _lib.RopeRotation()
        call(_lib.lib.posenc_rope_rotation_cache, ctypes.byref(xa), ctypes.byref(ya), ctypes.byref(rot))
        try:
            rotation = Rotation(layout=_lib.LAYOUT_NAME.get(rot.layout, "?"), head_dim=rot.head_dim,
                                rotary_offset=rot.rotary_offset, rotary_dim=rot.rotary_dim, heads=rot.heads,
                                max_norm_misfit=rot.max_norm_misfit, max_head_misfit=rot.max_head_misfit)
            call(_lib.lib.posenc_rope_identify, ctypes.byref(rot.cos), ctypes.byref(rot.sin),
                 _lib.CACHE_LAYOUT["plain"], ctypes.byref(out))
            try:
                result = _identity(out, rotation)
                if config is not None:
                    against = _compare(out, rot.cos, rot.sin, config)
            finally:
                _lib.lib.posenc_rope_identity_free(ctypes.byref(out))
        finally:
            _lib.lib.posenc_rope_rotation_free(ctypes.byref(rot))
        del kx, ky
    else:
        ca, kc = to_array(cos, "cache")
        sa, ks = to_array(sin, "sin") if sin is not None else (None, None)
        code = choose(_lib.CACHE_LAYOUT, "auto" if layout is None else layout, "layout")
        call(_lib.lib.posenc_rope_identify, ctypes.byref(ca), ctypes.byref(sa) if sa is not None else None, code,
             ctypes.byref(out))
        try:
            result = _identity(out, rotation)
            if config is not None:
                against = _compare(out, ca, sa, config)
        finally:
            _lib.lib.posenc_rope_identity_free(ctypes.byref(out))
        del kc, ks
    if against is None:
        return result
    return dataclasses.replace(
        result, config_matches=against["matches"], config_arithmetic=against["arithmetic"],
        config_residual=against["residual"], departures=against["departures"], departure_kinds=against["kinds"])


__all__ = ["identify_rope", "RopeIdentity", "Rotation"]

check_keywords(globals(), __all__)
