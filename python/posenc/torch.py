"""PyTorch: RoPE in place on CPU tensors, an autograd Function, modules that replace a
Hugging Face rotary embedding, and HF's apply_rotary_pos_emb as a drop-in.

    import posenc.torch as pt
    pt.apply_rope_(q, k, positions=position_ids, layout="neox", tensor_layout="bhsd", base=500000)
    pt.mrope_apply_(q, k, positions=position_ids, config=cfg, tensor_layout="bhsd")  # Qwen2/3-VL M-RoPE
    y = pt.mrope_apply(q, positions=position_ids, config=cfg, tensor_layout="bhsd")  # the same, differentiable

Tensors: float32, float16 or bfloat16 on the CPU; [S, D]; [S, H, D] / [B, S, H, D] with
tensor_layout="bshd", [H, S, D] / [B, H, S, D] (HF's) with "bhsd": required for 3-D and
4-D tensors (no default: the shape cannot tell the sequence axis from the heads axis);
any non-negative strides with a contiguous last axis. The data pointer goes to C
(zero-copy); ctypes releases the GIL for the call. float64 (for gradcheck) is computed in
torch from the library's float64 cos/sin table, since libposenc has no float64 rotation.
Mode: "precise" by default everywhere (apply_rope_, apply_rope, Rotary, RotaryEmbedding);
mode="torch" reproduces HF's float32 cos/sin (patch_llama uses it).

Tracing: apply_rope, Rotary and RotaryEmbedding go through ops registered with
torch.library (posenc::rope, posenc::rope_cos_sin) while torch.jit.trace runs, so the
trace holds one op with the positions as an input. torch.compile: apply_rope_, apply_rope
and Rotary go through custom ops (posenc::rotate_, posenc::rotate) with fake kernels: no
graph break at posenc (docs/python.md, "torch.compile").
"""
from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
import torch as _torch

from . import rope as _rope
from ._common import integer, keywords_checked
from ._errors import InvalidArgumentError, UnsupportedError
from .rope import (ConfigLike, Layout, Mode, MropeKind, RopeParams, TensorLayout, ThreadPool, check_flags,
                   head_dim_of, resolve_params, tensor_layout_of)

# posenc's torch-compat mode computes cos/sin/exp as torch does: a torch built with MKL (every
# x86-64 PyPI wheel) runs them through MKL's VML, which libposenc calls from the library
# POSENC_TORCH_MKL names (include/posenc.h, POSENC_MODE_TORCH_COMPAT); set it to this torch's
# own libtorch_cpu.so unless the caller chose. The library reads it at its first torch-compat
# call, so a torch-compat call made before importing posenc.torch keeps SLEEF's route.
if "POSENC_TORCH_MKL" not in os.environ and _torch.backends.mkl.is_available():
    _lib_cpu = os.path.join(os.path.dirname(_torch.__file__), "lib", "libtorch_cpu.so")
    if os.path.exists(_lib_cpu):
        os.environ["POSENC_TORCH_MKL"] = _lib_cpu

# torch.jit.is_tracing() is a Python function (it asks is_scripting first); the C query is
# what it returns outside TorchScript, at a tenth of the cost on the per-call path
_is_tracing = getattr(_torch._C, "_is_tracing", _torch.jit.is_tracing)

_DTYPE_CODE = {_torch.float32: 0, _torch.float16: 2, _torch.bfloat16: 3}


def _target(x: Any, name: str, tensor_layout: str) -> "_rope.Target":
    if not isinstance(x, _torch.Tensor):
        raise UnsupportedError("%s must be a torch.Tensor, got %s" % (name, type(x).__name__), 8)
    if x.device.type != "cpu":
        raise UnsupportedError("%s is on device %s; posenc runs on the CPU (move it with .cpu())"
                               % (name, x.device), 8)
    code = _DTYPE_CODE.get(x.dtype)
    if code is None:
        raise UnsupportedError("%s: dtype must be float32, float16 or bfloat16, got %s%s"
                               % (name, x.dtype, " (use apply_rope for float64)"
                                  if x.dtype == _torch.float64 else ""), 8)
    if x.requires_grad and _torch.is_grad_enabled():
        raise InvalidArgumentError("%s requires grad: an in-place rotation would bypass autograd; "
                                   "use posenc.torch.apply_rope (differentiable) or torch.no_grad()" % name, 1)
    shape, strides = _rope._as_bshd(tuple(x.shape), tuple(x.stride()), tensor_layout, name)
    return _rope.Target(x.data_ptr(), code, shape, strides, name)


def _params(params: Optional[RopeParams], config: Optional[ConfigLike], head_dim: int,
            flags: dict, what: str) -> RopeParams:
    if params is not None and not flags and config is None:
        return params
    return resolve_params(params, config, head_dim, what=what, **flags)


def apply_rope_(q: _torch.Tensor, k: Optional[_torch.Tensor] = None, *, positions: Any = None,
                offset: Any = 0, layout: Optional[Layout] = None, tensor_layout: Optional[TensorLayout] = None,
                params: Optional[RopeParams] = None, config: Optional[ConfigLike] = None,
                seq_len: Optional[int] = None, inverse: bool = False, threads: Optional[int] = None,
                pool: Optional[ThreadPool] = None, **flags: Any) -> None:
    """Rotate q (and k) in place. Shapes/dtypes: see the module docstring.

    positions: int64 position ids [S] or [B, S] (a tensor or array); else offset + 0..S-1
    (offset: int, or one per batch row). layout: "neox" (= "half", HF rotate_half; default,
    or the config's) or "gptj" (= "interleaved"). params, config (path, dict, transformers
    config) or flags (base=, scaling=, factor=, rotary_dim=, partial_rotary_factor=,
    mode="torch" for HF's float32 arithmetic bit for bit, ...) give the RoPE; head_dim is the
    last axis. seq_len for DYNAMIC/LONGROPE defaults to max(position) + 1 (HF's rule).
    Errors (posenc.Error subclasses) are raised before anything is written.
    """
    if flags:
        check_flags(flags, allow_head_dim=True)
    if _compiling():  # (first: dynamo cannot trace torch._C._is_tracing)
        _compiled_rope_(q, k, positions, offset, layout, tensor_layout, params, config, seq_len, inverse,
                        threads, pool, flags)
        return
    if _is_tracing():
        warnings.warn("posenc.torch.apply_rope_ writes through the data pointer, which torch.jit.trace "
                      "cannot record (the trace would not rotate at all): trace posenc.torch.apply_rope or "
                      "Rotary instead", _torch.jit.TracerWarning, stacklevel=2)
    tq = _target(q, "q", tensor_layout)
    targets = [tq]
    if k is not None:
        targets.append(_target(k, "k", tensor_layout))
    p = params if (params is not None and not flags and config is None) else \
        resolve_params(params, config, head_dim_of(tq, flags), what="apply_rope_", **flags)
    _rope.apply_targets_(targets, p, layout, positions, offset, seq_len, inverse, threads, pool)


def mrope_apply_(q: _torch.Tensor, k: Optional[_torch.Tensor] = None, *, positions: Any = None,
                 sections: Optional[Sequence[int]] = None, kind: Optional[MropeKind] = None,
                 layout: Optional[Layout] = None, tensor_layout: Optional[TensorLayout] = None,
                 params: Optional[RopeParams] = None, config: Optional[ConfigLike] = None,
                 inverse: bool = False, **flags: Any) -> None:
    """Multi-axis RoPE (Qwen2-VL sections, Qwen3-VL interleaved, axial) on q (and k), in place:
    posenc.mrope_apply_ for CPU float32 tensors (float16/bfloat16 are refused: the C rotation
    is float32 only). positions: int ids [axes, S] or [axes, B, S] (HF's position_ids
    [3, B, S], a tensor or an array); sections / kind default to the config's. Every other
    argument and check as posenc.torch.apply_rope_ (no offset, seq_len, threads or pool)."""
    if _is_tracing():
        warnings.warn("posenc.torch.mrope_apply_ writes through the data pointer, which torch.jit.trace "
                      "cannot record (the trace would not rotate at all)", _torch.jit.TracerWarning, stacklevel=2)
    targets = [_mrope_target(q, "q", tensor_layout)]
    if k is not None:
        if isinstance(k, _torch.Tensor) and not k.dtype.is_floating_point and positions is None:
            raise InvalidArgumentError("k is an integer tensor: positions are keyword-only "
                                       "(mrope_apply_(q, positions=ids))", 1)
        targets.append(_mrope_target(k, "k", tensor_layout))
    p, sec = _rope.resolve_mrope(params, config, head_dim_of(targets[0], flags), sections, kind, flags)
    _rope.mrope_targets_(targets, p, sec, layout, positions, inverse)


class MropeFunction(_torch.autograd.Function):
    """y = M-RoPE(x), differentiable: each pair turns by its axis' angle, so backward is the
    transposed rotation A R^T g (A = attention factor), run as the C inverse rotation times
    A^2, as RotaryFunction does. float32 only (posenc_mrope_apply_f32)."""

    @staticmethod
    def forward(ctx, x, p, sections, layout, positions, tensor_layout):  # type: ignore[override]
        ctx.p, ctx.sections, ctx.layout, ctx.positions, ctx.tensor_layout = (p, sections, layout, positions,
                                                                             tensor_layout)
        y = x.detach().clone(memory_format=_torch.contiguous_format)
        with _torch.no_grad():
            _rope.mrope_targets_([_mrope_target(y, "x", tensor_layout)], p, sections, layout, positions, False)
        return y

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        gx = grad.detach().clone(memory_format=_torch.contiguous_format)
        with _torch.no_grad():
            _rope.mrope_targets_([_mrope_target(gx, "grad", ctx.tensor_layout)], ctx.p, ctx.sections, ctx.layout,
                                 ctx.positions, True)
            att = _rope.rope_frequencies(ctx.p).attention_factor  # M-RoPE: the trained length's
            if att != 1.0:  # the C inverse divides by A; the transpose multiplies by A
                gx[..., :ctx.p.check()] *= att * att
        return gx, None, None, None, None, None


def mrope_apply(x: _torch.Tensor, *, positions: Any = None, sections: Optional[Sequence[int]] = None,
                kind: Optional[MropeKind] = None, layout: Optional[Layout] = None,
                tensor_layout: Optional[TensorLayout] = None, params: Optional[RopeParams] = None,
                config: Optional[ConfigLike] = None, **flags: Any) -> _torch.Tensor:
    """Differentiable multi-axis RoPE (out of place): returns M-RoPE(x), same shape, float32 CPU
    tensors (x may require grad). Arguments and checks as mrope_apply_ (positions [axes, S] or
    [axes, B, S], sections / kind from the config by default); backward rotates the gradient
    back (the transposed rotation)."""
    if not isinstance(x, _torch.Tensor):
        raise UnsupportedError("x must be a torch.Tensor, got %s" % type(x).__name__, 8)
    if x.dtype != _torch.float32:
        raise UnsupportedError("x: multi-axis RoPE rotates float32 only (posenc_mrope_apply_f32), got %s" % x.dtype, 8)
    if _is_tracing():
        warnings.warn("posenc.torch.mrope_apply runs the C rotation outside torch.jit.trace's view (the trace "
                      "would hold its result as a constant)", _torch.jit.TracerWarning, stacklevel=2)
    tl = tensor_layout_of(tensor_layout, x.dim(), "x")
    p, sec = _rope.resolve_mrope(params, config, head_dim_of(_mrope_target(x.detach(), "x", tl), flags), sections,
                                 kind, flags)
    # converted once for forward and backward; None is refused by mrope_positions, by name
    pos = None if positions is None else _rope.integer_ids(positions)
    return MropeFunction.apply(x, p, sec, layout, pos, tl)


def _mrope_target(x: Any, name: str, tensor_layout: Any) -> "_rope.Target":
    if isinstance(x, _torch.Tensor) and x.dtype != _torch.float32:
        raise UnsupportedError("%s: multi-axis RoPE rotates float32 only (posenc_mrope_apply_f32), got %s"
                               % (name, x.dtype), 8)
    return _target(x, name, tensor_layout)


# ---- float64: the library's f64 cos/sin, rotation in torch ---------------------------

def _cos_sin_f64(p: RopeParams, pos: np.ndarray, seq_len: int) -> Tuple[_torch.Tensor, _torch.Tensor, int]:
    cos, sin = _rope.rope_cos_sin(p, pos.reshape(-1), seq_len=seq_len, dtype="f64")
    pairs = cos.shape[1]
    shape = pos.shape + (pairs,)
    return _torch.from_numpy(cos.reshape(shape)), _torch.from_numpy(sin.reshape(shape)), pairs


def _rotate_f64(x: _torch.Tensor, p: RopeParams, layout: str, pos: np.ndarray, seq_len: int,
                tensor_layout: str, transpose: bool) -> _torch.Tensor:
    """y = R x (or R^T x) in float64 with the library's float64 cos/sin (attention factor folded)."""
    tensor_layout = tensor_layout_of(tensor_layout, x.dim(), "x")
    cos, sin, pairs = _cos_sin_f64(p, pos, seq_len)
    # broadcast [S, K] / [B, S, K] over the heads axis
    if x.dim() == 2:
        pass
    elif x.dim() == 3:
        cos, sin = (cos.unsqueeze(-2), sin.unsqueeze(-2)) if tensor_layout == "bshd" else (cos, sin)
    else:
        axis = -2 if tensor_layout == "bshd" else -3
        cos, sin = cos.unsqueeze(axis), sin.unsqueeze(axis)
    if transpose:
        sin = -sin
    r = 2 * pairs
    if layout == "half":
        a, b = x[..., :pairs], x[..., pairs:r]
        ya, yb = a * cos - b * sin, b * cos + a * sin
        rotated = _torch.cat([ya, yb], dim=-1)
    else:
        a, b = x[..., 0:r:2], x[..., 1:r:2]
        ya, yb = a * cos - b * sin, b * cos + a * sin
        rotated = _torch.stack([ya, yb], dim=-1).flatten(-2)
    return _torch.cat([rotated, x[..., r:]], dim=-1)


def _positions_array(positions: Any, offset: Any, x: _torch.Tensor, tensor_layout: str) -> np.ndarray:
    tensor_layout = tensor_layout_of(tensor_layout, x.dim(), "x")
    if x.dim() == 2:
        b_n, s_n = 1, x.shape[0]
    elif x.dim() == 3:
        b_n, s_n = 1, (x.shape[0] if tensor_layout == "bshd" else x.shape[1])
    else:
        b_n, s_n = x.shape[0], (x.shape[1] if tensor_layout == "bshd" else x.shape[2])
    pos, _ = _rope._positions_for(positions, offset, b_n, s_n)
    if x.dim() < 4 and pos.ndim == 2:
        pos = pos[0]
    return pos


class RotaryFunction(_torch.autograd.Function):
    """y = RoPE(x), differentiable: backward is the transposed rotation R^T g = A R(-angle) g
    (A = attention factor). float32/16/bf16 run in C (forward on a copy, backward through
    the C inverse rotation times A^2); float64 runs in torch on the library's f64 cos/sin."""

    @staticmethod
    def forward(ctx, x, p, layout, positions, seq_len, tensor_layout):  # type: ignore[override]
        ctx.p, ctx.layout, ctx.positions, ctx.seq_len, ctx.tensor_layout = (p, layout, positions, seq_len,
                                                                           tensor_layout)
        if x.dtype == _torch.float64:
            return _rotate_f64(x, p, layout, positions, seq_len, tensor_layout, transpose=False)
        y = x.detach().clone()
        with _torch.no_grad():
            apply_rope_(y, positions=positions, layout=layout, tensor_layout=tensor_layout, params=p,
                        seq_len=seq_len)
        return y

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        p, layout, positions, seq_len, tl = ctx.p, ctx.layout, ctx.positions, ctx.seq_len, ctx.tensor_layout
        if grad.dtype == _torch.float64:
            gx = _rotate_f64(grad, p, layout, positions, seq_len, tl, transpose=True)
        else:
            gx = grad.detach().clone(memory_format=_torch.contiguous_format)
            with _torch.no_grad():
                apply_rope_(gx, positions=positions, layout=layout, tensor_layout=tl, params=p,
                            seq_len=seq_len, inverse=True)
                att = _rope.rope_frequencies(p, seq_len=seq_len).attention_factor
                if att != 1.0:  # the C inverse divides by A; the transpose multiplies by A
                    r = p.check()
                    gx[..., :r] *= att * att
        return gx, None, None, None, None, None


def _layout_name(layout: Optional[str], p: RopeParams) -> str:
    name = {"neox": "half", "half": "half", "gptj": "interleaved",
            "interleaved": "interleaved"}.get(layout or p.layout or "half")  # type: ignore[arg-type]
    if name is None:
        raise InvalidArgumentError("layout must be neox/half or gptj/interleaved, got %r" % (layout,), 1)
    return name


def apply_rope(x: _torch.Tensor, *, positions: Any = None, offset: Any = 0, layout: Optional[Layout] = None,
               tensor_layout: Optional[TensorLayout] = None, params: Optional[RopeParams] = None,
               config: Optional[ConfigLike] = None, seq_len: Optional[int] = None,
               **flags: Any) -> _torch.Tensor:
    """Differentiable RoPE (out of place): returns RoPE(x), same shape and dtype (float64 too).
    Arguments as apply_rope_ (tensor_layout required for 3-D/4-D x)."""
    if flags:
        check_flags(flags, allow_head_dim=True)
    if not isinstance(x, _torch.Tensor):
        raise UnsupportedError("x must be a torch.Tensor, got %s" % type(x).__name__, 8)
    tl = tensor_layout_of(tensor_layout, x.dim(), "x")
    if "head_dim" in flags:
        given = integer(flags.pop("head_dim"), "head_dim")
        if given != x.shape[-1]:
            raise InvalidArgumentError("head_dim=%d but x's last axis is %d" % (given, x.shape[-1]), 1)
    p = _params(params, config, x.shape[-1], flags, "apply_rope")
    layout_name = _layout_name(layout, p)
    if _compiling():  # (first: dynamo cannot trace torch._C._is_tracing)
        return _torch.ops.posenc.rotate(x, _compiled_positions(positions), _compiled_offset(offset),
                                        _params_json(p), layout_name, tl,
                                        -1 if seq_len is None else integer(seq_len, "seq_len"), False)
    if _is_tracing():
        return _traced_rope(x, positions, offset, p, layout_name, tl, seq_len)
    pos = _positions_array(positions, offset, x, tl)
    if seq_len is None:
        seq_len = _rope.checked_seq_len(max(int(pos.max()) + 1, 0), "positions") if pos.size else 0
    return RotaryFunction.apply(x, p, layout_name, pos, integer(seq_len, "seq_len"), tl)


# ---- torch.library ops: what torch.jit.trace records ------------------------------------

def _params_json(p: RopeParams) -> str:
    """RopeParams as the ops' string argument (a trace, or a compiled graph, stores it as a
    constant), cached on the (frozen) params object."""
    text = p.__dict__.get("_json")
    return text if text is not None else _params_json_new(p)


def _json_of(p: RopeParams) -> str:
    d = {f: getattr(p, f) for f in p.__dataclass_fields__}
    text = json.dumps({k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}, sort_keys=True)
    object.__setattr__(p, "_json", text)
    return text


# torch.compile cannot trace json.dumps (a graph break); a frozen RopeParams' JSON is a constant
# of the object, so dynamo runs this once per params object and guards on that object. The mark
# is what torch.compiler.assume_constant_result sets; calling that imports torch._dynamo, which
# creates its cache folder under the temporary folder at import: importing posenc.torch must not.
_json_of._dynamo_marked_constant = True  # type: ignore[attr-defined]
_params_json_new = _json_of


_PARSED: Dict[str, RopeParams] = {}


def _params_from_json(text: str) -> RopeParams:
    p = _PARSED.get(text)
    if p is None:
        p = RopeParams(**json.loads(text))
        if len(_PARSED) < 256:
            _PARSED[text] = p
    return p


def _op_rope(x: _torch.Tensor, positions: Optional[_torch.Tensor], offset: int, params: str, layout: str,
             tensor_layout: str, seq_len: int) -> _torch.Tensor:
    p = _params_from_json(params)
    pos = _positions_array(positions, offset, x, tensor_layout)
    if seq_len < 0:  # HF's rule, evaluated on this call's positions (not the traced ones)
        seq_len = _rope.checked_seq_len(max(int(pos.max()) + 1, 0), "positions") if pos.size else 0
    return RotaryFunction.apply(x, p, layout, pos, seq_len, tensor_layout)


def _op_cos_sin(position_ids: _torch.Tensor, params: str) -> Tuple[_torch.Tensor, _torch.Tensor]:
    return _cos_sin_tables(_params_from_json(params), position_ids)


def _register_ops() -> Any:
    """posenc::rope and posenc::rope_cos_sin through torch.library (torch >= 1.13), or None."""
    library = getattr(_torch, "library", None)
    if library is None or not hasattr(library, "Library"):
        return None
    try:
        lib = library.Library("posenc", "DEF")
        lib.define("rope(Tensor x, Tensor? positions, int offset, str params, str layout, str tensor_layout, "
                   "int seq_len) -> Tensor")
        lib.define("rope_cos_sin(Tensor position_ids, str params) -> (Tensor, Tensor)")
        for key in ("CPU", "Autograd"):  # Autograd: RotaryFunction records the backward itself
            lib.impl("rope", _op_rope, key)
        lib.impl("rope_cos_sin", _op_cos_sin, "CPU")
        return lib
    except Exception as exc:  # e.g. a second copy of this module in one process
        warnings.warn("posenc: torch.library registration failed (%s); torch.jit.trace will bake positions "
                      "into the graph" % exc)
        return None


_LIBRARY = _register_ops()


# ---- torch.compile: custom ops (torch.library.custom_op) --------------------------------
# Dynamo cannot trace a call that writes through data_ptr(): without these ops every posenc
# call inside a compiled function is a graph break (and fullgraph=True fails). Under
# torch.compiler.is_compiling(), apply_rope_ / apply_rope / Rotary call
#   posenc::rotate_(q, k?, ...)  in place (mutates_args q, k), and
#   posenc::rotate(x, ...)       out of place, differentiable (register_autograd: backward is
#                                the same op with transpose flipped, R^T g),
# with fake kernels that only describe the outputs, so the compiled graph holds one opaque
# node per call whose kernel is the same C code eager runs (the same bits).

# (called on every eager call: the function itself, no wrapper; a flag read, ~0.2 us)
_compiling = getattr(getattr(_torch, "compiler", None), "is_compiling", lambda: False)


def _compiled_positions(positions: Any) -> Optional[_torch.Tensor]:
    """positions as the ops take them: None or an integer tensor (a list/array becomes one)."""
    if positions is None or isinstance(positions, _torch.Tensor):
        return positions
    return _torch.as_tensor(np.asarray(positions, dtype=np.int64))


def _compiled_offset(offset: Any) -> int:
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise InvalidArgumentError("offset: under torch.compile posenc takes one int offset, got %s; pass "
                                   "per-row positions as a tensor (positions=) instead" % type(offset).__name__, 1)
    return offset


def _compiled_check(x: Any, name: str) -> None:
    """_target's checks that need no data pointer (the op's kernel runs _target itself)."""
    if not isinstance(x, _torch.Tensor):
        raise UnsupportedError("%s must be a torch.Tensor, got %s" % (name, type(x).__name__), 8)
    if x.requires_grad and _torch.is_grad_enabled():
        raise InvalidArgumentError("%s requires grad: an in-place rotation would bypass autograd; "
                                   "use posenc.torch.apply_rope (differentiable) or torch.no_grad()" % name, 1)


def _compiled_rope_(q: Any, k: Any, positions: Any, offset: Any, layout: Any, tensor_layout: Any,
                    params: Optional[RopeParams], config: Any, seq_len: Any, inverse: bool, threads: Any,
                    pool: Any, flags: Dict[str, Any]) -> None:
    if _CUSTOM_OPS is None:
        raise UnsupportedError("posenc.torch.apply_rope_ under torch.compile needs torch.library.custom_op "
                               "(torch >= 2.4); this torch is %s" % _torch.__version__, 8)
    if threads is not None or pool is not None:
        raise InvalidArgumentError("threads= / pool= are not taken under torch.compile (the op runs on the "
                                   "calling thread)", 1)
    _compiled_check(q, "q")
    if k is not None:
        _compiled_check(k, "k")
    if params is None or flags or config is not None:
        if "head_dim" in flags:
            given = integer(flags.pop("head_dim"), "head_dim")
            if given != q.shape[-1]:
                raise InvalidArgumentError("head_dim=%d but q's last axis is %d" % (given, q.shape[-1]), 1)
        params = resolve_params(params, config, q.shape[-1], what="apply_rope_", **flags)
    tl = tensor_layout_of(tensor_layout, q.dim(), "q")
    _torch.ops.posenc.rotate_(q, k, _compiled_positions(positions), _compiled_offset(offset), _params_json(params),
                              layout or "", tl, -1 if seq_len is None else integer(seq_len, "seq_len"),
                              bool(inverse))


def _rotate_kernel(x: _torch.Tensor, positions: Optional[_torch.Tensor], offset: int, params: str, layout: str,
                   tensor_layout: str, seq_len: int, transpose: bool) -> _torch.Tensor:
    """posenc::rotate's kernel: R x (transpose: R^T x = A^2 R^-1 x), a new contiguous tensor."""
    p = _params_from_json(params)
    pos = _positions_array(positions, offset, x, tensor_layout)
    if seq_len < 0:  # HF's rule, on this call's positions
        seq_len = _rope.checked_seq_len(max(int(pos.max()) + 1, 0), "positions") if pos.size else 0
    if x.dtype == _torch.float64:
        return _rotate_f64(x, p, layout, pos, seq_len, tensor_layout, transpose=transpose).contiguous()
    y = x.detach().clone(memory_format=_torch.contiguous_format)
    with _torch.no_grad():
        apply_rope_(y, positions=pos, layout=layout, tensor_layout=tensor_layout, params=p, seq_len=seq_len,
                    inverse=transpose)
        if transpose:
            att = _rope.rope_frequencies(p, seq_len=seq_len).attention_factor
            if att != 1.0:  # the C inverse divides by A; the transpose multiplies by A
                y[..., :p.check()] *= att * att
    return y


def _register_custom_ops() -> Any:
    custom_op = getattr(getattr(_torch, "library", None), "custom_op", None)
    if custom_op is None:  # torch < 2.4: no torch.compile support for posenc (eager is unchanged)
        return None
    Tensor = _torch.Tensor

    def rotate_(q: Tensor, k: Optional[Tensor], positions: Optional[Tensor], offset: int, params: str,
                layout: str, tensor_layout: str, seq_len: int, inverse: bool) -> None:
        apply_rope_(q, k, positions=positions, offset=offset, params=_params_from_json(params),
                    layout=layout or None, tensor_layout=tensor_layout, seq_len=None if seq_len < 0 else seq_len,
                    inverse=inverse)

    def rotate(x: Tensor, positions: Optional[Tensor], offset: int, params: str, layout: str,
               tensor_layout: str, seq_len: int, transpose: bool) -> Tensor:
        return _rotate_kernel(x, positions, offset, params, layout, tensor_layout, seq_len, transpose)

    # annotations as real types (this module's "from __future__ import annotations" makes them
    # strings, and custom_op reads the schema from them)
    hints = {"q": Tensor, "k": Optional[Tensor], "x": Tensor, "positions": Optional[Tensor], "offset": int,
             "params": str, "layout": str, "tensor_layout": str, "seq_len": int, "inverse": bool,
             "transpose": bool}
    rotate_.__annotations__ = {n: hints[n] for n in rotate_.__code__.co_varnames[:9]}
    rotate_.__annotations__["return"] = None
    rotate.__annotations__ = {n: hints[n] for n in rotate.__code__.co_varnames[:8]}
    rotate.__annotations__["return"] = Tensor

    op_ = custom_op("posenc::rotate_", rotate_, mutates_args=("q", "k"))
    op = custom_op("posenc::rotate", rotate, mutates_args=())

    @op_.register_fake
    def _(q, k, positions, offset, params, layout, tensor_layout, seq_len, inverse):  # type: ignore[no-untyped-def]
        return None

    @op.register_fake
    def _(x, positions, offset, params, layout, tensor_layout, seq_len, transpose):  # type: ignore[no-untyped-def]
        return x.new_empty(x.shape)  # contiguous, as the kernel's result

    def setup_context(ctx, inputs, output):  # type: ignore[no-untyped-def]
        ctx.save_for_backward(inputs[1])  # the positions (None or an integer tensor)
        ctx.args = inputs[2:]

    def backward(ctx, grad):  # type: ignore[no-untyped-def]
        positions, = ctx.saved_tensors
        offset, params, layout, tensor_layout, seq_len, transpose = ctx.args
        g = _torch.ops.posenc.rotate(grad.contiguous(), positions, offset, params, layout, tensor_layout, seq_len,
                                     not transpose)
        return g, None, None, None, None, None, None, None

    op.register_autograd(backward, setup_context=setup_context)
    return op_, op


_CUSTOM_OPS = _register_custom_ops()


def _register_cos_sin_fake() -> None:
    """posenc::rope_cos_sin (RotaryEmbedding's precise-mode tables) under torch.compile: the
    shapes of its two float32 [*ids.shape, R] results."""
    register_fake = getattr(getattr(_torch, "library", None), "register_fake", None)
    if register_fake is None or _LIBRARY is None:
        return

    def fake(position_ids: _torch.Tensor, params: str) -> Tuple[_torch.Tensor, _torch.Tensor]:
        r = _params_from_json(params).check()
        shape = tuple(position_ids.shape) + (r,)
        return position_ids.new_empty(shape, dtype=_torch.float32), position_ids.new_empty(shape, dtype=_torch.float32)

    register_fake("posenc::rope_cos_sin", fake, lib=_LIBRARY)


_register_cos_sin_fake()


def _traced_rope(x: _torch.Tensor, positions: Any, offset: Any, p: RopeParams, layout: str, tensor_layout: str,
                 seq_len: Optional[int]) -> _torch.Tensor:
    if _LIBRARY is None or not (positions is None or isinstance(positions, _torch.Tensor)):
        warnings.warn("posenc.torch.apply_rope: the positions are %s, so torch.jit.trace stores them as "
                      "constants: the trace rotates by these positions whatever it is given later; pass "
                      "them as a tensor" % ("not a tensor" if _LIBRARY is not None else "traced without "
                                            "torch.library ops"), _torch.jit.TracerWarning, stacklevel=3)
        pos = _positions_array(positions, offset, x, tensor_layout)
        n = _rope.checked_seq_len(max(int(pos.max()) + 1, 0), "positions") if pos.size else 0
        return RotaryFunction.apply(x, p, layout, pos, n if seq_len is None else seq_len, tensor_layout)
    if type(offset) is not int:
        offset = integer(offset, "offset")
    return _torch.ops.posenc.rope(x, positions, offset, _params_json(p), layout, tensor_layout,
                                  -1 if seq_len is None else integer(seq_len, "seq_len"))


def _cos_sin_tables(p: RopeParams, position_ids: Any) -> Tuple[_torch.Tensor, _torch.Tensor]:
    """HF's cos/sin [*ids.shape, R] float32 (duplicated halves, attention factor folded)."""
    cos, sin, _ = _cos_sin_ids(p, position_ids)
    return cos, sin


def _cos_sin_ids(p: RopeParams, position_ids: Any) -> Tuple[_torch.Tensor, _torch.Tensor, np.ndarray]:
    if isinstance(position_ids, _torch.Tensor):
        if position_ids.dtype.is_floating_point or position_ids.dtype == _torch.bool:
            raise UnsupportedError("position_ids must be integers, got dtype %s" % position_ids.dtype, 8)
        ids = position_ids.detach().cpu().numpy().astype(np.int64)
    else:
        ids = np.asarray(position_ids)
        if ids.dtype.kind not in "iu":
            raise UnsupportedError("position_ids must be integers, got dtype %s" % ids.dtype, 8)
        ids = _rope.int64_ids(ids, "position_ids")
    seq_len = _rope.checked_seq_len(int(ids.max()) + 1, "position_ids") if ids.size else 0
    cos, sin = _rope.rope_cos_sin(p, ids.reshape(-1), seq_len=seq_len, duplicate="half")
    shape = tuple(ids.shape) + (cos.shape[1],)
    return _torch.from_numpy(cos.reshape(shape)), _torch.from_numpy(sin.reshape(shape)), ids


class Rotary(_torch.nn.Module):
    """Applies RoPE to q and k (differentiable, C kernels for f32/f16/bf16).

    forward(q, k, position_ids=None) -> (q_rot, k_rot); tensor_layout is required: "bhsd" for
    HF's [B, H, S, D] (after the head transpose), "bshd" for [B, S, H, D]; position_ids [B, S]
    or [S] (default 0..S-1). mode "precise" by default, as everywhere ("torch": HF's float32)."""

    def __init__(self, config: Optional[ConfigLike] = None, *, tensor_layout: TensorLayout,
                 params: Optional[RopeParams] = None, layout: Optional[Layout] = None,
                 head_dim: Optional[int] = None, **flags: Any):
        super().__init__()
        self.params = resolve_params(params, config, head_dim, what="Rotary", **flags)
        self.params.check()
        self.layout = layout
        self.tensor_layout = tensor_layout_of(tensor_layout, 4, "q")

    def forward(self, q: _torch.Tensor, k: _torch.Tensor,
                position_ids: Optional[_torch.Tensor] = None) -> Tuple[_torch.Tensor, _torch.Tensor]:
        kw = dict(positions=position_ids, layout=self.layout, tensor_layout=self.tensor_layout,
                  params=self.params)
        return apply_rope(q, **kw), apply_rope(k, **kw)

    def extra_repr(self) -> str:
        return "tensor_layout=%r, layout=%r, params=%r" % (self.tensor_layout, self.layout or self.params.layout
                                                           or "half", self.params)


class RotaryEmbedding(_torch.nn.Module):
    """Drop-in for HF's LlamaRotaryEmbedding: forward(x, position_ids) -> (cos, sin), each
    [B, S, R] in x.dtype, attention scaling folded in, duplicated for rotate_half
    ([c_0..c_{K-1}, c_0..c_{K-1}]; duplicate=False gives [B, S, K], as gpt-oss's).

    mode "torch" is the default here (a class offered as HF's replacement gives HF's bits):
    the frequencies and attention factor are posenc's (C, HF's float32 chain, for the
    sequence's length under dynamic NTK / LongRoPE), the cos/sin HF's own torch expression
    on them (float32 matmul, cat, cos/sin times the factor, .to(x.dtype)), so the values are
    the running torch's bits whatever its cos/sin kernel (torch 2.13's pip wheel is not the
    SLEEF u10 that posenc's C torch-compat mode reproduces). mode="precise" gives posenc's
    <= 1 ULP C tables. float32 CPU outputs carry a tag that lets apply_rotary_pos_emb rotate
    in C when the C kernel's cos/sin are these very bits (checked, never assumed)."""

    def __init__(self, config: Optional[ConfigLike] = None, device: Any = None, *,
                 params: Optional[RopeParams] = None, head_dim: Optional[int] = None,
                 mode: Optional[Mode] = None, duplicate: bool = True, **flags: Any):
        super().__init__()
        if mode is not None:
            flags["mode"] = mode
        elif params is None:
            flags["mode"] = "torch"  # HF's bits by default
        self.params = resolve_params(params, config, head_dim, **flags)
        freqs = _rope.rope_frequencies(self.params)
        self.attention_scaling = freqs.attention_factor
        self.duplicate = bool(duplicate)
        self._torch_mode = self.params.mode in ("torch", "torch_compat")
        # dynamic NTK and LongRoPE (by sequence length) change the frequencies with the length
        self._by_seq_len = self.params.scaling in ("dynamic", "longrope")
        # what apply_rotary_pos_emb's C path needs (every channel rotated, no scaling), once
        self._whole_head_unscaled = (self.params.check() == self.params.head_dim and freqs.attention_factor == 1.0)
        self.register_buffer("inv_freq", _torch.tensor(freqs.inv_freq, dtype=_torch.float32, device=device),
                             persistent=False)

    def frequencies(self, seq_len: int) -> Tuple[_torch.Tensor, float]:
        """(inv_freq float32 [K], attention factor) for a sequence of seq_len tokens."""
        if not self._by_seq_len:
            return self.inv_freq, self.attention_scaling
        f = _rope.rope_frequencies(self.params, seq_len=seq_len)
        return _torch.tensor(f.inv_freq, dtype=_torch.float32, device=self.inv_freq.device), f.attention_factor

    @_torch.no_grad()
    def forward(self, x: _torch.Tensor, position_ids: _torch.Tensor) -> Tuple[_torch.Tensor, _torch.Tensor]:
        if _compiling():  # torch.compile: plain torch ops, or the C table through its op; no tag
            if self._torch_mode:
                return self._hf_expression(x, position_ids)
            cos, sin = _torch.ops.posenc.rope_cos_sin(position_ids, _params_json(self.params))
            if not self.duplicate:
                cos, sin = cos[..., :cos.shape[-1] // 2], sin[..., :sin.shape[-1] // 2]
            return cos.to(device=x.device, dtype=x.dtype), sin.to(device=x.device, dtype=x.dtype)
        if _is_tracing() and _LIBRARY is not None and not self._torch_mode and self.duplicate:
            cos, sin = _torch.ops.posenc.rope_cos_sin(position_ids, _params_json(self.params))
            return cos.to(device=x.device, dtype=x.dtype), sin.to(device=x.device, dtype=x.dtype)
        if self._torch_mode:
            cos_t, sin_t = self._hf_expression(x, position_ids)
            ids = None
        else:
            cos, sin, ids = _cos_sin_ids(self.params, position_ids)
            if not self.duplicate:
                cos, sin = cos[..., :cos.shape[-1] // 2], sin[..., :sin.shape[-1] // 2]
            cos_t = cos.to(device=x.device, dtype=x.dtype)
            sin_t = sin.to(device=x.device, dtype=x.dtype)
        if (self.duplicate and cos_t.dtype == _torch.float32 and cos_t.device.type == "cpu"
                and not cos_t.is_inference() and not _is_tracing()):
            if ids is None and _may_take_c(cos_t):  # torch mode: only where C's cos/sin are these very bits
                ids = _c_matches(self.params, position_ids, cos_t, sin_t)
            if ids is not None:
                tag = _CosSinTag(self.params, ids, cos_t, sin_t, self._whole_head_unscaled)
                cos_t._posenc_tag = tag  # type: ignore[attr-defined]
                sin_t._posenc_tag = tag  # type: ignore[attr-defined]
        return cos_t, sin_t

    def _hf_expression(self, x: _torch.Tensor, position_ids: _torch.Tensor) -> Tuple[_torch.Tensor, _torch.Tensor]:
        """HF's LlamaRotaryEmbedding.forward, operation for operation, on posenc's frequencies."""
        if not isinstance(position_ids, _torch.Tensor) or position_ids.dtype.is_floating_point \
                or position_ids.dtype == _torch.bool:
            raise UnsupportedError("position_ids must be an integer tensor, got %s"
                                   % (position_ids.dtype if isinstance(position_ids, _torch.Tensor)
                                      else type(position_ids).__name__), 8)
        if position_ids.dim() == 1:
            position_ids = position_ids[None]
        if self._by_seq_len or not _compiling():  # (reading max() into Python is a graph break under compile)
            seq_len = int(position_ids.max()) + 1 if position_ids.numel() else 0
            inv_freq, att = self.frequencies(_rope.checked_seq_len(seq_len, "position_ids"))
        else:
            inv_freq, att = self.inv_freq, self.attention_scaling
        inv = inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1).to(dtype=_torch.float32, device=x.device)
        pos = position_ids[:, None, :].to(device=x.device).float()
        with _torch.autocast(device_type=x.device.type, enabled=False):
            freqs = (inv @ pos).transpose(1, 2)
            emb = _torch.cat((freqs, freqs), dim=-1) if self.duplicate else freqs
            cos = emb.cos() * att
            sin = emb.sin() * att
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)

    def extra_repr(self) -> str:
        return "attention_scaling=%r, params=%r" % (self.attention_scaling, self.params)


# Below this many elements (q and k together) HF's torch expression is as fast as copying q
# and k and calling C twice (a one-token decode step of 32 + 8 heads x 128 is 5120), and it
# gives the same bits, so small calls take it (posenc.hf's drop-in reads it here).
_C_PATH_MIN_ELEMENTS = 1 << 15


def _may_take_c(cos: _torch.Tensor) -> bool:
    """Whether any q, k these tables rotate can reach the drop-in's C path: q and k hold at least
    one head each, tokens x head_dim elements, so fewer than _C_PATH_MIN_ELEMENTS / 2 per
    tensor never do (a decode step): comparing the tables with C's there would only cost time
    (measured: 245 against 81 us per one-token forward)."""
    return 2 * cos.numel() >= _C_PATH_MIN_ELEMENTS


def _c_matches(p: RopeParams, position_ids: _torch.Tensor, cos: _torch.Tensor,
               sin: _torch.Tensor) -> Optional[np.ndarray]:
    """The ids when posenc's C torch-compat cos/sin equal torch's cos/sin here bit for bit
    (then the C kernel may rotate with them), else None. A once-per-process probe decides
    whether comparing is worth it: torch 2.13's pip wheel computes float32 cos/sin with
    another kernel than the SLEEF u10 posenc reproduces, so there it never matches."""
    global _C_COS_IS_TORCH
    if _C_COS_IS_TORCH is None:
        probe = _torch.arange(4096)[None]
        ours, _, _ = _cos_sin_ids(RopeParams(head_dim=128, base=10000.0, mode="torch"), probe)
        inv = _torch.tensor(_rope.rope_frequencies(RopeParams(head_dim=128, base=10000.0, mode="torch")).inv_freq,
                            dtype=_torch.float32)
        f = (inv[None, :, None] @ probe[:, None, :].float()).transpose(1, 2)
        _C_COS_IS_TORCH = bool(_torch.equal(_torch.cat((f, f), -1).cos(), ours))
    if not _C_COS_IS_TORCH:
        return None
    c, s, ids = _cos_sin_ids(p, position_ids)
    if c.shape != cos.shape or not (_torch.equal(c, cos) and _torch.equal(s, sin)):
        return None
    return ids


_C_COS_IS_TORCH: Optional[bool] = None


# ---- the tag apply_rotary_pos_emb (posenc.hf) reads ------------------------------------

class _CosSinTag:
    """What RotaryEmbedding made a float32 cos/sin pair from (params, integer ids). It holds
    the tensors' storages (so their memory cannot be reused unseen) and checks, at use, the
    version counters, data pointers, shapes and strides: an in-place edit or a swapped
    storage (cos.data = other, which leaves _version alone) voids it."""

    def __init__(self, params: RopeParams, ids: np.ndarray, cos: _torch.Tensor, sin: _torch.Tensor,
                 whole_head_unscaled: bool):
        self.params, self.ids, self.whole_head_unscaled = params, ids, whole_head_unscaled
        self.cos_id, self.sin_id = id(cos), id(sin)
        self.storages = (cos.untyped_storage(), sin.untyped_storage())
        self.state = (_tensor_state(cos), _tensor_state(sin))

    def valid_for(self, cos: _torch.Tensor, sin: _torch.Tensor) -> bool:
        if id(cos) != self.cos_id or id(sin) != self.sin_id or getattr(sin, "_posenc_tag", None) is not self:
            return False
        if cos.is_inference() or sin.is_inference():
            return False  # inference tensors have no version counter to check
        return (_tensor_state(cos), _tensor_state(sin)) == self.state

    def __reduce__(self) -> Any:  # a tag is a cache hint, never state: it does not survive a copy
        return (type(None), ())


def _tensor_state(t: _torch.Tensor) -> Tuple[Any, ...]:
    return (t._version, t.data_ptr(), t.untyped_storage().data_ptr(), tuple(t.shape), t.stride(), t.dtype)


_HF_NAMES = ("apply_rotary_pos_emb", "rotate_half", "patch_llama")


def __getattr__(name: str) -> Any:
    """The Hugging Face drop-in lives in posenc.hf, on top of this module: this module never
    imports it (imports run one way), so its names are refused here by name."""
    if name in _HF_NAMES:
        raise AttributeError("posenc.torch.%s is posenc.hf.%s: the Hugging Face drop-in lives in posenc.hf "
                             "(import posenc.hf)" % (name, name))
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


__all__ = ["apply_rope_", "mrope_apply_", "mrope_apply", "apply_rope", "RotaryFunction", "Rotary", "RotaryEmbedding"]

# apply_rope_ / apply_rope take **flags, checked by check_flags (KeywordError naming a bad one),
# so the per-call hot path needs no keywords_checked wrapper.
Rotary.__init__ = keywords_checked(Rotary.__init__)  # type: ignore[method-assign]
RotaryEmbedding.__init__ = keywords_checked(RotaryEmbedding.__init__)  # type: ignore[method-assign]
