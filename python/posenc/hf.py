"""Hugging Face drop-in, on top of posenc.torch (which never imports this module): HF's apply_rotary_pos_emb with HF's
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
from .config import load_config
from .torch import RotaryEmbedding, _target


def rotate_half(x: _torch.Tensor) -> _torch.Tensor:
    """HF's rotate_half: [-x2, x1] for x = [x1, x2] (halves of the last axis)."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return _torch.cat((-x2, x1), dim=-1)


def _fast_rotary(q: _torch.Tensor, k: _torch.Tensor, cos: _torch.Tensor, sin: _torch.Tensor,
                 unsqueeze_dim: int) -> Optional[Tuple[_torch.Tensor, _torch.Tensor]]:
    """The C rotation, when it gives HF's formula's exact bits on these very cos/sin: both come
    from RotaryEmbedding (tagged, unchanged since), float32 with q and k on the CPU, the whole
    head rotated, attention factor 1, no autograd, at least posenc.torch._C_PATH_MIN_ELEMENTS. The kernel recomputes each cos/sin with the
    library's code that made the tables (same bits) and rounds a*c - b*s, b*c + a*s in float32
    without FMA, which is (q*cos) + (rotate_half(q)*sin) operation for operation."""
    tag = getattr(cos, "_posenc_tag", None)
    if tag is None or q.numel() + k.numel() < _pt._C_PATH_MIN_ELEMENTS or not tag.valid_for(cos, sin):
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
                         *args: Any, unsqueeze_dim: int = 1, position_ids: Any = None) -> Tuple[_torch.Tensor, _torch.Tensor]:
    """Hugging Face's apply_rotary_pos_emb, same bits: q_embed = (q * cos) + (rotate_half(q) * sin),
    cos/sin unsqueezed at unsqueeze_dim (1 for q [B, H, S, D], 2 for [B, S, H, D]). Both
    signatures: transformers 5.x (q, k, cos, sin, unsqueeze_dim=1) and 4.x (q, k, cos, sin,
    position_ids=None, unsqueeze_dim=1); position_ids is ignored, as in HF. cos/sin over the
    whole head; for gpt-oss's one value per pair (first*cos - second*sin, second*cos + first*sin)
    (the same rounding steps): apply_rotary_pos_emb_pairs; partial rotary (Phi-3):
    apply_rotary_pos_emb_partial. In bfloat16 / float16 every product and the sum round to the
    half dtype, as HF's eager code does.

    When cos/sin come from posenc's RotaryEmbedding (unchanged, float32, C's cos/sin bits,
    whole head rotated, attention factor 1, no autograd, q and k together >= 32768 elements),
    the C kernel rotates copies of q and k instead: the same bits, faster. Everything else
    runs HF's torch expression itself."""
    if len(args) == 1:  # 5.x passes unsqueeze_dim positionally; 4.x position_ids
        if isinstance(args[0], int) and not isinstance(args[0], bool):
            unsqueeze_dim = args[0]
        else:
            position_ids = args[0]
    elif len(args) == 2:
        position_ids, unsqueeze_dim = args
    elif args:
        raise InvalidArgumentError("apply_rotary_pos_emb takes at most 6 positional arguments, got %d"
                                   % (4 + len(args)), 1)
    if not isinstance(unsqueeze_dim, int) or isinstance(unsqueeze_dim, bool):
        raise InvalidArgumentError("unsqueeze_dim must be an int, got %r" % (unsqueeze_dim,), 1)
    # (torch.compile: HF's expression, plain torch ops; the C path reads a Python-side tag)
    fast = None if _pt._compiling() else _fast_rotary(q, k, cos, sin, unsqueeze_dim)
    if fast is not None:
        return fast
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def _signature(args: Tuple[Any, ...], unsqueeze_dim: int) -> int:
    if args and isinstance(args[-1], int) and not isinstance(args[-1], bool):
        return args[-1]
    return unsqueeze_dim


def apply_rotary_pos_emb_partial(q: _torch.Tensor, k: _torch.Tensor, cos: _torch.Tensor, sin: _torch.Tensor,
                                 *args: Any, unsqueeze_dim: int = 1,
                                 position_ids: Any = None) -> Tuple[_torch.Tensor, _torch.Tensor]:
    """Phi-3's (and every partial-rotary model's) form: the first cos.shape[-1] channels rotate
    as apply_rotary_pos_emb, the rest pass through; HF's expression and bits."""
    u = _signature(args, unsqueeze_dim)
    cos, sin = cos.unsqueeze(u), sin.unsqueeze(u)
    r = cos.shape[-1]

    def one(x: _torch.Tensor) -> _torch.Tensor:
        x_rot, x_pass = x[..., :r], x[..., r:]
        return _torch.cat([(x_rot * cos) + (rotate_half(x_rot) * sin), x_pass], dim=-1)
    return one(q), one(k)


def apply_rotary_pos_emb_pairs(q: _torch.Tensor, k: _torch.Tensor, cos: _torch.Tensor, sin: _torch.Tensor,
                               *args: Any, unsqueeze_dim: int = 1,
                               position_ids: Any = None) -> Tuple[_torch.Tensor, _torch.Tensor]:
    """gpt-oss's form: one cos/sin per pair ([.., D/2]), first*cos - second*sin and
    second*cos + first*sin on the two halves; HF's expression and bits."""
    u = _signature(args, unsqueeze_dim)
    cos, sin = cos.unsqueeze(u), sin.unsqueeze(u)

    def one(x: _torch.Tensor) -> _torch.Tensor:
        first, second = _torch.chunk(x, 2, dim=-1)
        return _torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)
    return one(q), one(k)


# the forms patch() chooses among for a modeling module's apply_rotary_pos_emb (by running
# each beside the module's own: the shapes alone cannot tell Phi-3's half-width partial
# rotation from gpt-oss's one-value-per-pair cos)
# (names, looked up at use: check_keywords at the bottom wraps the public functions)
_FORMS = ("apply_rotary_pos_emb", "apply_rotary_pos_emb_partial", "apply_rotary_pos_emb_pairs")


def patch_llama(target: Any, *, mode: Mode = "torch", rotary_embedding: bool = True) -> Callable[[], None]:
    """Kept for callers of the first release: patch(target, mode=, rotary_embedding=)."""
    return patch(target, mode=mode, rotary_embedding=rotary_embedding)


def patch(target: Any, *, mode: Mode = "torch", rotary_embedding: bool = True) -> Callable[[], None]:
    """One call, like Liger-Kernel's apply_liger_kernel_to_*: make a transformers model use
    posenc's RoPE. target: a loaded model (every text rotary-embedding submodule is replaced
    by posenc's, and the modeling modules its layers come from get posenc's
    apply_rotary_pos_emb), or a modeling module (its apply_rotary_pos_emb and, with
    rotary_embedding=True, its *RotaryEmbedding classes for models built afterwards).

    For a model nothing is replaced on trust: each replacement is run beside the model's own
    on probe positions (two batch rows at different offsets, and past the trained length where
    the scaling depends on it) in float32, bfloat16 and float16, and the patch is refused by
    name (InvalidArgumentError, nothing patched) unless every output is the same bits: a model
    type posenc's config reader does not know (gpt-oss), frequencies rounded by
    model.to(half dtype), a config other than the one the model was built from, or a rotary
    form posenc does not reproduce. mode="torch" (default) keeps HF's bits; "precise" gives
    posenc's <= 1 ULP cos/sin (then only the frequencies are compared, to 1e-6).
    Returns undo(), which restores what was replaced."""
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
            for name in [n for n in dir(target) if n.endswith("RotaryEmbedding") and "Vision" not in n]:
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
                    cls_name = type(child).__name__
                    if isinstance(child, (RotaryEmbedding, LayerTypesRotaryEmbedding)) or \
                            not cls_name.endswith("RotaryEmbedding") or "Vision" in cls_name:
                        continue
                    where = "%s.%s (%s)" % (type(parent).__name__, name, cls_name)
                    ours = _replacement(where, child, getattr(child, "config", None) or getattr(target, "config", None),
                                        check)
                    replacements.append((parent, name, ours))
        forms = {name: _same_function(mod) for name, mod in modules.items()}
        for name, mod in modules.items():
            set_attr(mod, "apply_rotary_pos_emb", forms[name])
        for parent, name, ours in replacements:  # everything checked: now patch
            set_attr(parent, name, ours)
    else:
        raise InvalidArgumentError("patch takes a modeling module or a torch.nn.Module model, got %s"
                                   % type(target).__name__, 1)

    def undo_all() -> None:
        while undo:
            undo.pop()()
    return undo_all


class LayerTypesRotaryEmbedding(_torch.nn.Module):
    """Gemma-3's form: one rotary embedding per layer type (full / sliding attention, each with
    its own base and scaling); forward(x, position_ids, layer_type) -> (cos, sin)."""

    def __init__(self, config: Any, device: Any = None, *, mode: Mode = "torch"):
        super().__init__()
        layer_types = load_config(config).layer_types
        if not layer_types:
            raise InvalidArgumentError("config has no layer_types with their own RoPE (not a Gemma-3 style "
                                       "config)", 1)
        self.layer_types = sorted(lt.name for lt in layer_types)
        self.by_type = _torch.nn.ModuleDict({lt.name: RotaryEmbedding(params=lt.rope.replace(mode=mode),
                                                                      device=device) for lt in layer_types})

    def forward(self, x: _torch.Tensor, position_ids: _torch.Tensor,
                layer_type: Optional[str] = None) -> Tuple[_torch.Tensor, _torch.Tensor]:
        if layer_type not in self.by_type:
            raise InvalidArgumentError("layer_type must be one of %s, got %r" % (self.layer_types, layer_type), 1)
        return self.by_type[layer_type](x, position_ids)


class MultimodalRotaryEmbedding(RotaryEmbedding):
    """Qwen2-VL's form: position_ids [3, B, S] (t, h, w), cos/sin [B, S, R] whose pair blocks
    take the axis of mrope_section (t, h, w, t, h, w, ...: block i from axis i % 3), as
    Qwen2VLRotaryEmbedding's recomposition; HF's torch expression on posenc's frequencies."""

    def __init__(self, config: Any, device: Any = None, *, mode: Mode = "torch"):
        if mode != "torch":
            raise InvalidArgumentError("MultimodalRotaryEmbedding reproduces HF's bits only (mode='torch')", 1)
        super().__init__(config, device, mode="torch")
        self.mrope_section = list(load_config(config).mrope_sections)
        if not self.mrope_section:
            raise InvalidArgumentError("config has no mrope_section (not a Qwen2-VL style config)", 1)

    @_torch.no_grad()
    def forward(self, x: _torch.Tensor, position_ids: _torch.Tensor) -> Tuple[_torch.Tensor, _torch.Tensor]:
        if position_ids.dim() == 2:  # text only: every axis at the same id
            position_ids = position_ids[None].expand(3, -1, -1)
        inv = self.inv_freq[None, None, :, None].float().expand(3, position_ids.shape[1], -1, 1)
        pos = position_ids[:, :, None, :].float()
        with _torch.autocast(device_type=x.device.type, enabled=False):
            freqs = (inv @ pos).transpose(2, 3)
            cos = freqs.cos() * self.attention_scaling
            sin = freqs.sin() * self.attention_scaling
        cos, sin = self._recompose(cos), self._recompose(sin)
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)

    def _recompose(self, f: _torch.Tensor) -> _torch.Tensor:
        f = _torch.cat([m[i % 3] for i, m in enumerate(f.split(self.mrope_section, dim=-1))], dim=-1)
        return _torch.cat((f, f), dim=-1)


_PROBE_DTYPES = (_torch.float32, _torch.bfloat16, _torch.float16)


def _probe_positions(child: Any, config: Any, mrope: bool) -> List[_torch.Tensor]:
    """Two batch rows at different offsets; past the trained length too (dynamic NTK and
    LongRoPE switch there), then back below it (HF's dynamic update resets there)."""
    short = _torch.stack([_torch.arange(0, 12), _torch.arange(37, 49)])
    out = [short]
    orig = getattr(child, "original_max_seq_len", None) or getattr(config, "max_position_embeddings", None)
    rp = getattr(config, "rope_parameters", None) or {}
    orig = rp.get("original_max_position_embeddings", orig) if isinstance(rp, dict) else orig
    if isinstance(orig, int) and orig > 0:
        out.insert(0, _torch.stack([_torch.arange(orig - 4, orig + 8), _torch.arange(2 * orig, 2 * orig + 12)]))
    if mrope:
        out = [p[None].expand(3, -1, -1) + _torch.tensor([0, 1, 2])[:, None, None] for p in out]
    return out


def _replacement(where: str, child: Any, config: Any, mode: str) -> _torch.nn.Module:
    """posenc's module for HF's rotary embedding child, run beside it on probes and refused by
    name unless every output is the same bits (mode torch; precise: frequencies to 1e-6)."""
    if config is None:
        raise InvalidArgumentError("%s has no config (and neither has the model): cannot build posenc's "
                                   "RotaryEmbedding" % where, 1)
    model_type = getattr(config, "model_type", "?")
    layer_types = [n[:-len("_inv_freq")] for n, _ in child.named_buffers()
                   if n.endswith("_inv_freq") and not n.endswith("original_inv_freq")]
    mrope = getattr(child, "mrope_section", None) is not None
    try:
        if layer_types:
            ours: _torch.nn.Module = LayerTypesRotaryEmbedding(config, mode=mode)
        elif mrope:
            ours = MultimodalRotaryEmbedding(config, mode=mode)
        else:
            buffer = getattr(child, "inv_freq", None)
            device = buffer.device if isinstance(buffer, _torch.Tensor) else None
            ours = RotaryEmbedding(config, device, mode=mode)
    except Exception as exc:  # posenc's config reader refuses it: say which model and why
        raise InvalidArgumentError("posenc.hf.patch refuses %s of model_type %r: posenc cannot read its RoPE "
                                   "from the config (%s)" % (where, model_type, exc), 1) from exc
    for lt in layer_types or [None]:
        theirs = getattr(child, "%s_inv_freq" % lt if lt else "inv_freq", None)
        mine = ours.by_type[lt] if lt else ours  # type: ignore[index]
        _same_frequencies(where + ("[%s]" % lt if lt else ""), theirs, mine, mode)
    if mode != "torch":
        return ours
    for lt in layer_types or [None]:
        for pos in _probe_positions(child, config, mrope):
            for dtype in _PROBE_DTYPES:
                x = _torch.zeros(1, dtype=dtype)
                args = (lt,) if lt else ()
                want = child(x, pos, *args)
                got = ours(x, pos, *args)
                if isinstance(want, tuple) and len(want) == 2 and want[0].shape[-1] * 2 == got[0].shape[-1]:
                    if isinstance(ours, RotaryEmbedding) and not isinstance(ours, MultimodalRotaryEmbedding):
                        ours.duplicate = False  # gpt-oss's one value per pair
                        got = ours(x, pos, *args)
                for name, w, g in zip(("cos", "sin"), want, got):
                    if w.shape != g.shape or w.dtype != g.dtype or not _torch.equal(w, g):
                        raise InvalidArgumentError(
                            "posenc.hf.patch refuses %s of model_type %r: posenc's %s differs from the model's at "
                            "positions %s..%s%s in %s (%s): posenc does not reproduce this rotary embedding"
                            % (where, model_type, name, int(pos.min()), int(pos.max()),
                               " (layer type %s)" % lt if lt else "", dtype,
                               "shape %s vs %s" % (tuple(g.shape), tuple(w.shape)) if w.shape != g.shape
                               else "max difference %g" % float((w.float() - g.float()).abs().max())), 1)
    return ours


def _same_function(mod: Any) -> Callable[..., Any]:
    """posenc's form of a module's apply_rotary_pos_emb: the first of _FORMS that gives the same
    bits as the module's own on probes (float32, bfloat16, float16; cos over the whole head and
    over half of it) wherever the module's own runs; refused by name when none does."""
    fn = getattr(mod, "apply_rotary_pos_emb")
    forms = [globals()[name] for name in _FORMS]
    if any(fn is f for f in forms):
        return fn
    g = _torch.Generator().manual_seed(0)
    probes = []
    for dtype in _PROBE_DTYPES:
        for width in (16, 8):
            q = _torch.randn(2, 3, 5, 16, generator=g).to(dtype)
            k = _torch.randn(2, 1, 5, 16, generator=g).to(dtype)
            cos = _torch.randn(2, 5, width, generator=g).to(dtype)
            sin = _torch.randn(2, 5, width, generator=g).to(dtype)
            try:
                want = fn(q, k, cos, sin)
            except Exception:  # this module's function takes only one cos width
                continue
            probes.append(((q, k, cos, sin), want))
    for form in forms:
        try:
            if probes and all(all(_torch.equal(a, b) for a, b in zip(want, form(*args))) for args, want in probes):
                return form
        except Exception:
            continue
    raise InvalidArgumentError("posenc.hf.patch refuses %s.apply_rotary_pos_emb: none of posenc's forms (llama, "
                               "partial rotary, gpt-oss pairs) gives its bits on the probes" % mod.__name__, 1)


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


__all__ = ["apply_rotary_pos_emb", "apply_rotary_pos_emb_partial", "apply_rotary_pos_emb_pairs", "rotate_half", "patch", "patch_llama", "LayerTypesRotaryEmbedding",
           "MultimodalRotaryEmbedding"]

check_keywords(globals(), __all__)
