"""Understanding from Python: analyze (health), diff (named findings), precision audit,
explain a model config, and an HTML report. Results are dataclasses, never text to parse.

Arrays may be NumPy arrays (f32, f64, f16, i32, i64, u8, u16) or CPU torch tensors
(bfloat16 included); the last axis is channels, leading axes are flattened into rows.
"""
from __future__ import annotations

import ctypes
import math
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _lib
from ._common import check_keywords, integer, call, choose, doubles, dtype_name, to_array
from ._errors import Error, InvalidArgumentError, PosencIOError, UnsupportedError
from .rope import ConfigLike, ModelConfig, load_config, rope_frequencies
from .tables import sinusoid_params


@dataclass(frozen=True)
class SinusoidFit:
    """The sinusoid model fitted to a table (posenc_sinusoid_fit). Frequencies in rad/position."""
    found: bool
    layout: str
    cos_first: bool
    pairs: int
    extra_channels: int
    amplitude: float
    pair_norm_error: float
    zero_rows: int
    first_zero_row: int
    start: float
    start_is_integer: bool
    frequencies: np.ndarray = field(repr=False)
    ratio: float
    scale: float
    geometric_error: float
    base_vaswani: float
    base_t2t: float
    freqs: str
    base: float
    base_is_round: bool
    angle_error: float
    angle_relative_error: float
    noise: float
    formation: str  # "exact" | "float32" | "float16" | "bfloat16" | "unknown"


def _fit(c: "_lib.SinusoidFit") -> SinusoidFit:
    return SinusoidFit(found=bool(c.found), layout=_lib.LAYOUT_NAME.get(c.layout, "?"),
                       cos_first=bool(c.cos_first), pairs=c.pairs, extra_channels=c.extra_channels,
                       amplitude=c.amplitude, pair_norm_error=c.pair_norm_error, zero_rows=c.zero_rows,
                       first_zero_row=c.first_zero_row, start=c.start,
                       start_is_integer=bool(c.start_is_integer),
                       frequencies=doubles(c.frequencies, c.pairs if c.found else 0), ratio=c.ratio,
                       scale=c.scale, geometric_error=c.geometric_error, base_vaswani=c.base_vaswani,
                       base_t2t=c.base_t2t, freqs=_lib.FREQS_NAME.get(c.freqs, "?"), base=c.base,
                       base_is_round=bool(c.base_is_round), angle_error=c.angle_error,
                       angle_relative_error=c.angle_relative_error, noise=c.noise,
                       formation=_lib.ANGLE_FORMATION_NAME.get(c.formation, "unknown"))


@dataclass(frozen=True)
class Health:
    """Health of a table ([rows, channels] after flattening): posenc_health."""
    rows: int
    channels: int
    nonfinite: int
    first_nonfinite: Optional[Tuple[int, int]]  # (row, channel) of the first NaN/inf
    min: float
    max: float
    mean_abs: float
    row_variance: np.ndarray = field(repr=False)       # [rows]
    row_norm: np.ndarray = field(repr=False)           # [rows]
    norm_range: Tuple[float, float]
    variance_range: Tuple[float, float]
    channel_frequency: np.ndarray = field(repr=False)  # [channels] rad/position, 0 if none
    channel_wavelength: np.ndarray = field(repr=False)  # [channels] positions (inf if longer)
    closest_pair: Tuple[int, int]                       # rows of the two closest positions
    closest_distance: float
    uniqueness_rows: int
    most_similar_pair: Tuple[int, int]                  # rows most alike by direction (largest cosine)
    max_cosine: float                                   # that cosine (NaN if < 2 non-zero rows)
    mean_dot: np.ndarray = field(repr=False)            # [offsets] mean PE(p).PE(p+k)
    mean_cosine: np.ndarray = field(repr=False)         # [offsets]
    fit: SinusoidFit
    linearity_available: bool
    linearity_offsets: Tuple[int, ...]
    linearity_residual: np.ndarray = field(repr=False)  # [pairs, len(linearity_offsets)]
    linearity_worst: float


def analyze(table: Any, *, frequencies: Optional[Sequence[float]] = None, layout: str = "interleaved",
            cos_first: bool = False, max_offset: int = 0, max_rows_pairs: int = 0) -> Health:
    """Health of a table: range, norms, per-channel frequencies, uniqueness (closest pair),
    similarity vs distance, the fitted sinusoid model, linearity residuals (as `posenc analyze`).
    frequencies/layout: known frequencies for the linearity check (default: the fitted ones)."""
    arr, keep = to_array(table, "table")
    opts = _lib.HealthOptions()
    opts.max_offset, opts.max_rows_pairs = integer(max_offset, "max_offset"), integer(max_rows_pairs, "max_rows_pairs")
    freq_keep = None
    if frequencies is not None:
        freq_keep = np.ascontiguousarray(frequencies, dtype=np.float64)
        opts.frequencies = freq_keep.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        opts.frequency_count = freq_keep.size
    opts.layout = choose(_lib.LAYOUT, layout, "layout")
    opts.cos_first = 1 if cos_first else 0
    h = _lib.Health()
    call(_lib.lib.posenc_health_analyze, ctypes.byref(arr), ctypes.byref(opts), ctypes.byref(h))
    try:
        used = tuple(int(h.linearity_offsets[i]) for i in range(_lib.HEALTH_OFFSETS))
        residual = doubles(h.linearity_residual, h.linearity_pairs * _lib.HEALTH_OFFSETS)
        residual = residual.reshape(-1, _lib.HEALTH_OFFSETS) if residual.size else residual.reshape(0, 0)
        n_used = sum(1 for o in used if o)
        return Health(rows=h.rows, channels=h.channels, nonfinite=h.nonfinite,
                      first_nonfinite=None if h.first_nonfinite_row < 0 else
                      (h.first_nonfinite_row, h.first_nonfinite_channel),
                      min=h.min, max=h.max, mean_abs=h.mean_abs, row_variance=doubles(h.row_variance, h.rows),
                      row_norm=doubles(h.row_norm, h.rows), norm_range=(h.norm_min, h.norm_max),
                      variance_range=(h.variance_min, h.variance_max),
                      channel_frequency=doubles(h.channel_frequency, h.channels),
                      channel_wavelength=doubles(h.channel_wavelength, h.channels),
                      closest_pair=(h.closest_a, h.closest_b), closest_distance=h.closest_distance,
                      uniqueness_rows=h.uniqueness_rows,
                      most_similar_pair=(h.most_similar_a, h.most_similar_b), max_cosine=h.max_cosine,
                      mean_dot=doubles(h.mean_dot, h.offsets),
                      mean_cosine=doubles(h.mean_cosine, h.offsets), fit=_fit(h.fit),
                      linearity_available=bool(h.linearity_available),
                      linearity_offsets=tuple(o for o in used if o),
                      linearity_residual=residual[:, :n_used] if residual.size else residual,
                      linearity_worst=h.linearity_worst)
    finally:
        _lib.lib.posenc_health_free(ctypes.byref(h))
        del keep, freq_keep


def fit_sinusoid(table: Any, *, noise: float = 0.0) -> SinusoidFit:
    """Fit the additive sinusoid model (layout, pair order, base, convention, start, precision)."""
    arr, keep = to_array(table, "table")
    f = _lib.SinusoidFit()
    call(_lib.lib.posenc_sinusoid_fit_table, ctypes.byref(arr), float(noise), ctypes.byref(f))
    try:
        return _fit(f)
    finally:
        _lib.lib.posenc_sinusoid_fit_free(ctypes.byref(f))


def check_finite(array: Any, what: str = "array") -> None:
    """Raise NonFiniteError naming the first NaN/inf cell ("q: cell [3, 17] is inf (overflows
    f16)"), as posenc_array_check_finite does; integer arrays always pass."""
    arr, keep = to_array(array, what)
    call(_lib.lib.posenc_array_check_finite, ctypes.byref(arr), what.encode())
    del keep


@dataclass(frozen=True)
class Finding:
    """One diagnosis of diff (posenc_finding): codes and numbers, no words. The library does
    not word findings; `posenc diff` does (cli/analysis_words.c, sentences listed in
    docs/analysis.md). What each field holds per kind is in posenc.h section 7e:

    kind        stable key: "agree", "offset", "layout", "sin_cos_swapped", "freq_convention",
                "base", "freq_scale", "angle_precision", "transposed", "prefix", "permutation",
                "padding_rows", "amplitude", "apply_precision"
    value       the headline number (the offset k, B's base, the scale B/A, ...)
    a, b        the parameter on A's and B's side, where the kind has one (fitted bases,
                posenc_layout / posenc_freqs / posenc_angle_formation codes, start positions)
    evidence    the measurement that supports it (worst difference, tolerance, angle error)
    from_fit    True: from the fitted models (report.fit_a/fit_b); False: an exact row/channel test
    side        "A" or "B": the table a one-sided finding is about (prefix, padding rows, ...)
    count, width  rows of a prefix / zero rows / heads; channels per head (permutation)
    permutation "none", "to_half", "to_interleaved", "swap_pairs", "swap_halves", "general"
    """
    kind: str
    code: int
    value: float
    a: float
    b: float
    evidence: float
    from_fit: bool
    side: str
    count: int
    width: int
    permutation: str


def _finding(f: "_lib.Finding") -> Finding:
    return Finding(kind=f.key.decode() if f.key else _lib.FINDING_KIND_NAME.get(f.kind, str(f.kind)),
                   code=int(f.kind), value=f.value, a=f.a, b=f.b, evidence=f.evidence,
                   from_fit=bool(f.from_fit), side="B" if f.side else "A", count=int(f.count),
                   width=int(f.width), permutation=_lib.PERMUTATION_NAME.get(f.permutation, str(f.permutation)))


@dataclass(frozen=True)
class DiffReport:
    """What posenc_diff_tables found. Element statistics are None unless shapes are equal."""
    shapes_equal: bool
    shape_a: Tuple[int, int]            # as flattened tables [rows, cols]
    shape_b: Tuple[int, int]
    findings: List[Finding]
    explained: bool                     # the findings account for every difference
    rope: bool                          # compared as RoPE outputs (input= given)
    compared: int
    max_abs: Optional[float]
    mean_abs: Optional[float]
    max_rel: Optional[float]
    mean_rel: Optional[float]
    max_abs_at: Optional[Tuple[int, int]]     # (row, channel)
    ulp_histogram: Dict[str, int]             # float32 ULP distance buckets
    nonfinite: Tuple[int, int]
    first_beyond: Optional[Tuple[int, int]]   # first (row, channel) with |a-b| > tolerance
    divergence_onset: Optional[int]           # first row whose max |a-b| exceeds tolerance
    tolerance: float
    channel_max_abs: Optional[np.ndarray] = field(repr=False)
    bands: List[Tuple[int, float]] = field(default_factory=list)  # (position band end, worst |a-b|)
    fit_a: Optional[SinusoidFit] = field(default=None, repr=False)
    fit_b: Optional[SinusoidFit] = field(default=None, repr=False)
    # the published convention each fit matches (posenc_preset): "none", "rope", "fairseq",
    # "fairseq_embedding", "t2t", "tutorial", "vaswani_half", "other"
    preset_a: str = "none"
    preset_b: str = "none"

    def finding(self, kind: str) -> Optional[Finding]:
        """The finding of that kind, or None."""
        return next((f for f in self.findings if f.kind == kind), None)

    @property
    def kinds(self) -> List[str]:
        return [f.kind for f in self.findings]


_ULP_NAMES = ("0", "1", "2-3", "4-15", "16-255", "256-65535", ">=65536", "nonfinite")


def diff(a: Any, b: Any, *, tolerance: float = 0.0, input: Any = None, heads: int = 0,
         max_offset: int = 0) -> DiffReport:
    """Compare two tables and diagnose why they differ (`posenc diff`): offset, layout,
    sin/cos swap, frequency convention, base, frequency scale, angle precision, transposed,
    prefix, per-head permutation, padding rows, amplitude, RoPE apply precision. input: the
    unrotated x when a and b are RoPE outputs R(x). tolerance 0 = 1e-6 absolute."""
    aa, ka = to_array(a, "a")
    bb, kb = to_array(b, "b")
    opts = _lib.DiffOptions()
    opts.tolerance, opts.heads, opts.max_offset = float(tolerance), integer(heads, "heads"), integer(max_offset, "max_offset")
    ki = None
    if input is not None:
        xi, ki = to_array(input, "input")
        opts.input = ctypes.pointer(xi)
    r = _lib.DiffReport()
    call(_lib.lib.posenc_diff_tables, ctypes.byref(aa), ctypes.byref(bb), ctypes.byref(opts), ctypes.byref(r))
    try:
        findings = [_finding(r.findings[i]) for i in range(max(0, min(r.finding_count, _lib.DIFF_MAX_FINDINGS)))]
        eq = bool(r.shapes_equal)
        return DiffReport(
            shapes_equal=eq, shape_a=(r.rows_a, r.cols_a), shape_b=(r.rows_b, r.cols_b), findings=findings,
            explained=bool(r.explained), rope=bool(r.rope), compared=r.compared,
            max_abs=r.max_abs if eq else None, mean_abs=r.mean_abs if eq else None,
            max_rel=r.max_rel if eq else None, mean_rel=r.mean_rel if eq else None,
            max_abs_at=(r.max_abs_row, r.max_abs_channel) if eq and r.max_abs_row >= 0 else None,
            ulp_histogram={n: int(r.ulp_histogram[i]) for i, n in enumerate(_ULP_NAMES)} if eq else {},
            nonfinite=(r.nonfinite_a, r.nonfinite_b),
            first_beyond=(r.first_beyond_row, r.first_beyond_channel) if r.first_beyond_row >= 0 else None,
            divergence_onset=r.divergence_onset if r.divergence_onset >= 0 else None, tolerance=r.tolerance,
            channel_max_abs=doubles(r.channel_max_abs, r.cols_a) if eq else None,
            bands=[(int(r.band_end[i]), float(r.band_max_abs[i])) for i in range(r.band_count)],
            fit_a=_fit(r.fit_a), fit_b=_fit(r.fit_b), preset_a=_lib.PRESET_NAME.get(r.preset_a, str(r.preset_a)),
            preset_b=_lib.PRESET_NAME.get(r.preset_b, str(r.preset_b)))
    finally:
        _lib.lib.posenc_diff_report_free(ctypes.byref(r))
        del ka, kb, ki


@dataclass(frozen=True)
class PrecisionBand:
    max_position: int
    positions_exact: bool
    angle_error: float   # worst wrapped angle error over the band (radians)
    logit_error: float   # worst logit error, unit q/k, q at max_position, k at 0


@dataclass(frozen=True)
class PrecisionReport:
    """What a dtype does to an encoding for positions 0..max_pos (posenc_precision_report).
    -1 / None where nothing happens within max_pos."""
    dtype: str
    max_pos: int
    pairs: int
    first_inexact_position: Optional[int]
    first_inexact_rounds_to: float
    first_overflow_position: Optional[int]
    first_angle_collision: Optional[Tuple[int, int]]   # (position, earlier position)
    first_table_collision: Optional[Tuple[int, int]]
    table_search_limit: int
    frequencies: np.ndarray = field(repr=False)        # [pairs]
    angle_error: np.ndarray = field(repr=False)        # [pairs] worst wrapped error
    logit_error_angle: float
    logit_error_table: float
    bands: List[PrecisionBand]


def precision(dtype: str = "bf16", max_pos: int = 131072, *, dim: int = 128, base: float = 10000.0,
              freqs: str = "vaswani") -> PrecisionReport:
    """Audit what bf16/f16/f32 does to positions, angles and logits (`posenc precision`)."""
    name = dtype_name(dtype)
    if name not in ("f32", "f16", "bf16"):
        raise UnsupportedError("precision: dtype must be f32, f16 or bf16, got %r" % (dtype,), 8)
    p = sinusoid_params(dim, base=base, freqs=freqs)
    r = _lib.PrecisionReport()
    call(_lib.lib.posenc_precision_audit, ctypes.byref(p), _lib.DTYPE[name], integer(max_pos, "max_pos"), ctypes.byref(r))
    try:
        return PrecisionReport(
            dtype=name, max_pos=r.max_pos, pairs=r.pairs,
            first_inexact_position=None if r.first_inexact_position < 0 else r.first_inexact_position,
            first_inexact_rounds_to=r.first_inexact_rounds_to,
            first_overflow_position=None if r.first_overflow_position < 0 else r.first_overflow_position,
            first_angle_collision=None if r.first_angle_collision < 0 else
            (r.first_angle_collision, r.angle_collision_with),
            first_table_collision=None if r.first_table_collision < 0 else
            (r.first_table_collision, r.table_collision_with),
            table_search_limit=r.table_search_limit, frequencies=doubles(r.frequencies, r.pairs),
            angle_error=doubles(r.angle_error, r.pairs), logit_error_angle=r.logit_error_angle,
            logit_error_table=r.logit_error_table,
            bands=[PrecisionBand(b.max_position, bool(b.positions_exact), b.angle_error, b.logit_error)
                   for b in r.bands[:r.band_count]])
    finally:
        _lib.lib.posenc_precision_report_free(ctypes.byref(r))


@dataclass(frozen=True)
class PairExplanation:
    pair: int
    frequency: float       # radians per position after scaling
    wavelength: float      # positions per full turn, 2 pi / frequency
    scale: float           # frequency / unscaled frequency (1 = untouched, 1/factor = interpolated)


@dataclass(frozen=True)
class LayerExplanation:
    """The RoPE of one kind of attention layer (Gemma-2/3: "full_attention" with the model's
    theta and scaling, "sliding_attention" with rope_local_base_freq, unscaled)."""
    name: str
    layers: int                 # layers of this kind (0 = unknown)
    sliding_window: int         # attention window, 0 = whole context
    base: float
    scaling: str
    factor: float
    rotary_dim: int
    attention_factor: float
    pairs: List[PairExplanation]


@dataclass(frozen=True)
class Explanation:
    """A model's RoPE in numbers (posenc.explain). The wording of `posenc rope explain` lives
    in the CLI, not the library; str(explanation) gives a short summary built from these fields.
    For models with several kinds of layers, the top-level numbers are those of the main (full
    attention) RoPE, which is also layer_types[0]."""
    config: ModelConfig
    head_dim: int               # channels the RoPE sees (MLA: qk_rope_head_dim)
    rotary_dim: int             # R, rotated channels (the rest pass through)
    first_rotated_channel: int  # offset of the rotated channels in the runtime's head (MLA: last ones)
    attention_head_dim: int     # channels of one q/k head as the runtime holds it
    layout: str                 # "half" (neox, rotate_half) or "interleaved" (gptj)
    base: float
    scaling: str
    factor: float
    seq_len: int
    attention_factor: float
    softmax_head_dim: int       # d of the 1/sqrt(d) softmax scale
    softmax_scale_factor: float  # extra multiplier on it (DeepSeek), else 1
    pairs: List[PairExplanation]
    layer_types: List[LayerExplanation]
    warnings: Tuple[str, ...]

    def __str__(self) -> str:
        c = self.config
        long_ = [p for p in self.pairs if p.scale < 0.999]
        lines = ["%s: RoPE over %d of %d channels per head (%s layout), theta %g, scaling %s%s"
                 % (c.architecture or "model", self.rotary_dim, self.head_dim, c.layout, self.base,
                    self.scaling, (" x%g" % self.factor) if self.scaling != "none" else ""),
                 "wavelengths %.3g .. %.3g positions; %d of %d pairs scaled; attention factor %.6g"
                 % (self.pairs[0].wavelength if self.pairs else 0, self.pairs[-1].wavelength if self.pairs else 0,
                    len(long_), len(self.pairs), self.attention_factor)]
        for t in self.layer_types:
            lines.append("layer kind %s: %d layers, %s: base %g, scaling %s%s, attention factor %.6g"
                         % (t.name, t.layers, "window %d" % t.sliding_window if t.sliding_window else
                            "whole context", t.base, t.scaling,
                            (" x%g" % t.factor) if t.scaling != "none" else "", t.attention_factor))
        if self.warnings:
            lines.append("warnings: " + ", ".join(self.warnings))
        return "\n".join(lines)


def explain(config: ConfigLike, *, seq_len: int = 0) -> Explanation:
    """Explain a model's RoPE (config.json path, .gguf, dict or transformers config): per-pair
    frequency, wavelength and scale versus the unscaled RoPE, the attention factor, warnings."""
    mc = load_config(config)
    p = mc.rope
    attention, pairs = _explain_pairs(p, seq_len)
    layer_types = []
    for t in mc.layer_types:
        t_attention, t_pairs = _explain_pairs(t.rope, seq_len)
        layer_types.append(LayerExplanation(name=t.name, layers=t.layers, sliding_window=t.sliding_window,
                                            base=float(t.rope.base or 10000.0), scaling=t.rope.scaling,
                                            factor=float(t.rope.factor or 1.0), rotary_dim=t.rope.check(),
                                            attention_factor=t_attention, pairs=t_pairs))
    return Explanation(config=mc, head_dim=p.head_dim, rotary_dim=p.check(),
                       first_rotated_channel=mc.rotary_offset,
                       attention_head_dim=mc.attention_head_dim or p.head_dim, layout=mc.layout,
                       base=float(p.base or 10000.0), scaling=p.scaling, factor=float(p.factor or 1.0),
                       seq_len=int(seq_len), attention_factor=attention,
                       softmax_head_dim=mc.softmax_head_dim or p.head_dim,
                       softmax_scale_factor=mc.softmax_scale_factor, pairs=pairs,
                       layer_types=layer_types, warnings=mc.warnings)


def _explain_pairs(p: Any, seq_len: int) -> Tuple[float, List[PairExplanation]]:
    """Attention factor and per-pair frequency/wavelength/scale against the unscaled RoPE."""
    f = rope_frequencies(p, seq_len=seq_len)
    plain = rope_frequencies(p.replace(scaling="none", attention_factor=0.0), seq_len=seq_len)
    pairs = [PairExplanation(k, float(w), 2 * math.pi / float(w) if w > 0 else math.inf,
                             float(w / w0) if w0 else math.nan)
             for k, (w, w0) in enumerate(zip(f.inv_freq, plain.inv_freq))]
    return float(f.attention_factor), pairs


def cli_binary() -> str:
    """The `posenc` tool: $POSENC_BIN, else next to the loaded library, else on PATH."""
    env = os.environ.get("POSENC_BIN")
    if env:
        return env
    beside = os.path.join(os.path.dirname(os.path.abspath(_lib.LIBRARY_PATH)), "posenc")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("posenc")
    if found:
        return found
    raise PosencIOError("the posenc tool was not found (set POSENC_BIN); report() runs it", 6)


def report(path: str, table: Any = None, *, config: Optional[str] = None, **flags: Any) -> str:
    """Write the offline HTML report to path and return path. The library has no report
    entry point (rendering lives in the CLI), so this runs `posenc report`: with a table
    (array/tensor, saved to a temporary .npy), a config path, or flags (kind="rope", len=512,
    dim=128, scaling="yarn", ...: `posenc report --help`)."""
    import tempfile
    args = [cli_binary(), "report"]
    with tempfile.TemporaryDirectory() as tmp:
        if table is not None:
            if type(table).__module__.startswith("torch"):
                table = table.detach().cpu().float().numpy()  # bf16/f16 tensors as float32 values
            data = np.asarray(table)
            if data.dtype not in (np.float32, np.float64):
                data = data.astype(np.float32)
            npy = os.path.join(tmp, "table.npy")
            np.save(npy, data)
            args.append(npy)
        if config is not None:
            args += ["--config", os.fspath(config)]
        for key, value in flags.items():
            args += ["--" + key.replace("_", "-"), str(value)]
        args += ["-o", os.fspath(path)]
        done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip()
        if done.returncode == 2:
            raise InvalidArgumentError(message, 1)
        raise Error(message, 6)
    return os.fspath(path)


__all__ = ["check_finite", "analyze", "fit_sinusoid", "diff", "precision", "explain", "report", "Health", "SinusoidFit",
           "Finding", "DiffReport", "PrecisionReport", "PrecisionBand", "Explanation", "PairExplanation", "LayerExplanation"]

check_keywords(globals(), __all__)  # a bad keyword raises posenc.KeywordError naming it
