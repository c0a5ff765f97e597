"""posenc.torch: in place on CPU tensors (bit for bit vs the C tool and vs torch's own
float32 HF arithmetic), autograd (gradcheck in float64), the HF-replacement modules, and
bad input that must raise before anything is written."""
import numpy as np
import pytest
import torch

import posenc
import posenc.torch as pt
from conftest import avx2_fma, run_cli, torch_trig_is_posencs, ulp_f32

TRIG_ULP = 0 if avx2_fma() else 1
# torch's own float32 cos/sin vs posenc's torch-compat tables: 0 ULP where torch runs SLEEF u10,
# else <= 1 ULP (torch 2.13's pip wheel: measured 1 ULP max over 100000 positions x 64 pairs)
TORCH_TRIG_ULP = 0 if torch_trig_is_posencs() else 1
# an output built on a cos/sin 1 ULP off: |error| <= 2 ULP(1) x |x| summed over the pair
TORCH_OUT_ABS = 0.0 if torch_trig_is_posencs() else 2.0 ** -21
TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def _bits(t):
    return t.contiguous().view(torch.int16 if t.element_size() == 2 else torch.int32).numpy()


def _cli(tmp, x, dtype, args):
    """The C tool on a [T, H, D] tensor; returns a tensor of the same dtype."""
    src, dst = tmp / "x.npy", tmp / "y.npy"
    if dtype == "bf16":
        np.save(src, x.contiguous().view(torch.int16).numpy().view(np.uint16))
        args = args + ["--bf16"]
    else:
        np.save(src, x.contiguous().numpy())
    run_cli("rope", "apply", "--in", src, *args, "-o", dst)
    y = np.load(dst)
    if dtype == "bf16":
        return torch.from_numpy(y.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(y)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("tensor_layout", ["bshd", "bhsd"])
def test_apply_inplace_matches_cli_bits(tmp, dtype, tensor_layout):
    torch.manual_seed(0)
    B, S, H, D = 2, 33, 4, 64
    x = torch.randn(B, S, H, D).to(TORCH_DTYPES[dtype])
    ids = torch.randint(0, 4000, (B, S))
    q = x.clone() if tensor_layout == "bshd" else x.transpose(1, 2).contiguous()
    ptr = q.data_ptr()
    pt.apply_rope_(q, positions=ids, tensor_layout=tensor_layout, layout="neox", base=500000,
                   partial_rotary_factor=0.5)
    assert q.data_ptr() == ptr  # in place, zero-copy
    got = q if tensor_layout == "bshd" else q.transpose(1, 2)
    for b in range(B):
        np.save(tmp / "p.npy", ids[b].numpy())
        want = _cli(tmp, x[b], dtype, ["--positions", str(tmp / "p.npy"), "--base", "500000", "--partial", "0.5"])
        same = np.array_equal(_bits(got[b]), _bits(want))
        print("%s %s batch %d vs posenc rope apply: %s" % (dtype, tensor_layout, b,
                                                          "identical" if same else "DIFFERENT"))
        assert same


def test_apply_q_and_k_strided_views_match_contiguous():
    """q and k as slices of a fused qkv buffer (a strided view C can express), gptj layout."""
    torch.manual_seed(1)
    S, Hq, Hkv, D = 40, 8, 2, 64
    qkv = torch.randn(S, Hq + 2 * Hkv, D)
    q, k = qkv[:, :Hq], qkv[:, Hq:Hq + Hkv]
    q_ref, k_ref = q.clone(), k.clone()
    v_before = qkv[:, Hq + Hkv:].clone()
    pt.apply_rope_(q, k, offset=5, layout="gptj", tensor_layout="bshd", base=10000.0)
    pt.apply_rope_(q_ref, k_ref, offset=5, layout="gptj", tensor_layout="bshd", base=10000.0)
    assert torch.equal(q, q_ref) and torch.equal(k, k_ref)
    assert torch.equal(qkv[:, Hq + Hkv:], v_before)  # v untouched


def _hf_reference(q, positions, base, dim):
    """Hugging Face Llama's float32 code: inv_freq, cos/sin, rotate_half, apply_rotary_pos_emb."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    freqs = (inv_freq[None, :, None].expand(positions.shape[0], -1, 1) @ positions[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)  # [B, 1, S, D]

    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    return (q * cos) + (rotate_half(q) * sin), cos.squeeze(1), sin.squeeze(1)


@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_torch_compat_equals_torch_float32(base):
    torch.manual_seed(2)
    B, H, S, D = 2, 4, 64, 128
    q = torch.randn(B, H, S, D)
    positions = torch.stack([torch.arange(S), torch.arange(S) + 1000])
    want, cos_ref, sin_ref = _hf_reference(q, positions, base, D)
    got = q.clone()
    pt.apply_rope_(got, positions=positions, tensor_layout="bhsd", base=base, mode="torch")
    # the C rotation is HF's expression operation for operation: on posenc's own tables, the same bits
    c_cos, c_sin = posenc.rope_cos_sin(head_dim=D, positions=positions.reshape(-1).numpy(), base=base, mode="torch",
                                       duplicate="half")
    c_cos = torch.from_numpy(c_cos).view(B, 1, S, D)
    c_sin = torch.from_numpy(c_sin).view(B, 1, S, D)
    assert torch.equal(got, (q * c_cos) + (torch.cat((-q[..., D // 2:], q[..., :D // 2]), -1) * c_sin))
    # and the tables are torch's own cos/sin within TORCH_TRIG_ULP, the outputs within TORCH_OUT_ABS x max|q|
    ulp_t = max(ulp_f32(c_cos.squeeze(1).numpy(), cos_ref.numpy())[0], ulp_f32(c_sin.squeeze(1).numpy(), sin_ref.numpy())[0])
    err = (got - want).abs().max().item()
    print("apply_rope_(mode=torch) vs HF float32 code, base %g: tables %d ULP (tol %d), output %.3g (tol %.3g)"
          % (base, ulp_t, TORCH_TRIG_ULP, err, TORCH_OUT_ABS * q.abs().max().item()))
    assert ulp_t <= TORCH_TRIG_ULP and err <= TORCH_OUT_ABS * q.abs().max().item()
    # RotaryEmbedding's default is HF's bits on this very torch: cos/sin from torch's own kernels
    emb = pt.RotaryEmbedding(head_dim=D, base=base)
    cos, sin = emb(q, positions)
    print("RotaryEmbedding cos/sin vs HF: identical %s" % (torch.equal(cos, cos_ref) and torch.equal(sin, sin_ref)))
    assert torch.equal(cos, cos_ref) and torch.equal(sin, sin_ref)
    assert cos.shape == (B, S, D) and cos.dtype == torch.float32
    # a precise table differs from torch's float32 angle at long positions, but only a little
    precise = q.clone()
    pt.apply_rope_(precise, positions=positions, tensor_layout="bhsd", base=base)
    err = (precise - want).abs().max().item()
    print("precise vs HF float32: max abs %.3g (tol 1e-3: HF's angle error ~ p * 2^-24)" % err)
    assert err < 1e-3


def test_rotary_embedding_from_config_object():
    class LlamaLikeConfig:  # what a transformers PretrainedConfig's to_dict() gives
        def to_dict(self):
            return {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "rope_theta": 10000.0,
                    "max_position_embeddings": 2048, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}

    emb = pt.RotaryEmbedding(LlamaLikeConfig())
    x = torch.zeros(1, 4, 8, 64, dtype=torch.bfloat16)
    cos, sin = emb(x, torch.arange(8)[None])
    assert cos.dtype == torch.bfloat16 and cos.shape == (1, 8, 64)
    assert emb.attention_scaling == 1.0
    assert torch.allclose(emb.inv_freq, torch.tensor(1.0 / (10000 ** (np.arange(0, 64, 2) / 64)) / 2,
                                                     dtype=torch.float32), rtol=1e-6)


@pytest.mark.parametrize("layout", ["neox", "gptj"])
@pytest.mark.parametrize("tensor_layout", ["bshd", "bhsd"])
def test_gradcheck_float64(layout, tensor_layout):
    """float64: the library's f64 cos/sin (attention factor folded) with the rotation in torch."""
    torch.manual_seed(3)
    shape = (2, 5, 3, 16) if tensor_layout == "bshd" else (2, 3, 5, 16)  # B=2, S=5, H=3
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    positions = torch.tensor([[0, 1, 2, 7, 9], [4, 5, 6, 100, 3]])
    kw = dict(positions=positions, layout=layout, tensor_layout=tensor_layout, rotary_dim=12, base=10000.0,
              scaling="yarn", factor=4.0, original_max_position=64)
    assert torch.autograd.gradcheck(lambda t: pt.apply_rope(t, **kw), (x,), eps=1e-6, atol=1e-8)


def test_float32_backward_is_the_transpose():
    """The C path's backward (inverse rotation times A^2) equals autograd of the f64 path."""
    torch.manual_seed(4)
    kw = dict(offset=10, layout="neox", tensor_layout="bshd", base=10000.0, scaling="yarn", factor=4.0, original_max_position=64)
    x64 = torch.randn(1, 6, 2, 32, dtype=torch.float64, requires_grad=True)
    g = torch.randn(1, 6, 2, 32, dtype=torch.float64)
    pt.apply_rope(x64, **kw).backward(g)
    x32 = x64.detach().float().requires_grad_(True)
    y32 = pt.apply_rope(x32, **kw)
    y32.backward(g.float())
    err_y = (y32.double() - pt.apply_rope(x64.detach(), **kw)).abs().max().item()
    err_g = (x32.grad.double() - x64.grad).abs().max().item()
    print("f32 C path vs f64: forward %.3g, gradient %.3g (tol 1e-5)" % (err_y, err_g))
    assert err_y < 1e-5 and err_g < 1e-5


def test_rotary_module_inside_attention():
    """Rotary replaces HF's apply_rotary_pos_emb inside a tiny attention; torch-compat equals HF."""
    torch.manual_seed(5)
    B, H, S, D = 1, 2, 10, 32
    q, k = torch.randn(B, H, S, D), torch.randn(B, H, S, D)
    pos = torch.arange(S)[None]
    rot = pt.Rotary(head_dim=D, mode="torch", tensor_layout="bhsd", base=10000.0)
    q1, k1 = rot(q, k, pos)
    q2, _, _ = _hf_reference(q, pos, 10000.0, D)
    k2, _, _ = _hf_reference(k, pos, 10000.0, D)
    # within TORCH_OUT_ABS x max|x| of HF's (0 where torch's cos/sin are posenc's, see the top)
    assert (q1 - q2).abs().max().item() <= TORCH_OUT_ABS * q.abs().max().item()
    assert (k1 - k2).abs().max().item() <= TORCH_OUT_ABS * k.abs().max().item()


def test_bad_input_raises_and_leaves_tensor_untouched():
    torch.manual_seed(6)
    q = torch.randn(1, 8, 2, 64)
    before = q.clone()

    def refused(cls, words, *args, **kwargs):
        with pytest.raises(cls) as info:
            pt.apply_rope_(*args, **dict(dict(base=10000.0), **kwargs), tensor_layout="bshd")
        print("%s: %s" % (cls.__name__, info.value))
        assert words in str(info.value)
        assert torch.equal(q, before)

    refused(posenc.UnsupportedError, "dtype must be float32, float16 or bfloat16", q.double())
    refused(posenc.UnsupportedError, "dtype must be float32", q.int())
    refused(posenc.UnsupportedError, "device meta", torch.empty(1, 8, 2, 64, device="meta"))
    refused(posenc.UnsupportedError, "stride 1", q.transpose(-1, -2).contiguous().transpose(-1, -2))
    refused(posenc.UnsupportedError, "overlap", q[:, :1].expand(1, 8, 2, 64))
    refused(posenc.InvalidArgumentError, "positions has 3 entries", q, positions=torch.arange(3))
    refused(posenc.InvalidArgumentError, "rotary_dim", q, rotary_dim=65)
    refused(posenc.InvalidArgumentError, "q and k must share", q, torch.randn(1, 9, 2, 64))
    refused(posenc.InvalidArgumentError, "requires grad", q.clone().requires_grad_(True))
    # k fails (bad dtype) after q is fine: q must stay untouched too
    refused(posenc.UnsupportedError, "k: dtype", q, torch.randn(1, 8, 2, 64).double())
    # errors from C carry the library's message
    refused(posenc.InvalidArgumentError, "base (rope_theta) must be finite", q, base=0.5)
    with pytest.raises(posenc.Error):
        pt.apply_rope_(q, layout="sideways", tensor_layout="bshd", base=10000.0)
    assert torch.equal(q, before)


def test_threads_and_pool_give_the_same_bits():
    torch.manual_seed(7)
    x = torch.randn(1, 300, 8, 128)
    a, b, c = x.clone(), x.clone(), x.clone()
    pt.apply_rope_(a, offset=100, tensor_layout="bshd", base=10000.0)
    pt.apply_rope_(b, offset=100, threads=2, tensor_layout="bshd", base=10000.0)
    with posenc.ThreadPool(2) as pool:
        pt.apply_rope_(c, offset=100, pool=pool, tensor_layout="bshd", base=10000.0)
    assert torch.equal(a, b) and torch.equal(a, c)


def test_concurrent_calls_from_threads_match_sequential():
    """ctypes drops the GIL during the C call; the library has no global state, so
    threads rotating their own tensors at once get the sequential bits."""
    import threading
    torch.manual_seed(8)
    xs = [torch.randn(1, 200, 4, 64) for _ in range(6)]
    seq = [x.clone() for x in xs]
    par = [x.clone() for x in xs]
    for i, x in enumerate(seq):
        pt.apply_rope_(x, offset=i * 100, threads=1, tensor_layout="bshd", base=10000.0)
    threads = [threading.Thread(target=pt.apply_rope_, args=(x,), kwargs=dict(offset=i * 100, threads=1, tensor_layout="bshd", base=10000.0))
               for i, x in enumerate(par)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(torch.equal(a, b) for a, b in zip(seq, par))


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_gapped_views_equal_their_contiguous_copies(dtype):
    """Every other token of a batch (per-row calls), a head slice of a [B, H, S, D] tensor
    (per-(b, h) calls): same bits as rotating a contiguous copy; the rest untouched."""
    torch.manual_seed(9)
    base = torch.randn(3, 16, 6, 64).to(TORCH_DTYPES[dtype])
    for view_of, kw in [(lambda t: t[:, ::2], dict(tensor_layout="bshd")),
                        (lambda t: t[:, :, 1:5].transpose(1, 2), dict(tensor_layout="bhsd")),
                        (lambda t: t[1:, 3:11], dict(tensor_layout="bshd"))]:
        x = base.clone()
        view = view_of(x)
        copy = view.contiguous().clone()
        ids = torch.randint(0, 3000, tuple(view.shape[:2]) if kw["tensor_layout"] == "bshd"
                            else (view.shape[0], view.shape[2]))
        pt.apply_rope_(view, positions=ids, layout="gptj", base=10000.0, **kw)
        pt.apply_rope_(copy, positions=ids, layout="gptj", base=10000.0, **kw)
        assert torch.equal(view, copy)
        untouched = base.clone()
        view_of(untouched).copy_(view)
        assert torch.equal(x, untouched)  # nothing outside the view was written


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_default_positions_equal_explicit_ids(dtype):
    """No positions (NULL to C where the view is one sequence) = explicit 0..S-1, bit for bit."""
    torch.manual_seed(10)
    for shape, tl in [((1, 50, 3, 64), "bshd"), ((2, 50, 3, 64), "bshd"), ((2, 3, 50, 64), "bhsd")]:
        x = torch.randn(*shape).to(TORCH_DTYPES[dtype])
        a, b = x.clone(), x.clone()
        pt.apply_rope_(a, tensor_layout=tl, scaling="dynamic", factor=2, max_position=16, base=10000.0)
        pt.apply_rope_(b, positions=torch.arange(50), tensor_layout=tl, scaling="dynamic", factor=2, max_position=16, base=10000.0)
        assert torch.equal(a, b) and not torch.equal(a, x)


# ---- issue 41 item 7: found when the package was tried as a user would -------------------------

def test_rotary_embedding_and_drop_in_work_under_inference_mode_no_grad_and_grad():
    """The cos/sin tag read cos._version, which inference tensors do not have: RotaryEmbedding raised
    'Inference tensors do not track version counter' under torch.inference_mode() (generate, pipelines)."""
    from posenc import hf
    torch.manual_seed(11)
    q, k = torch.randn(1, 4, 300, 64), torch.randn(1, 2, 300, 64)
    ids = torch.arange(300)[None] + 5
    for mode in ("torch", "precise"):
        emb = pt.RotaryEmbedding(head_dim=64, base=10000.0, mode=mode)
        with torch.no_grad():
            cos, sin = emb(q, ids)
            want = hf.apply_rotary_pos_emb(q, k, cos, sin)
        with torch.inference_mode():
            cos_i, sin_i = emb(q, ids)
            got = hf.apply_rotary_pos_emb(q, k, cos_i, sin_i)
        assert torch.equal(cos_i, cos) and all(torch.equal(a, b) for a, b in zip(got, want))
        qg = q.clone().requires_grad_(True)
        cos_g, sin_g = emb(qg, ids)
        out, _ = hf.apply_rotary_pos_emb(qg, k, cos_g, sin_g)
        out.sum().backward()
        assert torch.equal(out.detach(), want[0]) and qg.grad is not None


def test_a_swapped_cos_storage_voids_the_tag():
    """cos.data = other leaves cos._version alone: the C path then rotated with the old table."""
    from posenc import hf
    torch.manual_seed(12)
    q, k = torch.randn(1, 4, 256, 64), torch.randn(1, 4, 256, 64)
    cos, sin = pt.RotaryEmbedding(head_dim=64, base=10000.0, mode="precise")(q, torch.arange(256)[None])
    assert hf._fast_rotary(q, k, cos, sin, 1) is not None  # the C path applies to fresh tables (>= 32768 elements)
    other_cos, _ = pt.RotaryEmbedding(head_dim=64, base=500000.0, mode="precise")(q, torch.arange(256)[None])
    cos.data = other_cos.clone()
    got = hf.apply_rotary_pos_emb(q, k, cos, sin)
    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    want_q = (q * c) + (torch.cat((-q[..., 32:], q[..., :32]), -1) * s)
    assert hf._fast_rotary(q, k, cos, sin, 1) is None
    assert torch.equal(got[0], want_q)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_head_major_equals_token_major(dtype):
    """[B, H, S, D] (HF's layout) is cut into B x H C calls; a token-major scratch copy (one call
    per batch row) was tried for issue 41 and measured slower (docs/python.md). Either way the
    bits are those of the token-major tensor rotated directly, and only the view is written."""
    torch.manual_seed(13)
    B, H, S, D = 2, 8, 40, 64
    x = torch.randn(B, S, H, D).to(TORCH_DTYPES[dtype])
    ids = torch.randint(0, 5000, (B, S))
    hm = x.transpose(1, 2).contiguous()
    tm = x.clone()
    pt.apply_rope_(hm, positions=ids, tensor_layout="bhsd", base=10000.0, rotary_dim=48)
    pt.apply_rope_(tm, positions=ids, tensor_layout="bshd", base=10000.0, rotary_dim=48)
    assert torch.equal(hm.transpose(1, 2), tm)
    # a strided head slice of a bigger tensor: only the view is written
    big = torch.randn(B, H + 2, S, D).to(TORCH_DTYPES[dtype])
    before = big.clone()
    view = big[:, 1:H + 1]
    copy = view.contiguous()
    pt.apply_rope_(view, positions=ids, tensor_layout="bhsd", base=10000.0, inverse=True)
    pt.apply_rope_(copy, positions=ids, tensor_layout="bhsd", base=10000.0, inverse=True)
    assert torch.equal(view, copy) and torch.equal(big[:, 0], before[:, 0]) and torch.equal(big[:, -1], before[:, -1])
