"""Hugging Face drop-in (re-exported by posenc.torch): HF's apply_rotary_pos_emb with HF's
signature and bits, HF's rotate_half, and patch_llama, a one-call patch of a transformers
Llama-style model or modeling module (as Liger-Kernel's apply_liger_kernel_to_llama).
docs/python.md, "Hugging Face drop-in"; tested in python/tests/test_hf.py."""
from __future__ import annotations

import sys
import types
from typing import Any, Callable, List, Optional, Tuple

import torch as _torch

from . import rope as _rope
from . import torch as _pt
from ._common import check_keywords
from ._errors import InvalidArgumentError
from .rope import Mode
from .torch import RotaryEmbedding, _target


def rotate_half(x: _torch.Tensor) -> _torch.Tensor:
    """HF's rotate_half: [-x2, x1] for x = [x1, x2] (halves of the last axis)."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return _torch.cat((-x2, x1), dim=-1)


# Below this many elements (q and k together) HF's torch expression is as fast as copying q
# and k and calling C twice (a one-token decode step of 32 + 8 heads x 128 is 5120), and it
# gives the same bits, so small calls take it.
_C_PATH_MIN_ELEMENTS = 1 << 15


def _fast_rotary(q: _torch.Tensor, k: _torch.Tensor, cos: _torch.Tensor, sin: _torch.Tensor,
                 unsqueeze_dim: int) -> Optional[Tuple[_torch.Tensor, _torch.Tensor]]:
    """The C rotation, when it gives HF's formula's exact bits on these very cos/sin: both come
    from RotaryEmbedding (tagged, unchanged since), float32 with q and k on the CPU, the whole
    head rotated, attention factor 1, no autograd, at least _C_PATH_MIN_ELEMENTS. The kernel recomputes each cos/sin with the
    library's code that made the tables (same bits) and rounds a*c - b*s, b*c + a*s in float32
    without FMA, which is (q*cos) + (rotate_half(q)*sin) operation for operation."""
    tag = getattr(cos, "_posenc_tag", None)
    if tag is None or q.numel() + k.numel() < _C_PATH_MIN_ELEMENTS or not tag.valid_for(cos, sin):
        return None  # (the size test first: it is what sends a decode step to the expression)
    if unsqueeze_dim not in (1, 2, -3, -2) or _pt._is_tracing():
        return None
    for t in (q, k):
        if (not isinstance(t, _torch.Tensor) or t.dtype != _torch.float32 or t.device.type != "cpu"
                or t.dim() != 4 or (t.requires_grad and _torch.is_grad_enabled())):
            return None
    ids = tag.ids
    p = tag.params
    tl = "bhsd" if unsqueeze_dim in (1, -3) else "bshd"
    s_axis = 2 if tl == "bhsd" else 1
    head_dim = q.shape[-1]
    if (ids.ndim != 2 or cos.dim() != 3 or cos.shape[-1] != head_dim or k.shape[-1] != head_dim
            or p.head_dim != head_dim or q.shape[0] != k.shape[0] or q.shape[s_axis] != k.shape[s_axis]
            or q.shape[s_axis] != ids.shape[1] or ids.shape[0] not in (1, q.shape[0])):
        return None
    if not tag.whole_head_unscaled:
        return None
    positions = ids[0] if ids.shape[0] == 1 else ids
    # copies in q's and k's own memory order, as HF's elementwise results are (a [B, H, S, D]
    # view of a [B, S, H, D] projection stays token-major: one C call, not one per head)
    q_out = _torch.empty_like(q).copy_(q)
    k_out = _torch.empty_like(k).copy_(k)
    seq_len = int(ids.max()) + 1 if ids.size else 0
    _rope.apply_targets_([_target(q_out, "q", tl), _target(k_out, "k", tl)], p, "half", positions, 0, seq_len,
                         False)
    return q_out, k_out


def apply_rotary_pos_emb(q: _torch.Tensor, k: _torch.Tensor, cos: _torch.Tensor, sin: _torch.Tensor,
                         position_ids: Any = None, unsqueeze_dim: int = 1) -> Tuple[_torch.Tensor, _torch.Tensor]:
    """Hugging Face's apply_rotary_pos_emb (transformers' modeling_llama), same signature, same
    bits: q_embed = (q * cos) + (rotate_half(q) * sin), cos/sin unsqueezed at unsqueeze_dim
    (1 for q [B, H, S, D], 2 for [B, S, H, D]); position_ids is ignored, as in HF. In bfloat16 /
    float16 every product and the sum round to the half dtype, as HF's eager code does.

    When cos/sin come from posenc's RotaryEmbedding (unchanged, float32, whole head rotated,
    attention factor 1, no autograd, q and k together >= 32768 elements), the C kernel rotates
    copies of q and k instead: the same bits, much faster. Everything else (a one-token decode
    step included, where the expression is as fast) runs HF's torch expression itself."""
    if not isinstance(unsqueeze_dim, int) or isinstance(unsqueeze_dim, bool):
        raise InvalidArgumentError("unsqueeze_dim must be an int, got %r" % (unsqueeze_dim,), 1)
    fast = _fast_rotary(q, k, cos, sin, unsqueeze_dim)
    if fast is not None:
        return fast
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def patch_llama(target: Any, *, mode: Mode = "torch", rotary_embedding: bool = True) -> Callable[[], None]:
    """One call, like Liger-Kernel's apply_liger_kernel_to_llama: make a transformers Llama-style
    model use posenc's RoPE. target: the modeling module (e.g.
    transformers.models.llama.modeling_llama: its module-level apply_rotary_pos_emb is replaced,
    and with rotary_embedding=True its *RotaryEmbedding classes, for models built afterwards), or
    a model instance (the modules its layers come from get the function; every rotary-embedding
    submodule, one with an inv_freq buffer, is replaced by RotaryEmbedding(config, mode=mode),
    config taken from that submodule or the model). mode="torch" (default here) keeps HF's bits;
    "precise" gives the <= 1 ULP cos/sin. Returns undo(), which restores what was replaced."""
    check = {"torch": "torch", "torch_compat": "torch", "precise": "precise"}.get(mode)  # type: ignore[arg-type]
    if check is None:
        raise InvalidArgumentError("mode must be 'torch' or 'precise', got %r" % (mode,), 1)
    undo: List[Callable[[], None]] = []

    def set_attr(obj: Any, name: str, value: Any) -> None:
        old = getattr(obj, name)
        setattr(obj, name, value)
        undo.append(lambda: setattr(obj, name, old))

    if isinstance(target, types.ModuleType):
        if not callable(getattr(target, "apply_rotary_pos_emb", None)):
            raise InvalidArgumentError("module %s has no apply_rotary_pos_emb to replace (not a Llama-style "
                                       "modeling module?)" % target.__name__, 1)
        set_attr(target, "apply_rotary_pos_emb", apply_rotary_pos_emb)
        if rotary_embedding:
            for name in [n for n in dir(target) if n.endswith("RotaryEmbedding")]:
                cls = getattr(target, name)
                if isinstance(cls, type) and issubclass(cls, _torch.nn.Module):
                    set_attr(target, name, _embedding_class(name, check))
    elif isinstance(target, _torch.nn.Module):
        modules = {}
        for sub in target.modules():
            mod = sys.modules.get(type(sub).__module__)
            if mod is not None and mod not in (sys.modules[__name__], _pt) and \
                    callable(getattr(mod, "apply_rotary_pos_emb", None)):
                modules[mod.__name__] = mod
        if not modules:
            raise InvalidArgumentError("no module of %s's layers has an apply_rotary_pos_emb to replace (not a "
                                       "Llama-style model?)" % type(target).__name__, 1)
        replacements = []
        if rotary_embedding:
            for parent in list(target.modules()):
                for name, child in list(parent.named_children()):
                    if isinstance(child, RotaryEmbedding) or not type(child).__name__.endswith("RotaryEmbedding"):
                        continue
                    config = getattr(child, "config", None) or getattr(target, "config", None)
                    if config is None:
                        raise InvalidArgumentError("%s.%s has no config (and neither has the model): cannot build "
                                                   "posenc's RotaryEmbedding" % (type(parent).__name__, name), 1)
                    buffer = getattr(child, "inv_freq", None)
                    device = buffer.device if isinstance(buffer, _torch.Tensor) else None
                    ours = RotaryEmbedding(config, device, mode=check)
                    _same_frequencies(type(parent).__name__ + "." + name, buffer, ours, check)
                    replacements.append((parent, name, ours))
        for mod in modules.values():
            set_attr(mod, "apply_rotary_pos_emb", apply_rotary_pos_emb)
        for parent, name, ours in replacements:  # everything checked: now patch
            set_attr(parent, name, ours)
    else:
        raise InvalidArgumentError("patch_llama takes a modeling module or a torch.nn.Module model, got %s"
                                   % type(target).__name__, 1)

    def undo_all() -> None:
        while undo:
            undo.pop()()
    return undo_all


def _same_frequencies(where: str, theirs: Any, ours: RotaryEmbedding, mode: str) -> None:
    """Refuse a patch that would change the model's frequencies without a word: HF's inv_freq
    rounded by model.to(half dtype), or posenc reading the config otherwise than the model was
    built (another base, scaling or head_dim). torch mode must match bit for bit."""
    if not isinstance(theirs, _torch.Tensor):
        return
    if theirs.dtype != _torch.float32:
        raise InvalidArgumentError("%s.inv_freq is %s (model.to(dtype) rounds it): HF's cos/sin then use rounded "
                                   "frequencies and posenc's would not; recompute that buffer in float32 (as "
                                   "from_pretrained(torch_dtype=...) leaves it) before patching" % (where, theirs.dtype), 1)
    mine = ours.inv_freq.to(theirs.device)
    if theirs.shape != mine.shape:
        raise InvalidArgumentError("%s.inv_freq has %d frequencies but posenc reads %d from the config (head_dim "
                                   "%d)" % (where, theirs.numel(), mine.numel(), ours.params.head_dim), 1)
    differ = (theirs != mine) if mode == "torch" else ((theirs - mine).abs() > 1e-6 * theirs.abs())
    if bool(differ.any()):
        i = int(differ.nonzero()[0, -1])
        raise InvalidArgumentError("%s.inv_freq differs from the config's as posenc reads it (%r): pair %d is %r "
                                   "in the model, %r from the config; the model was built from another config"
                                   % (where, ours.params, i, float(theirs.flatten()[i]), float(mine.flatten()[i])), 1)


def _embedding_class(name: str, mode: str) -> type:
    """A RotaryEmbedding subclass with HF's constructor (config, device=None) and this mode."""
    def __init__(self: Any, config: Any = None, device: Any = None, **kwargs: Any) -> None:
        kwargs.setdefault("mode", mode)
        RotaryEmbedding.__init__(self, config, device, **kwargs)
    return type(name, (RotaryEmbedding,), {"__init__": __init__, "__module__": __name__})


__all__ = ["apply_rotary_pos_emb", "rotate_half", "patch_llama"]

check_keywords(globals(), __all__)
