"""Every ctypes declaration of the binding, in one place.

This module mirrors include/posenc.h: the structs (field for field, in header
order), the enums the package uses, and argtypes/restype of every function the
package calls. When the C API changes, this is the only file to adjust;
tests/test_abi.py compiles a C program against the header and compares every
struct size and field offset with the classes below.

The library is found in this order (first hit wins):
  1. the POSENC_LIBRARY environment variable (a path to libposenc.so);
  2. libposenc.so next to this file (what pip install ./python builds and ships);
  3. build*/libposenc.so of the source checkout this file lives in (PYTHONPATH=python);
  4. the system (ctypes.util.find_library("posenc"), libposenc.so.<major>.<minor>).
Whatever is found must be the version this package was built for (_build_info.py, written
by setup.py; in a checkout, include/posenc.h's POSENC_VERSION_STRING) and export every
function below: anything else is refused at import by name, never half-loaded.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import re
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int32,
                    c_int64, c_size_t, c_uint, c_uint16, c_uint64, c_uint8, c_void_p)
from typing import List, Optional

# ---- constants (pinned values of posenc.h) --------------------------------
ERROR_MESSAGE_SIZE = 256
MAX_DIMS = 8
DIFF_MAX_FINDINGS = 16
ULP_BUCKETS = 8
PRECISION_BANDS = 6
HEALTH_OFFSETS = 4
MROPE_MAX_AXES = 4
CONFIG_MAX_LAYER_TYPES = 4
TRACE_MAX_CHUNKS = 16
NO_PADDING = -1

DTYPE = {"f32": 0, "f64": 1, "f16": 2, "bf16": 3, "i32": 4, "i64": 5, "u8": 6, "u16": 7}
DTYPE_NAME = {v: k for k, v in DTYPE.items()}
LAYOUT = {"interleaved": 0, "gptj": 0, "half": 1, "neox": 1}
LAYOUT_NAME = {0: "interleaved", 1: "half"}
MODE = {"precise": 0, "torch": 1, "torch_compat": 1, "torch-compat": 1}
MODE_NAME = {0: "precise", 1: "torch_compat", 2: "ggml"}
ROPE_MODE = {**MODE, "ggml": 2}  # RoPE only: ggml's float32 theta chain (POSENC_MODE_GGML)
ROPE_ARITHS = 3
MROPE_KIND = {"sections": 0, "interleaved": 1, "axial": 2}
MROPE_KIND_NAME = {v: k for k, v in MROPE_KIND.items()}
CACHE_LAYOUT = {"auto": 0, "hf": 1, "vllm": 2, "ggml": 3, "plain": 4}
CACHE_LAYOUT_NAME = {v: k for k, v in CACHE_LAYOUT.items()}
ARITH_NAME = {0: "exact", 1: "hf-f32", 2: "ggml-f32"}
IDENTIFY_AMBIGUOUS = {1: "ntk_is_base", 2: "yarn_context", 4: "llama3_bands", 8: "arithmetic", 16: "cos_or_sin",
                      32: "not_exact", 64: "one_pair", 128: "longrope_base"}
FREQS = {"vaswani": 0, "t2t": 1}
FREQS_NAME = {0: "vaswani", 1: "t2t"}
ODD = {"error": 0, "pad": 1, "round_up": 2}
TABLE_KIND = {"sinusoidal": 0, "index": 1, "normalized": 2}
ROPE_SCALING = {"none": 0, "default": 0, "linear": 1, "ntk": 2, "dynamic": 3, "yarn": 4,
                "longrope": 5, "llama3": 6}
ROPE_SCALING_NAME = {0: "none", 1: "linear", 2: "ntk", 3: "dynamic", 4: "yarn", 5: "longrope",
                     6: "llama3"}
LONGROPE_SELECT = {"by_seq_len": 0, "short": 1, "long": 2}
ALIBI_FORM = {"causal": 0, "symmetric": 1}
PAST_END = {"error": 0, "clamp": 1, "resize": 2}
GRID_SPLIT = {"tatp22": 0, "even": 1}
KERNEL_PATH = {"auto": 0, "scalar": 1, "avx2": 2, "avx512": 3}
ANGLE_FORMATION_NAME = {0: "exact", 1: "float32", 2: "float16", 3: "bfloat16", 4: "unknown"}
CONFIG_WARNINGS = {
    1 << 0: "no_theta", 1 << 1: "no_original", 1 << 2: "factor_mismatch",
    1 << 3: "odd_passthrough", 1 << 4: "freq_tensor", 1 << 5: "no_max_position",
    1 << 6: "unknown_family", 1 << 7: "duplicate_key", 1 << 10: "transformers_diverges",
}
FINDING_KIND_NAME = {0: "agree", 1: "offset", 2: "layout", 3: "sin_cos_swapped", 4: "freq_convention",
                     5: "base", 6: "freq_scale", 7: "angle_precision", 8: "transposed", 9: "prefix",
                     10: "permutation", 11: "padding_rows", 12: "amplitude", 13: "apply_precision"}
PERMUTATION_NAME = {0: "none", 1: "to_half", 2: "to_interleaved", 3: "swap_pairs", 4: "swap_halves",
                    5: "general"}
PRESET_NAME = {0: "none", 1: "rope", 2: "fairseq", 3: "fairseq_embedding", 4: "t2t", 5: "tutorial",
               6: "vaswani_half", 7: "other"}

# ---- structs ---------------------------------------------------------------


class Error(Structure):
    _fields_ = [("status", c_int), ("message", c_char * ERROR_MESSAGE_SIZE)]


class Positions(Structure):
    _fields_ = [("count", c_size_t), ("start", c_int64), ("ids", POINTER(c_int64)),
                ("values", POINTER(c_double))]


class SinusoidParams(Structure):
    _fields_ = [("dim", c_int32), ("base", c_double), ("freqs", c_int), ("layout", c_int),
                ("odd", c_int), ("mode", c_int)]


class Array(Structure):
    _fields_ = [("dtype", c_int), ("ndim", c_int), ("shape", c_size_t * MAX_DIMS),
                ("count", c_size_t), ("data", c_void_p)]


class RopeParams(Structure):
    _fields_ = [("head_dim", c_int32), ("rotary_dim", c_int32), ("partial_rotary_factor", c_double),
                ("base", c_double), ("scaling", c_int), ("factor", c_double),
                ("original_max_position", c_int64), ("max_position", c_int64),
                ("beta_fast", c_double), ("beta_slow", c_double), ("mscale", c_double),
                ("mscale_all_dim", c_double), ("attention_factor", c_double), ("truncate", c_int),
                ("low_freq_factor", c_double), ("high_freq_factor", c_double),
                ("short_factors", POINTER(c_double)), ("long_factors", POINTER(c_double)),
                ("factors_count", c_size_t), ("longrope_select", c_int), ("mode", c_int)]


class RopeView(Structure):
    _fields_ = [("tokens", c_size_t), ("heads", c_size_t), ("row_stride", c_size_t),
                ("head_stride", c_size_t)]


class MropeSections(Structure):
    _fields_ = [("kind", c_int), ("axes", c_int32), ("sizes", c_int32 * MROPE_MAX_AXES)]


class MropeSegment(Structure):
    _fields_ = [("is_grid", c_int), ("length", c_int64), ("grid_t", c_int64), ("grid_h", c_int64),
                ("grid_w", c_int64)]


class T5Params(Structure):
    _fields_ = [("num_buckets", c_int32), ("max_distance", c_int32), ("bidirectional", c_int32)]


class ExecTrace(Structure):
    _fields_ = [("chunks", c_int32), ("pooled", c_int32), ("submit_ns", c_int64), ("done_ns", c_int64),
                ("start_ns", c_int64 * TRACE_MAX_CHUNKS), ("end_ns", c_int64 * TRACE_MAX_CHUNKS),
                ("items", c_size_t * TRACE_MAX_CHUNKS)]


class Exec(Structure):
    _fields_ = [("threads", c_int32), ("path", c_int), ("pool", c_void_p), ("trace", POINTER(ExecTrace))]


class ConfigLayerType(Structure):
    _fields_ = [("name", c_char * 32), ("layers", c_int32), ("sliding_window", c_int64),
                ("rope", RopeParams)]


class ModelConfig(Structure):
    _fields_ = [("format", c_int), ("architecture", c_char * 64), ("family", c_char * 32),
                ("scaling_name", c_char * 32), ("num_attention_heads", c_int32),
                ("hidden_size", c_int32), ("num_hidden_layers", c_int32),
                ("max_position_embeddings", c_int64), ("layout", c_int), ("layout_known", c_int),
                ("attention_head_dim", c_int32), ("rotary_offset", c_int32),
                ("softmax_head_dim", c_int32), ("softmax_scale_factor", c_double),
                ("mrope_sections", c_int32 * 4), ("mrope_interleaved", c_int32), ("warnings", c_uint),
                ("rope_given", c_uint),
                ("duplicate_key", c_char * 64), ("keys_used", c_char * 256),
                ("defaults_used", c_char * 256), ("rope", RopeParams),
                ("layer_type_count", c_int32),
                ("layer_types", ConfigLayerType * CONFIG_MAX_LAYER_TYPES),
                ("factor_storage", POINTER(c_double))]


class SinusoidFit(Structure):
    _fields_ = [("found", c_int), ("layout", c_int), ("cos_first", c_int), ("pairs", c_int32),
                ("extra_channels", c_int32), ("amplitude", c_double), ("pair_norm_error", c_double),
                ("zero_rows", c_size_t), ("first_zero_row", c_int64), ("start", c_double),
                ("start_is_integer", c_int), ("frequencies", POINTER(c_double)), ("ratio", c_double),
                ("scale", c_double), ("geometric_error", c_double), ("base_vaswani", c_double),
                ("base_t2t", c_double), ("freqs", c_int), ("base", c_double), ("base_is_round", c_int),
                ("angle_error", c_double), ("angle_relative_error", c_double), ("noise", c_double),
                ("formation", c_int)]


class HealthOptions(Structure):
    _fields_ = [("max_offset", c_size_t), ("max_rows_pairs", c_size_t),
                ("frequencies", POINTER(c_double)), ("frequency_count", c_size_t), ("layout", c_int),
                ("cos_first", c_int)]


class Health(Structure):
    _fields_ = [("rows", c_size_t), ("channels", c_size_t), ("nonfinite", c_size_t),
                ("first_nonfinite_row", c_int64), ("first_nonfinite_channel", c_int64),
                ("min", c_double), ("max", c_double), ("mean_abs", c_double),
                ("row_variance", POINTER(c_double)), ("row_norm", POINTER(c_double)),
                ("norm_min", c_double), ("norm_max", c_double), ("variance_min", c_double),
                ("variance_max", c_double), ("channel_frequency", POINTER(c_double)),
                ("channel_wavelength", POINTER(c_double)), ("closest_a", c_size_t),
                ("closest_b", c_size_t), ("closest_distance", c_double), ("uniqueness_rows", c_size_t),
                ("most_similar_a", c_size_t), ("most_similar_b", c_size_t), ("max_cosine", c_double),
                ("offsets", c_size_t), ("mean_dot", POINTER(c_double)),
                ("mean_cosine", POINTER(c_double)), ("fit", SinusoidFit),
                ("linearity_available", c_int), ("linearity_offsets", c_size_t * HEALTH_OFFSETS),
                ("linearity_pairs", c_size_t), ("linearity_residual", POINTER(c_double)),
                ("linearity_worst", c_double)]


class PrecisionBand(Structure):
    _fields_ = [("max_position", c_int64), ("positions_exact", c_int), ("angle_error", c_double),
                ("logit_error", c_double)]


class PrecisionReport(Structure):
    _fields_ = [("dtype", c_int), ("max_pos", c_int64), ("pairs", c_int32),
                ("first_inexact_position", c_int64), ("first_inexact_rounds_to", c_double),
                ("first_overflow_position", c_int64), ("first_angle_collision", c_int64),
                ("angle_collision_with", c_int64), ("first_table_collision", c_int64),
                ("table_collision_with", c_int64), ("table_search_limit", c_int64),
                ("frequencies", POINTER(c_double)), ("angle_error", POINTER(c_double)),
                ("logit_error_angle", c_double), ("logit_error_table", c_double),
                ("band_count", c_int), ("bands", PrecisionBand * PRECISION_BANDS)]


class Finding(Structure):
    _fields_ = [("kind", c_int), ("key", c_char_p), ("value", c_double), ("a", c_double), ("b", c_double),
                ("evidence", c_double), ("from_fit", c_int), ("side", c_int), ("count", c_size_t),
                ("width", c_size_t), ("permutation", c_int)]


class DiffOptions(Structure):
    _fields_ = [("tolerance", c_double), ("input", POINTER(Array)), ("heads", c_size_t),
                ("max_offset", c_size_t)]


class DiffReport(Structure):
    _fields_ = [("shapes_equal", c_int), ("rows_a", c_size_t), ("cols_a", c_size_t),
                ("rows_b", c_size_t), ("cols_b", c_size_t), ("compared", c_size_t),
                ("max_abs", c_double), ("mean_abs", c_double), ("max_rel", c_double),
                ("mean_rel", c_double), ("max_abs_row", c_int64), ("max_abs_channel", c_int64),
                ("ulp_histogram", c_size_t * ULP_BUCKETS), ("nonfinite_a", c_size_t),
                ("nonfinite_b", c_size_t), ("first_beyond_row", c_int64),
                ("first_beyond_channel", c_int64), ("divergence_onset", c_int64),
                ("tolerance", c_double), ("channel_max_abs", POINTER(c_double)),
                ("band_count", c_int), ("band_end", c_int64 * PRECISION_BANDS),
                ("band_max_abs", c_double * PRECISION_BANDS), ("rope", c_int),
                ("fit_a", SinusoidFit), ("fit_b", SinusoidFit), ("preset_a", c_int),
                ("preset_b", c_int), ("finding_count", c_int),
                ("findings", Finding * DIFF_MAX_FINDINGS), ("explained", c_int)]


class RopeIdentity(Structure):
    _fields_ = [("layout", c_int), ("has_cos", c_int), ("has_sin", c_int), ("rotary_dim", c_int32),
                ("rows", c_int64), ("offset", c_int64), ("magnitude", c_double), ("params", RopeParams),
                ("inv_freq", POINTER(c_double)), ("pair_factor", POINTER(c_double)),
                ("profile_residual", c_double), ("ramp_first", c_int32), ("ramp_last", c_int32),
                ("yarn_low", c_double), ("yarn_high", c_double), ("yarn_context_lo", c_double),
                ("yarn_context_hi", c_double), ("llama3_wave_lo", c_double), ("llama3_wave_hi", c_double),
                ("ntk_base", c_double), ("ntk_factor", c_double), ("grid", c_int), ("arith", c_int),
                ("max_ulp", c_int64 * ROPE_ARITHS), ("differ", c_size_t * ROPE_ARITHS), ("values", c_size_t),
                ("ambiguous", c_uint), ("switch_position", c_int64), ("long_offset", c_int64), ("long_pair_factor", POINTER(c_double)),
                ("long_magnitude", c_double), ("passthrough", c_int32)]


ROPE_MAX_DEPARTURES = 16
DEPARTURE_KIND = {1: "rotary_dim", 2: "dynamic_length", 3: "offset", 4: "magnitude", 5: "longrope_list",
                  6: "switch_scheme", 7: "switch_at", 8: "switch_factors", 9: "frequencies", 10: "imrope_still",
                  11: "imrope_residual", 12: "grid", 13: "unexplained"}


class RopeDeparture(Structure):
    _fields_ = [("kind", c_int), ("first", c_int32), ("last", c_int32), ("side", c_int32), ("reading", c_int32),
                ("sections", c_int32 * 3), ("position", c_int64), ("config_position", c_int64),
                ("got", c_double), ("want", c_double), ("worst", c_double), ("shows_at", c_double),
                ("alt", c_double * 3), ("max_ulp", c_int64), ("differ", c_size_t), ("arith", c_int)]


class RopeComparison(Structure):
    _fields_ = [("matches", c_int), ("bit_for_bit", c_int), ("arith", c_int),
                ("max_ulp", c_int64 * ROPE_ARITHS), ("differ", c_size_t * ROPE_ARITHS), ("rotary_dim", c_int32),
                ("magnitude", c_double), ("config", RopeParams), ("departure_count", c_int32),
                ("departures_dropped", c_int32), ("departures", RopeDeparture * ROPE_MAX_DEPARTURES)]


class RopeRotation(Structure):
    _fields_ = [("layout", c_int), ("head_dim", c_int32), ("rotary_offset", c_int32), ("rotary_dim", c_int32),
                ("rows", c_int64), ("heads", c_int64), ("max_norm_misfit", c_double),
                ("max_head_misfit", c_double), ("cos", Array), ("sin", Array)]


# Structs checked against the header by tests/test_abi.py: ctypes class -> C type name.
STRUCTS = {
    Error: "posenc_error", Positions: "posenc_positions", SinusoidParams: "posenc_sinusoid_params",
    Array: "posenc_array", RopeParams: "posenc_rope_params", RopeView: "posenc_rope_view",
    MropeSections: "posenc_mrope_sections", MropeSegment: "posenc_mrope_segment",
    T5Params: "posenc_t5_params", ExecTrace: "posenc_exec_trace", Exec: "posenc_exec",
    ConfigLayerType: "posenc_config_layer_type", ModelConfig: "posenc_model_config",
    SinusoidFit: "posenc_sinusoid_fit", HealthOptions: "posenc_health_options",
    Health: "posenc_health", PrecisionBand: "posenc_precision_band",
    PrecisionReport: "posenc_precision_report", Finding: "posenc_finding",
    DiffOptions: "posenc_diff_options", DiffReport: "posenc_diff_report",
    RopeIdentity: "posenc_rope_identity", RopeRotation: "posenc_rope_rotation",
    RopeDeparture: "posenc_rope_departure", RopeComparison: "posenc_rope_comparison",
}

# ---- function signatures -----------------------------------------------------
P = POINTER
_E = P(Error)
_st = c_int  # posenc_status
_SIGNATURES = {
    "posenc_version": (c_char_p, []),
    "posenc_strerror": (c_char_p, [c_int]),
    "posenc_sinusoid_params_default": (None, [P(SinusoidParams), c_int32]),
    "posenc_sinusoid_check": (_st, [P(SinusoidParams), P(c_int32), _E]),
    "posenc_sinusoid_frequencies_f64": (_st, [P(SinusoidParams), c_void_p, c_size_t, _E]),
    "posenc_sinusoid_table_exec": (_st, [P(SinusoidParams), P(Positions), c_int, c_void_p,
                                         c_size_t, P(Exec), _E]),
    "posenc_baseline_table": (_st, [c_int, c_int32, P(Positions), c_int, c_void_p, c_size_t, _E]),
    "posenc_freq_scale_table_f32": (_st, [P(SinusoidParams), c_double, P(Positions), c_void_p,
                                          c_size_t, _E]),
    "posenc_xl_relative_table": (_st, [c_int32, c_size_t, c_int64, c_int, c_int, c_void_p,
                                       c_size_t, _E]),
    "posenc_grid_axis_channels": (_st, [c_int, c_int32, c_int, P(c_int32), _E]),
    "posenc_grid_count": (_st, [c_int, P(c_size_t), c_int32, P(c_size_t), _E]),
    "posenc_grid_table": (_st, [c_int, P(c_size_t), c_int32, c_int, c_int, c_int, c_void_p,
                                c_size_t, _E]),
    "posenc_grid_positions": (_st, [c_int, P(c_size_t), c_void_p, c_size_t, _E]),
    "posenc_hybrid_table_f32": (_st, [c_void_p, c_size_t, c_int32, P(SinusoidParams), P(Positions),
                                      c_int, c_void_p, c_size_t, _E]),
    # RoPE
    "posenc_rope_params_default": (None, [P(RopeParams), c_int32]),
    "posenc_rope_check": (_st, [P(RopeParams), P(c_int32), _E]),
    "posenc_rope_frequencies": (_st, [P(RopeParams), c_int64, c_void_p, c_size_t, P(c_double), _E]),
    "posenc_rope_table_f32": (_st, [P(RopeParams), c_int64, P(Positions), c_int, c_void_p, c_void_p,
                                    c_size_t, _E]),
    "posenc_rope_table_f64": (_st, [P(RopeParams), c_int64, P(Positions), c_int, c_void_p, c_void_p,
                                    c_size_t, _E]),
    "posenc_rope_apply_exec": (_st, [P(RopeParams), c_int64, c_int, P(RopeView), c_void_p, c_int,
                                     c_int, c_void_p, c_size_t, P(Exec), _E]),
    "posenc_rope_apply_f32": (_st, [P(RopeParams), c_int64, c_int, P(RopeView), c_void_p, c_int, c_void_p,
                                    c_size_t, _E]),
    "posenc_rope_apply_f16": (_st, [P(RopeParams), c_int64, c_int, P(RopeView), c_void_p, c_int, c_void_p,
                                    c_size_t, _E]),
    "posenc_rope_apply_bf16": (_st, [P(RopeParams), c_int64, c_int, P(RopeView), c_void_p, c_int, c_void_p,
                                     c_size_t, _E]),
    "posenc_rope_shift_f32": (_st, [P(RopeParams), c_int64, c_int, P(RopeView), c_void_p, c_void_p,
                                    c_size_t, _E]),
    # multi-axis RoPE (M-RoPE)
    "posenc_mrope_pair_map": (_st, [P(RopeParams), P(MropeSections), c_void_p, c_void_p, c_size_t, _E]),
    "posenc_mrope_apply_f32": (_st, [P(RopeParams), P(MropeSections), c_int, P(RopeView), c_void_p, c_int,
                                     c_void_p, c_size_t, _E]),
    "posenc_mrope_position_ids": (_st, [P(MropeSegment), c_size_t, c_void_p, c_size_t, P(c_size_t), _E]),
    # which RoPE is this?
    "posenc_rope_identify": (_st, [P(Array), P(Array), c_int, P(RopeIdentity), _E]),
    "posenc_rope_identity_free": (None, [P(RopeIdentity)]),
    "posenc_rope_cache_residual": (_st, [P(Array), P(Array), c_int, c_int, c_int64, P(RopeParams), P(c_int64),
                                         P(c_size_t), _E]),
    "posenc_rope_rotation_cache": (_st, [P(Array), P(Array), P(RopeRotation), _E]),
    "posenc_rope_rotation_free": (None, [P(RopeRotation)]),
    "posenc_rope_identity_compare": (_st, [P(RopeIdentity), P(Array), P(Array), P(RopeParams), P(MropeSections),
                                           P(RopeComparison), _E]),
    "posenc_rope_departure_kind_name": (c_char_p, [c_int]),
    # config
    "posenc_config_parse_hf_json": (_st, [c_char_p, c_size_t, P(ModelConfig), _E]),
    "posenc_config_read": (_st, [c_char_p, c_size_t, P(ModelConfig), _E]),
    "posenc_model_config_free": (None, [P(ModelConfig)]),
    "posenc_rope_resolve": (_st, [P(RopeParams), c_uint, P(c_uint), _E]),
    # biases
    "posenc_alibi_slopes_f64": (_st, [c_int32, c_double, c_int32, c_int32, c_int, c_void_p, c_size_t,
                                      _E]),
    "posenc_alibi_slopes_f32": (_st, [c_int32, c_double, c_int32, c_int32, c_int, c_void_p, c_size_t,
                                      _E]),
    "posenc_alibi_bias_f32_exec": (_st, [c_void_p, c_int32, c_int, P(Positions), P(Positions),
                                         c_void_p, c_size_t, P(Exec), _E]),
    "posenc_alibi_key_positions_from_mask": (_st, [c_void_p, c_size_t, c_void_p, c_size_t, _E]),
    "posenc_t5_check": (_st, [P(T5Params), _E]),
    "posenc_t5_bucket_matrix_i64": (_st, [P(T5Params), P(Positions), P(Positions), c_void_p,
                                          c_size_t, _E]),
    "posenc_t5_bias_f32_exec": (_st, [P(T5Params), c_void_p, c_int32, P(Positions), P(Positions),
                                      c_void_p, c_size_t, P(Exec), _E]),
    "posenc_shaw_relative_indices_i32": (_st, [c_int32, P(Positions), P(Positions), c_void_p,
                                               c_size_t, _E]),
    "posenc_shaw_gather_f32": (_st, [c_void_p, c_size_t, c_int32, c_void_p, c_int32, c_void_p,
                                     c_size_t, _E]),
    # learned
    "posenc_learned_init_f32": (_st, [c_uint64, c_double, c_int64, c_size_t, c_int32, c_void_p,
                                      c_size_t, _E]),
    "posenc_learned_gather_f32": (_st, [c_void_p, c_size_t, c_int32, c_void_p, c_size_t, c_int,
                                        c_void_p, c_size_t, _E]),
    "posenc_learned_backward_f32": (_st, [c_void_p, c_void_p, c_size_t, c_int32, c_int, c_int64,
                                          c_void_p, c_size_t, _E]),
    "posenc_positions_from_input_ids": (_st, [c_void_p, c_void_p, c_size_t, c_size_t, c_int64,
                                              c_int64, c_void_p, c_size_t, _E]),
    "posenc_learned_resize_f32": (_st, [c_void_p, c_size_t, c_int32, c_size_t, c_void_p, c_size_t,
                                        c_size_t, _E]),
    # analysis
    "posenc_health_analyze": (_st, [P(Array), P(HealthOptions), P(Health), _E]),
    "posenc_health_free": (None, [P(Health)]),
    "posenc_sinusoid_fit_table": (_st, [P(Array), c_double, P(SinusoidFit), _E]),
    "posenc_sinusoid_fit_free": (None, [P(SinusoidFit)]),
    "posenc_precision_audit": (_st, [P(SinusoidParams), c_int, c_int64, P(PrecisionReport), _E]),
    "posenc_precision_report_free": (None, [P(PrecisionReport)]),
    "posenc_diff_tables": (_st, [P(Array), P(Array), P(DiffOptions), P(DiffReport), _E]),
    "posenc_diff_report_free": (None, [P(DiffReport)]),
    "posenc_sinusoid_fit_preset": (c_int, [P(SinusoidFit), c_int]),
    "posenc_array_check_finite": (_st, [P(Array), c_char_p, _E]),
    "posenc_angle_formation_name": (c_char_p, [c_int]),
    # kernels
    "posenc_threadpool_create": (_st, [c_int32, P(c_void_p), _E]),
    "posenc_threadpool_free": (None, [c_void_p]),
    "posenc_threadpool_size": (c_int32, [c_void_p]),
    "posenc_exec_default": (None, [P(Exec)]),
    "posenc_kernel_path_supported": (c_int, [c_int]),
}


def _checkout_root() -> Optional[str]:
    """The repository this package sits in (python/posenc -> root), when it is a checkout."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return root if os.path.exists(os.path.join(root, "include", "posenc.h")) else None


def expected_version() -> str:
    """The C library version this package was built for: _build_info.py (installed), else
    the checkout's include/posenc.h (the one place the version is written)."""
    try:
        from . import _build_info  # written by setup.py
        return str(_build_info.VERSION)
    except ImportError:
        pass
    root = _checkout_root()
    if root is not None:
        with open(os.path.join(root, "include", "posenc.h")) as f:
            found = re.search(r'^#define POSENC_VERSION_STRING "([^"]+)"', f.read(), re.M)
        if found:
            return found.group(1)
    raise ImportError("posenc: cannot tell which libposenc version this package needs: no "
                      "posenc/_build_info.py (install with pip install ./python) and no "
                      "include/posenc.h beside the package")


def _candidates(expected: str) -> List[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("POSENC_LIBRARY")
    if env:
        return [env]  # an explicit choice is never second-guessed
    found = [os.path.join(here, "libposenc.so")]
    root = _checkout_root()
    if root is not None:
        found.extend(sorted(glob.glob(os.path.join(root, "build", "libposenc.so"))))
        found.extend(sorted(glob.glob(os.path.join(root, "build*", "libposenc.so"))))
    system = ctypes.util.find_library("posenc")
    if system:
        found.append(system)
    found.append("libposenc.so." + ".".join(expected.split(".")[:2]))
    return list(dict.fromkeys(found))


def _load(expected: str) -> ctypes.CDLL:
    tried = []
    for path in _candidates(expected):
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (absent)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            tried.append("%s (%s)" % (path, exc))
            continue
        lib._posenc_path = path  # type: ignore[attr-defined]
        return lib
    raise ImportError("posenc: libposenc.so not found; install the package with pip install ./python "
                      "(it builds the library), build it (cmake --build build) or set "
                      "POSENC_LIBRARY=/path/to/libposenc.so. Tried: " + "; ".join(tried))


EXPECTED_VERSION: str = expected_version()
lib = _load(EXPECTED_VERSION)
LIBRARY_PATH: str = lib._posenc_path  # type: ignore[attr-defined]


def _check_abi(library: ctypes.CDLL, path: str, expected: str) -> None:
    """Refuse a library of another version (the ABI changes with every minor release before
    1.0; struct layouts are the package's) or one that lacks a function the package calls."""
    try:
        getter = library.posenc_version
    except AttributeError:
        raise ImportError("posenc: %s is not libposenc (no posenc_version)" % path) from None
    getter.restype = c_char_p
    getter.argtypes = []
    found = (getter() or b"").decode("ascii", "replace")
    if found != expected:
        raise ImportError("posenc: the library %s is version %s but this package needs %s; rebuild it "
                          "(pip install ./python, or cmake --build build) or point POSENC_LIBRARY at a "
                          "libposenc.so %s" % (path, found, expected, expected))
    missing = [name for name in _SIGNATURES if not hasattr(library, name)]
    if missing:
        raise ImportError("posenc: the library %s (version %s) lacks %s" % (path, found, ", ".join(missing)))


_check_abi(lib, LIBRARY_PATH, EXPECTED_VERSION)
MISSING: List[str] = []  # kept for callers of older versions: always empty once imported
for _name, (_restype, _argtypes) in _SIGNATURES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _restype
    _fn.argtypes = _argtypes


def version() -> str:
    """Version of the loaded libposenc (equal to posenc.__version__, checked at import)."""
    return lib.posenc_version().decode()


def ptr(array) -> Optional[int]:
    """Address of a NumPy array's data (None for None)."""
    return None if array is None else array.ctypes.data


__all__ = ["lib", "LIBRARY_PATH", "version", "ptr", "Error", "Positions", "SinusoidParams", "Array",
           "RopeParams", "RopeView", "T5Params", "ExecTrace", "Exec", "ConfigLayerType", "ModelConfig", "SinusoidFit",
           "HealthOptions", "Health", "PrecisionBand", "PrecisionReport", "Finding", "DiffOptions",
           "DiffReport", "RopeIdentity", "RopeRotation", "RopeDeparture", "RopeComparison", "c_float", "c_uint8", "c_uint16", "c_int32", "c_int64", "c_double",
           "c_size_t", "c_void_p"]
