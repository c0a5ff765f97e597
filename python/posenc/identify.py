"""Which RoPE is this? posenc_rope_identify over a cos/sin cache (or a rotated q with its
input, posenc_rope_rotation_cache), returned as a dataclass with the fitted fields and the
same words `posenc rope identify` prints. Against a model config, the departure sentences
come from the `posenc` tool (the library computes, the CLI words: cli/cmd_rope_identify.c),
run on the same arrays; the residuals in each arithmetic come from the C API."""
from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _lib
from ._common import call, check_keywords, choose, doubles, to_array
from ._errors import Error, InvalidArgumentError
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


def _tool_against(arrays: List[Tuple[str, Any]], args: List[str], config: Any) -> Dict[str, Any]:
    """Run `posenc rope identify ... --config --json` on the same arrays for the departure words."""
    from .analysis import cli_binary
    path, document = config_source(config)
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, data in arrays:
            files[name] = os.path.join(tmp, name + ".npy")
            np.save(files[name], data)
        if path is None:
            path = os.path.join(tmp, "config.json").encode()
            with open(path, "wb") as f:
                f.write(document)
        argv = [cli_binary(), "rope", "identify"] + [files.get(a, a) for a in args] + [
            "--config", os.fsdecode(path), "--json"]
        done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip()
        if document is not None:  # the tool names the file it read: here a temporary copy of the dict
            message = message.replace(os.fsdecode(path), "config.json")
        raise (InvalidArgumentError(message, 1) if done.returncode == 2 else Error(message, 6))
    return json.loads(done.stdout)["config"]


def _as_numpy(a: Any) -> np.ndarray:
    """A plain NumPy copy for the tool (bf16 tensors as their uint16 bits, with --bf16)."""
    if type(a).__module__.startswith("torch"):
        import torch
        t = a.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16)
        return t.numpy()
    return np.asarray(a)


def _bf16_flag(*arrays: Any) -> List[str]:
    kinds = {str(getattr(a, "dtype", "")) for a in arrays if a is not None}
    return ["--bf16"] if "torch.bfloat16" in kinds else []


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
        finally:
            _lib.lib.posenc_rope_rotation_free(ctypes.byref(rot))
        del kx, ky
    else:
        ca, kc = to_array(cos, "cache")
        sa, ks = to_array(sin, "sin") if sin is not None else (None, None)
        code = choose(_lib.CACHE_LAYOUT, "auto" if layout is None else layout, "layout")
        call(_lib.lib.posenc_rope_identify, ctypes.byref(ca), ctypes.byref(sa) if sa is not None else None, code,
             ctypes.byref(out))
        del kc, ks
    try:
        result = _identity(out, rotation)
    finally:
        _lib.lib.posenc_rope_identity_free(ctypes.byref(out))
    if config is None:
        return result
    if from_rotation:
        against = _tool_against([("x", _as_numpy(input)), ("y", _as_numpy(rotated))],
                                ["--input", "x", "--rotated", "y"] + _bf16_flag(input, rotated), config)
    else:
        arrays = [("cache", _as_numpy(cos))] + ([("sin", _as_numpy(sin))] if sin is not None else [])
        args = ["cache"] + (["--sin", "sin"] if sin is not None else []) + _bf16_flag(cos, sin)
        if layout not in (None, "auto"):
            args += ["--layout", str(layout)]
        against = _tool_against(arrays, args, config)
    return dataclasses.replace(
        result, config_matches=bool(against["matches"]), config_arithmetic=against["arithmetic"],
        config_residual={k: (int(v["max_ulp"]), int(v["differ"])) for k, v in against["residual"].items()},
        departures=tuple(against["departures"]))


__all__ = ["identify_rope", "RopeIdentity", "Rotation"]

check_keywords(globals(), __all__)
