"""The Hugging Face drop-in (issue 25 item 4): posenc.hf.apply_rotary_pos_emb, RotaryEmbedding
and patch_llama against HF's own formulas.

transformers is not installed here (no PyPI), so HF_MODELING below re-expresses, in plain
torch, the parts of transformers' models/llama/modeling_llama.py that RoPE touches: the default
rope_init (inv_freq from torch.arange(0, dim, 2, dtype=int64).float()), LlamaRotaryEmbedding's
forward (float32 matmul of inv_freq and positions, cat, cos/sin times attention_scaling, then
.to(x.dtype)), rotate_half, and apply_rotary_pos_emb ((q * cos) + (rotate_half(q) * sin), cos
unsqueezed at unsqueeze_dim), plus a small attention block with a KV cache whose forward looks
apply_rotary_pos_emb up in its module at call time, as HF's LlamaAttention does (what Liger-Kernel
patches). The comparison is bit for bit in float32, bfloat16 and float16."""
import sys
import types
import warnings

import pytest
import torch

import posenc
import posenc.torch as pt
from posenc import hf as drop_in
from conftest import torch_trig_is_posencs

# posenc's C torch-compat cos/sin equal torch's float32 cos/sin where torch uses SLEEF u10 (Debian's
# torch 1.13 on AVX2); torch 2.13's pip wheel differs by <= 1 ULP in ~2.5% of values (conftest)
EXACT = torch_trig_is_posencs()
DTYPES = [torch.float32, torch.bfloat16, torch.float16]

HF_MODELING = r'''
import math
import torch
from torch import nn


class LlamaConfig:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def to_dict(self):
        return dict(self.__dict__)


def _compute_default_rope_parameters(config, device=None):
    base = config.rope_theta
    dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(device=device, dtype=torch.float) / dim))
    return inv_freq, 1.0


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, config, device=None):
        super().__init__()
        self.config = config
        inv_freq, self.attention_scaling = _compute_default_rope_parameters(config, device)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class LlamaAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.q_proj = nn.Linear(config.hidden_size, self.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, self.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, self.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, config.hidden_size, bias=False)

    def forward(self, hidden_states, position_embeddings, past=None):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        rep = self.heads // self.kv_heads
        kr, vr = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        scores = (q @ kr.transpose(2, 3)) / math.sqrt(self.head_dim)
        kv_len = kr.shape[2]
        mask = torch.ones(q_len, kv_len, dtype=torch.bool).tril(kv_len - q_len)
        scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores.float(), dim=-1).to(q.dtype) @ vr
        return self.o_proj(out.transpose(1, 2).reshape(bsz, q_len, -1)), (k, v)


class LlamaModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.layers = nn.ModuleList([LlamaAttention(config) for _ in range(config.num_hidden_layers)])
        self.rotary_emb = LlamaRotaryEmbedding(config=config)

    def forward(self, hidden_states, position_ids, past=None):
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        cache = []
        for i, layer in enumerate(self.layers):
            out, kv = layer(hidden_states, position_embeddings, None if past is None else past[i])
            hidden_states = hidden_states + out
            cache.append(kv)
        return hidden_states, cache
'''


@pytest.fixture
def hf():
    """A fresh copy of the HF-formula modeling module, registered in sys.modules (patch_llama
    finds a model's module there, as for transformers)."""
    module = types.ModuleType("hf_modeling_llama_formulas")
    exec(compile(HF_MODELING, "hf_modeling_llama_formulas", "exec"), module.__dict__)
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def config(module, **kw):
    fields = dict(model_type="llama", hidden_size=256, num_attention_heads=4, num_key_value_heads=2,
                  num_hidden_layers=2, rope_theta=10000.0, max_position_embeddings=131072)
    fields.update(kw)
    return module.LlamaConfig(**fields)


def same(a, b):
    if EXACT:
        return torch.equal(a, b)
    return torch.allclose(a.float(), b.float(), rtol=2e-2 if a.element_size() == 2 else 1e-5, atol=1e-6)


def generate(model, h, start, decode_steps):
    """Prefill h at positions start.., then decode one token per step with the KV cache."""
    outputs = []
    with torch.no_grad():
        b, s, _ = h.shape
        pos = torch.arange(start, start + s)[None].expand(b, -1)
        out, cache = model(h, pos)
        outputs.append(out)
        for step in range(decode_steps):
            token = out[:, -1:]
            pos = torch.full((b, 1), start + s + step, dtype=torch.int64)
            out, cache = model(token, pos, cache)
            outputs.append(out)
    return outputs, cache


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])  # torch 1.13's CPU matmul has no float16
def test_patched_model_decodes_with_hfs_bits_at_position_100000(hf, dtype, monkeypatch):
    torch.manual_seed(0)
    model = hf.LlamaModel(config(hf)).to(dtype)
    # as from_pretrained(torch_dtype=...) leaves it: inv_freq (a non-persistent buffer) in float32
    model.rotary_emb.inv_freq = hf._compute_default_rope_parameters(model.config)[0]
    h = torch.randn(2, 7, 256).to(dtype)
    want, want_cache = generate(model, h, 99993, 3)  # prefill 99993..99999, decode 100000..100002
    monkeypatch.setattr(pt, "_C_PATH_MIN_ELEMENTS", 0)  # small tensors here: force the C path where it applies
    fast_calls = []
    real = drop_in._fast_rotary
    monkeypatch.setattr(drop_in, "_fast_rotary", lambda *a: fast_calls.append(real(*a)) or fast_calls[-1])
    undo = drop_in.patch_llama(model)
    fast_calls.clear()  # the patch's own probes of apply_rotary_pos_emb
    try:
        assert isinstance(model.rotary_emb, pt.RotaryEmbedding) and model.rotary_emb.params.mode == "torch"
        assert hf.apply_rotary_pos_emb is drop_in.apply_rotary_pos_emb
        got, got_cache = generate(model, h, 99993, 3)
    finally:
        undo()
    assert isinstance(model.rotary_emb, hf.LlamaRotaryEmbedding) and hf.apply_rotary_pos_emb is not drop_in.apply_rotary_pos_emb
    for i, (a, b) in enumerate(zip(got, want)):
        print("%s step %d: %s" % (dtype, i, "identical" if torch.equal(a, b) else
                                   "max diff %g" % (a.float() - b.float()).abs().max().item()))
        assert same(a, b)
    for (ka, va), (kb, vb) in zip(got_cache, want_cache):
        assert same(ka, kb) and same(va, vb)  # the rotated keys in the cache
    used_c = sum(1 for r in fast_calls if r is not None)
    print("%s: %d of %d apply calls ran in C" % (dtype, used_c, len(fast_calls)))
    # mode "torch" gives torch's own cos/sin; C rotates only where its cos/sin are those bits (EXACT)
    assert used_c == (len(fast_calls) if dtype == torch.float32 and EXACT else 0) and len(fast_calls) == 8


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("unsqueeze_dim", [1, 2])
def test_apply_rotary_pos_emb_has_hfs_signature_and_bits(hf, dtype, unsqueeze_dim, monkeypatch):
    monkeypatch.setattr(pt, "_C_PATH_MIN_ELEMENTS", 0)
    torch.manual_seed(1)
    B, H, S, D = 2, 4, 9, 64
    shape = (B, H, S, D) if unsqueeze_dim == 1 else (B, S, H, D)
    q, k = torch.randn(shape).to(dtype), torch.randn(shape).to(dtype)
    ids = torch.stack([torch.arange(S) + 100000, torch.arange(S) * 7 + 3])
    theirs = hf.LlamaRotaryEmbedding(config(hf, hidden_size=H * D, num_attention_heads=H))
    ours = pt.RotaryEmbedding(config(hf, hidden_size=H * D, num_attention_heads=H), mode="torch")
    cos_hf, sin_hf = theirs(q, ids)
    cos, sin = ours(q, ids)
    assert same(cos, cos_hf) and same(sin, sin_hf) and cos.dtype == dtype and cos.shape == (B, S, D)
    # HF's cos/sin through posenc's apply: HF's expression itself (half dtypes round per op)
    want = hf.apply_rotary_pos_emb(q, k, cos_hf, sin_hf, None, unsqueeze_dim)
    got = drop_in.apply_rotary_pos_emb(q, k, cos_hf, sin_hf, position_ids=None, unsqueeze_dim=unsqueeze_dim)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    # posenc's cos/sin: the C kernel in float32 (tagged tables), HF's formula's bits on them
    want = hf.apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=unsqueeze_dim)
    got = drop_in.apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=unsqueeze_dim)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert got[0].dtype == dtype and got[0].shape == shape and not torch.equal(got[0], q)


def test_the_c_path_steps_aside_when_the_tables_changed(hf, monkeypatch):
    """A tag never outlives a change of the tables: an in-place edit, a slice, a grad."""
    torch.manual_seed(2)
    big = torch.randn(1, 2, 4096, 32)
    # mode "precise": the C kernel's cos/sin are these tables' bits on every torch (mode "torch" takes
    # torch's own cos/sin, which the C path reproduces only where torch runs SLEEF u10)
    cb, sb = pt.RotaryEmbedding(head_dim=32, mode="precise", base=10000.0)(big, torch.arange(4096)[None])
    assert drop_in._fast_rotary(big, big.clone(), cb, sb, 1) is not None  # large enough for C by default
    assert drop_in._fast_rotary(big[:, :, :1], big[:, :, :1].clone(), cb[:, :1], sb[:, :1], 1) is None  # a slice
    monkeypatch.setattr(pt, "_C_PATH_MIN_ELEMENTS", 0)
    q, k = torch.randn(1, 2, 5, 32), torch.randn(1, 2, 5, 32)
    cos, sin = pt.RotaryEmbedding(head_dim=32, mode="precise", base=10000.0)(q, torch.arange(5)[None])
    assert drop_in._fast_rotary(q, k, cos, sin, 1) is not None
    cos.mul_(2.0)  # an in-place change: the C path would ignore it
    assert drop_in._fast_rotary(q, k, cos, sin, 1) is None
    got = drop_in.apply_rotary_pos_emb(q, k, cos, sin)
    want = hf.apply_rotary_pos_emb(q, k, cos, sin)
    assert torch.equal(got[0], want[0])
    cos2, sin2 = pt.RotaryEmbedding(head_dim=32, mode="precise", base=10000.0)(q, torch.arange(5)[None])
    assert drop_in._fast_rotary(q, k, cos2[..., :], sin2, 1) is None  # a view is another tensor
    qg = q.clone().requires_grad_(True)
    qe, _ = drop_in.apply_rotary_pos_emb(qg, k, cos2, sin2)
    qe.sum().backward()  # autograd: HF's expression, differentiable
    assert qg.grad is not None
    yarn = pt.RotaryEmbedding(head_dim=32, mode="precise", base=10000.0, scaling="yarn", factor=4.0, original_max_position=16)
    cy, sy = yarn(q, torch.arange(5)[None])
    assert drop_in._fast_rotary(q, k, cy, sy, 1) is None  # attention factor != 1: HF's expression


def test_patch_llama_on_a_modeling_module_and_undo(hf):
    original_apply, original_class = hf.apply_rotary_pos_emb, hf.LlamaRotaryEmbedding
    undo = drop_in.patch_llama(hf)
    try:
        assert hf.apply_rotary_pos_emb is drop_in.apply_rotary_pos_emb
        model = hf.LlamaModel(config(hf))  # built after the patch: posenc's embedding, HF's constructor
        assert isinstance(model.rotary_emb, pt.RotaryEmbedding) and model.rotary_emb.params.mode == "torch"
    finally:
        undo()
    assert hf.apply_rotary_pos_emb is original_apply and hf.LlamaRotaryEmbedding is original_class
    with pytest.raises(posenc.InvalidArgumentError, match="no apply_rotary_pos_emb"):
        drop_in.patch_llama(types.ModuleType("empty"))
    with pytest.raises(posenc.InvalidArgumentError, match="no module"):
        drop_in.patch_llama(torch.nn.Linear(2, 2))
    with pytest.raises(posenc.InvalidArgumentError, match="mode must be"):
        drop_in.patch_llama(hf, mode="fast")


def test_patch_llama_refuses_a_model_whose_frequencies_it_would_change(hf):
    """model.to(bfloat16) rounds HF's inv_freq buffer, and a config posenc reads otherwise than
    the model was built from gives other frequencies: either would change the model's numbers
    without a word, so patch_llama refuses by name and patches nothing."""
    model = hf.LlamaModel(config(hf)).to(torch.bfloat16)
    with pytest.raises(posenc.InvalidArgumentError, match="inv_freq is torch.bfloat16"):
        drop_in.patch_llama(model)
    assert hf.apply_rotary_pos_emb is not drop_in.apply_rotary_pos_emb  # nothing was patched
    model = hf.LlamaModel(config(hf))
    model.config.rope_theta = 500000.0  # the config now says another base than the model uses
    with pytest.raises(posenc.InvalidArgumentError, match="inv_freq differs"):
        drop_in.patch_llama(model)
    assert isinstance(model.rotary_emb, hf.LlamaRotaryEmbedding)


def test_jit_trace_records_one_op_with_positions_as_input():
    """Before: the trace held the positions as constants (numpy), so a traced model rotated
    every later call by the traced positions."""
    torch.manual_seed(3)
    q = torch.randn(1, 2, 4, 32)

    def rope(x, positions):
        return pt.apply_rope(x, positions=positions, tensor_layout="bhsd", mode="torch", base=10000.0)

    traced = torch.jit.trace(rope, (q, torch.arange(4)[None]))
    graph = str(traced.graph)
    print(graph)
    assert graph.count("posenc::rope(") == 1
    later = torch.tensor([[70000, 5, 6, 123456]])
    assert torch.equal(traced(q, later), rope(q, later))
    emb = pt.RotaryEmbedding(head_dim=32, mode="precise", base=10000.0)  # C tables: one op in the trace
    traced_emb = torch.jit.trace(emb, (q, torch.arange(4)[None]))
    assert "posenc::rope_cos_sin" in str(traced_emb.graph)
    assert all(torch.equal(a, b) for a, b in zip(traced_emb(q, later), emb(q, later)))
    rot = pt.Rotary(head_dim=32, tensor_layout="bhsd", base=10000.0)
    traced_rot = torch.jit.trace(rot, (q, q.clone(), torch.arange(4)[None]))
    assert str(traced_rot.graph).count("posenc::rope(") == 2
    assert torch.equal(traced_rot(q, q.clone(), later)[0], rot(q, q.clone(), later)[0])
    # gradients flow through the op (its Autograd kernel is RotaryFunction)
    x = q.clone().requires_grad_(True)
    torch.ops.posenc.rope(x, later, 0, pt._params_json(posenc.RopeParams(head_dim=32)), "half", "bhsd", -1).sum().backward()
    assert x.grad is not None and x.grad.shape == q.shape
    # what a trace cannot hold is said, by name
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.jit.trace(lambda x: pt.apply_rope(x, positions=[0, 1, 2, 3], tensor_layout="bhsd", base=10000.0), (q,))
        torch.jit.trace(lambda x: (pt.apply_rope_(x, tensor_layout="bhsd", base=10000.0), x)[1], (q.clone(),))
    texts = [str(w.message) for w in caught]
    assert any("positions are not a tensor" in t for t in texts)
    assert any("apply_rope_ writes through the data pointer" in t for t in texts)
