"""posenc for Python: Transformer positional encodings, computed exactly, over libposenc.

    import posenc
    pe = posenc.sinusoid_table(50, 64)                       # [50, 64] float32
    cos, sin = posenc.rope_cos_sin(head_dim=128, positions=4096, base=500000)
    posenc.apply_rope_(q, k, positions=ids, layout="neox")  # NumPy, in place
    posenc.mrope_apply_(q, k, positions=thw, config="config.json", tensor_layout="bhsd")  # Qwen2/3-VL M-RoPE
    import posenc.torch                                      # torch tensors, autograd, torch.compile ops
    import posenc.hf                                         # Hugging Face drop-in (patch, apply_rotary_pos_emb)
    import posenc.nn, posenc.keras, posenc.lucidrains        # torch / Keras 3 layers; rotary_embedding_torch drop-in

Every function raises a posenc.Error subclass carrying the library's message,
before anything is written. See docs/python.md.
"""
from ._errors import (BufferTooSmallError, Error, FormatError, InvalidArgumentError, KeywordError, LimitError,
                      NonFiniteError, NullPointerError, OutOfMemoryError, OutOfRangeError, PosencIOError,
                      SizeOverflowError, UnsupportedError)
from ._lib import EXPECTED_VERSION as __version__  # include/posenc.h, checked against the library
from ._lib import LIBRARY_PATH, version
from .analysis import (DiffReport, Explanation, Finding, Health, LayerExplanation, PairExplanation,
                       PrecisionReport, SinusoidFit, analyze, check_finite, diff, explain, fit_sinusoid,
                       precision, report)
from .identify import RopeIdentity, Rotation, identify_rope
from .bias import (alibi_bias, alibi_key_positions_from_mask, alibi_slopes, shaw_gather, shaw_indices,
                   t5_bias, t5_bucket, t5_buckets)
from .learned import (learned_backward, learned_gather, learned_init, learned_resize,
                      positions_from_input_ids)
from .rope import (LayerType, ModelConfig, RopeFrequencies, RopeParams, ThreadPool, apply_rope_, load_config,
                   mrope_apply_, mrope_position_ids, rope_cos_sin, rope_frequencies)
from .config import Layer, Model, load_config  # noqa: F811  (layer by layer; replaces rope.load_config here)
from .tables import (baseline_table, bf16_to_f32, freq_scale_table, grid_positions, grid_table,
                     hybrid_table, sinusoid_frequencies, sinusoid_table, xl_relative_table)

__all__ = [
    "Error", "InvalidArgumentError", "KeywordError", "OutOfMemoryError", "BufferTooSmallError", "SizeOverflowError",
    "LimitError", "PosencIOError", "FormatError", "UnsupportedError", "OutOfRangeError", "NullPointerError",
    "NonFiniteError",
    "LIBRARY_PATH", "version",
    "sinusoid_table", "sinusoid_frequencies", "baseline_table", "xl_relative_table", "grid_table",
    "grid_positions", "hybrid_table", "freq_scale_table", "bf16_to_f32",
    "RopeParams", "ModelConfig", "LayerType", "RopeFrequencies", "ThreadPool", "load_config", "rope_frequencies",
    "rope_cos_sin", "apply_rope_", "mrope_apply_", "mrope_position_ids", "identify_rope", "RopeIdentity", "Rotation",
    "alibi_slopes", "alibi_bias", "alibi_key_positions_from_mask", "t5_buckets", "t5_bucket", "t5_bias",
    "shaw_indices", "shaw_gather",
    "learned_init", "learned_gather", "learned_backward", "positions_from_input_ids", "learned_resize",
    "check_finite", "analyze", "fit_sinusoid", "diff", "precision", "explain", "report", "Health", "SinusoidFit", "Finding",
    "DiffReport", "PrecisionReport", "Explanation", "LayerExplanation", "PairExplanation",
]
