"""Multi-axis RoPE (M-RoPE) in the Python package: posenc.mrope_apply_ (NumPy),
posenc.torch.mrope_apply_ and posenc.mrope_position_ids, over posenc_mrope_apply_f32 and
posenc_mrope_position_ids.

The oracle is Hugging Face's own formula, re-expressed below in torch 1.13 float32 (transformers
is not installed here): Qwen2VLRotaryEmbedding's forward (inv_freq from torch.arange(0, dim, 2,
int64).float(), the batched float32 product of inv_freq and the three position rows [3, B, S],
cat, cos/sin), then
- Qwen2-VL / Qwen2.5-VL apply_multimodal_rotary_pos_emb: mrope_section doubled, cos/sin split
  along the last axis, chunk i taken from axis i % 3, then (q * cos) + (rotate_half(q) * sin);
- Qwen3-VL apply_interleaved_mrope: the t row of freqs, with pairs 1, 4, .. < 3 s1 from h and
  2, 5, .. < 3 s2 from w, then cat, cos/sin and the usual apply_rotary_pos_emb.
Configs: tests/fixtures/models/qwen2_vl_7b.json, qwen3_vl_8b.json (real ones).

Tolerances:
- mode="torch" (torch-compat): posenc reproduces HF's float32 steps, so the rotated q and k are
  equal bit for bit where torch's float32 cos/sin take the AVX2 SLEEF path (this machine); on
  other CPUs torch's cos/sin may differ by 1 ULP (test_hf.py's rule), so the bound there is
  2^-21 * max|x| (a 1-ULP cos/sin difference times the pair's magnitude, with rounding room).
- mode="precise": the angle is formed exactly and cos/sin are correctly rounded, so the
  comparison is against the same HF formula in float64 (float32 inputs widened), within
  2^-21 * max|x| (8 float32 ULPs at the input's magnitude: <= 1 ULP for each of cos and sin,
  plus the rounding of two products and a sum); the measured error is printed.
- text-only positions (t = h = w): equal to the 1-D posenc.apply_rope_ bit for bit, both modes.
"""
import json
import os

import numpy as np
import pytest
import torch

import posenc
import posenc.torch as pt
from conftest import ROOT, run_cli, torch_trig_is_posencs

MODELS = os.path.join(ROOT, "tests", "fixtures", "models")
EXACT = torch_trig_is_posencs()  # else within BOUND: torch's cos/sin are not posenc's
BOUND = 2.0 ** -21  # times max|x|: see the module docstring


def fixture(name):
    with open(os.path.join(MODELS, name + ".json")) as f:
        return json.load(f)


# ---- HF's formulas, torch 1.13 ---------------------------------------------------

def hf_freqs(base, head_dim, position_ids, dtype=torch.float32):
    """Qwen2VLRotaryEmbedding / Qwen3VLTextRotaryEmbedding: freqs [3, B, S, D/2]."""
    exponent = torch.arange(0, head_dim, 2, dtype=torch.int64).to(dtype=dtype) / head_dim
    inv_freq = 1.0 / (base ** exponent)
    inv_exp = inv_freq[None, None, :, None].expand(3, position_ids.shape[1], -1, 1)
    pos_exp = position_ids[:, :, None, :].to(dtype)
    return (inv_exp @ pos_exp).transpose(2, 3)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def hf_qwen2_vl(q, k, base, sections, position_ids, dtype=torch.float32):
    """apply_multimodal_rotary_pos_emb on q, k [B, H, S, D] (unsqueeze_dim 1)."""
    freqs = hf_freqs(base, q.shape[-1], position_ids, dtype)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()  # [3, B, S, D]
    split = list(sections) * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate(cos.split(split, dim=-1))], dim=-1).unsqueeze(1)
    sin = torch.cat([m[i % 3] for i, m in enumerate(sin.split(split, dim=-1))], dim=-1).unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def hf_qwen3_vl(q, k, base, sections, position_ids, dtype=torch.float32):
    """Qwen3VLTextRotaryEmbedding (apply_interleaved_mrope) + apply_rotary_pos_emb, q, k [B, H, S, D]."""
    freqs = hf_freqs(base, q.shape[-1], position_ids, dtype)
    out = freqs[0].clone()
    for dim, offset in ((1, 1), (2, 2)):
        idx = slice(offset, sections[dim] * 3, 3)
        out[..., idx] = freqs[dim, ..., idx]
    emb = torch.cat((out, out), dim=-1)
    cos, sin = emb.cos().unsqueeze(1), emb.sin().unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


CASES = {  # fixture: (HF formula, base, sections, kind posenc reads from the config)
    "qwen2_vl_7b": (hf_qwen2_vl, 1e6, (16, 24, 24), "sections"),
    "qwen3_vl_8b": (hf_qwen3_vl, 5e6, (24, 20, 20), "interleaved"),
}


def vision_positions():
    """[3, 2, 24] ids as Qwen2-VL's get_rope_index builds them: row 0 text, image 2x3x4, text;
    row 1 text, a video 2x2x2 grid, more text (t, h, w differ inside the grids), 4000 on: far
    into a context, where torch's float32 cos/sin blocks pick another range reduction (before
    posenc followed HF's blocks, a pair computed alone was an ULP off there)."""
    a = posenc.mrope_position_ids([3, (1, 3, 4), 9])
    b = posenc.mrope_position_ids([5, (2, 2, 2), 11]) + 4000
    assert a.shape == b.shape == (3, 24)
    return np.stack([a, b], axis=1)


def sample(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def close(got, want, x, what):
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    bound = BOUND * float(np.max(np.abs(x)))
    print("%s: max |err| %.3g (bound %.3g)" % (what, err, bound))
    return err <= bound


# ---- against HF ------------------------------------------------------------------

@pytest.mark.parametrize("tensor_layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("api", ["numpy", "torch"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vision_positions_match_hf_torch_compat(name, api, tensor_layout):
    """t/h/w differ; sections and kind come from the real config; q 4 heads, k 2 (GQA)."""
    formula, base, sections, kind = CASES[name]
    cfg = posenc.load_config(os.path.join(MODELS, name + ".json"))
    assert cfg.mrope_sections == sections and cfg.mrope_interleaved == (kind == "interleaved")
    pos = vision_positions()
    B, S, D = 2, pos.shape[2], 128
    q, k = sample((B, 4, S, D), 1), sample((B, 2, S, D), 2)  # HF's [B, H, S, D]
    want_q, want_k = formula(torch.from_numpy(q), torch.from_numpy(k), base, sections, torch.from_numpy(pos))
    if tensor_layout == "bshd":
        gq, gk = np.ascontiguousarray(q.transpose(0, 2, 1, 3)), np.ascontiguousarray(k.transpose(0, 2, 1, 3))
    else:
        gq, gk = q.copy(), k.copy()
    if api == "numpy":
        posenc.mrope_apply_(gq, gk, positions=pos, config=os.path.join(MODELS, name + ".json"), mode="torch",
                            tensor_layout=tensor_layout)
    else:
        tq, tk = torch.from_numpy(gq), torch.from_numpy(gk)
        pt.mrope_apply_(tq, tk, positions=torch.from_numpy(pos), config=cfg, mode="torch",
                        tensor_layout=tensor_layout)
    if tensor_layout == "bshd":
        gq, gk = gq.transpose(0, 2, 1, 3), gk.transpose(0, 2, 1, 3)
    for got, want, x, what in ((gq, want_q.numpy(), q, "q"), (gk, want_k.numpy(), k, "k")):
        same = np.array_equal(got, want)
        print("%s %s %s %s: %s" % (name, api, tensor_layout, what, "bit for bit" if same else "DIFFERENT"))
        assert same if EXACT else close(got, want, x, what)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vision_positions_precise_within_bound_of_hf_in_float64(name):
    formula, base, sections, kind = CASES[name]
    pos = vision_positions()
    q, k = sample((2, 3, pos.shape[2], 128), 3), sample((2, 1, pos.shape[2], 128), 4)
    want_q, want_k = formula(torch.from_numpy(q).double(), torch.from_numpy(k).double(), base, sections,
                             torch.from_numpy(pos), dtype=torch.float64)
    gq, gk = q.copy(), k.copy()
    posenc.mrope_apply_(gq, gk, positions=pos, sections=sections, kind=kind, base=base, tensor_layout="bhsd")
    assert close(gq, want_q.numpy(), q, name + " precise q") and close(gk, want_k.numpy(), k, name + " precise k")
    # the float32 HF formula is farther from float64 than posenc's precise mode is (the angle rounding)
    f32_q, _ = formula(torch.from_numpy(q), torch.from_numpy(k), base, sections, torch.from_numpy(pos))
    print("HF float32 vs float64: %.3g" % float(np.max(np.abs(f32_q.double().numpy() - want_q.numpy()))))


def test_three_dim_input_with_axes_by_tokens_positions():
    """[S, H, D] ("shd") and [S, D] with positions [3, S], against HF with B = 1."""
    pos = posenc.mrope_position_ids([2, (1, 2, 3), 4])
    S, D = pos.shape[1], 64
    x = sample((S, 5, D), 5)
    want, _ = hf_qwen2_vl(torch.from_numpy(x.transpose(1, 0, 2))[None], torch.zeros(1, 1, S, D), 10000.0,
                          (8, 12, 12), torch.from_numpy(pos)[:, None])
    got = x.copy()
    posenc.mrope_apply_(got, positions=pos, sections=[8, 12, 12], mode="torch", tensor_layout="shd")
    want = want[0].numpy().transpose(1, 0, 2)
    assert np.array_equal(got, want) if EXACT else close(got, want, x, "shd")
    flat = x[:, 0].copy()
    posenc.mrope_apply_(flat, positions=pos, sections=(8, 12, 12), mode="torch")
    assert np.array_equal(flat, got[:, 0])


# ---- text-only positions are the 1-D RoPE ----------------------------------------------

@pytest.mark.parametrize("mode", ["precise", "torch"])
@pytest.mark.parametrize("kind", ["sections", "interleaved"])
def test_text_positions_equal_apply_rope_bit_for_bit(kind, mode):
    B, S, H, D = 2, 40, 3, 128
    ids = np.stack([np.arange(S) + 7, np.arange(S) * 3 + 1000]).astype(np.int64)  # [B, S]
    x = sample((B, S, H, D), 6)
    one, multi = x.copy(), x.copy()
    posenc.apply_rope_(one, positions=ids, base=1e6, mode=mode, tensor_layout="bshd")
    posenc.mrope_apply_(multi, positions=np.stack([ids] * 3), sections=(16, 24, 24), kind=kind, base=1e6,
                        mode=mode, tensor_layout="bshd")
    print("%s %s: %d of %d values equal" % (kind, mode, int(np.sum(one == multi)), one.size))
    assert np.array_equal(one, multi) and not np.array_equal(one, x)


def test_inverse_round_trip_and_axial_kind():
    pos = vision_positions()
    x = sample((2, pos.shape[2], 2, 64), 7)
    y = x.copy()
    for kind in ("sections", "interleaved", "axial"):
        posenc.mrope_apply_(y, positions=pos, sections=(8, 12, 12), kind=kind, tensor_layout="bshd")
        assert not np.allclose(y, x)
        posenc.mrope_apply_(y, positions=pos, sections=(8, 12, 12), kind=kind, tensor_layout="bshd", inverse=True)
        assert np.max(np.abs(y - x)) < 1e-5, kind


def test_numpy_matches_cli_bits(tmp):
    """The CLI's `rope apply --mrope S --mrope-kind K --positions P.npy` on [T, H, D], same bits."""
    pos = posenc.mrope_position_ids([3, (2, 3, 4), 5])
    x = sample((pos.shape[1], 2, 128), 8)
    np.save(tmp / "x.npy", x)
    np.save(tmp / "p.npy", pos)
    for kind, sections in (("sections", (16, 24, 24)), ("interleaved", (24, 20, 20))):
        run_cli("rope", "apply", "--in", tmp / "x.npy", "--mrope", ",".join(map(str, sections)), "--mrope-kind",
                kind, "--positions", tmp / "p.npy", "--base", "1000000", "--torch-compat", "-o", tmp / "y.npy")
        got = x.copy()
        posenc.mrope_apply_(got, positions=pos, sections=sections, kind=kind, base=1e6, mode="torch",
                            tensor_layout="shd")
        assert np.array_equal(got, np.load(tmp / "y.npy")), kind


# ---- position ids -----------------------------------------------------------------

def test_mrope_position_ids_follow_get_rope_index():
    got = posenc.mrope_position_ids([2, (1, 2, 3), 2])
    want = np.array([[0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
                     [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
                     [0, 1, 2, 3, 4, 2, 3, 4, 5, 6]])
    assert got.dtype == np.int64 and np.array_equal(got, want)
    assert posenc.mrope_position_ids([]).shape == (3, 0)
    with pytest.raises(posenc.InvalidArgumentError, match=r"segment 1: grid must be >= 1 .* got 1x0x3"):
        posenc.mrope_position_ids([2, (1, 0, 3)])
    with pytest.raises(posenc.InvalidArgumentError, match=r"segments\[0\]: a grid is \(t, h, w\), got \(1, 2\)"):
        posenc.mrope_position_ids([(1, 2)])
    with pytest.raises(posenc.InvalidArgumentError, match=r"segments\[1\] must be an integer, got 2.5"):
        posenc.mrope_position_ids([1, 2.5])


# ---- refusals, before anything is written --------------------------------------------------

def _refused(cls, pattern, fn, *arrays):
    before = [a.clone() if isinstance(a, torch.Tensor) else a.copy() for a in arrays]
    with pytest.raises(cls, match=pattern) as info:
        fn()
    print(type(info.value).__name__, info.value)
    for a, b in zip(arrays, before):
        assert torch.equal(a, b) if isinstance(a, torch.Tensor) else np.array_equal(a, b), "written before the error"


def test_bad_dtypes_shapes_sections_and_options_are_refused_by_name():
    pos = posenc.mrope_position_ids([2, (1, 2, 3)])  # [3, 8]
    x = sample((8, 2, 128), 9)
    sec = dict(sections=(16, 24, 24), tensor_layout="shd")
    f16 = x.astype(np.float16)
    _refused(posenc.UnsupportedError, r"q: multi-axis RoPE rotates float32 only .*, got float16",
             lambda: posenc.mrope_apply_(f16, positions=pos, **sec), f16)
    _refused(posenc.UnsupportedError, r"k: multi-axis RoPE rotates float32 only .*, got float64",
             lambda: posenc.mrope_apply_(x, x.astype(np.float64), positions=pos, **sec), x)
    tb = torch.from_numpy(x).to(torch.bfloat16)
    _refused(posenc.UnsupportedError, r"q: multi-axis RoPE rotates float32 only .*, got torch.bfloat16",
             lambda: pt.mrope_apply_(tb, positions=pos, **sec), tb)
    _refused(posenc.InvalidArgumentError, r"positions must be \[axes, S\] = \[3, 8\] or \[axes, B, S\] = "
             r"\[3, 1, 8\] .*got shape \(3, 7\)", lambda: posenc.mrope_apply_(x, positions=pos[:, :7], **sec), x)
    _refused(posenc.InvalidArgumentError, r"got shape \(2, 8\)",
             lambda: posenc.mrope_apply_(x, positions=pos[:2], **sec), x)
    _refused(posenc.InvalidArgumentError, r"got shape \(8,\)",
             lambda: posenc.mrope_apply_(x, positions=pos[0], **sec), x)
    _refused(posenc.UnsupportedError, r"positions must be integers, got dtype float64",
             lambda: posenc.mrope_apply_(x, positions=pos.astype(float), **sec), x)
    _refused(posenc.InvalidArgumentError, r"positions are required",
             lambda: posenc.mrope_apply_(x, sections=(16, 24, 24), tensor_layout="shd"), x)
    _refused(posenc.InvalidArgumentError, r"k is an integer array: positions are keyword-only",
             lambda: posenc.mrope_apply_(x, pos, **sec), x)
    _refused(posenc.InvalidArgumentError, r"sections \(16, 24, 20\), kind sections: sections must add up to "
             r"rotary_dim/2 = 64 pairs, got 60", lambda: posenc.mrope_apply_(x, positions=pos, sections=(16, 24, 20),
                                                                            tensor_layout="shd"), x)
    _refused(posenc.InvalidArgumentError, r"sections\[1\] must be >= 0, got -24",
             lambda: posenc.mrope_apply_(x, positions=pos, sections=(16, -24, 72), tensor_layout="shd"), x)
    _refused(posenc.InvalidArgumentError, r"sections must list 1 to 4 pair counts, got 5",
             lambda: posenc.mrope_apply_(x, positions=pos, sections=(16, 24, 8, 8, 8), tensor_layout="shd"), x)
    _refused(posenc.InvalidArgumentError, r"sections must be 1 to 4 pair counts.*got '16,24,24'",
             lambda: posenc.mrope_apply_(x, positions=pos, sections="16,24,24", tensor_layout="shd"), x)
    _refused(posenc.InvalidArgumentError, r"kind must be one of axial, interleaved, sections, got 'imrope'",
             lambda: posenc.mrope_apply_(x, positions=pos, kind="imrope", **sec), x)
    _refused(posenc.InvalidArgumentError, r"sections are required",
             lambda: posenc.mrope_apply_(x, positions=pos, tensor_layout="shd"), x)
    llama = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 2, "rope_theta": 10000.0}
    _refused(posenc.InvalidArgumentError, r"config \(llama\) has no M-RoPE sections",
             lambda: posenc.mrope_apply_(x, positions=pos, config=llama, tensor_layout="shd"), x)
    _refused(posenc.KeywordError, r"multi-axis RoPE takes no offset=",
             lambda: posenc.mrope_apply_(x, positions=pos, offset=3, **sec), x)
    _refused(posenc.KeywordError, r"multi-axis RoPE takes no threads=",
             lambda: posenc.mrope_apply_(x, positions=pos, threads=2, **sec), x)
    _refused(posenc.KeywordError, r"unknown keyword argument 'section' \(did you mean 'sections'\?\)",
             lambda: posenc.mrope_apply_(x, positions=pos, section=(16, 24, 24), tensor_layout="shd"), x)
    _refused(posenc.InvalidArgumentError, r"head_dim=64 but q's last axis is 128",
             lambda: posenc.mrope_apply_(x, positions=pos, head_dim=64, **sec), x)
    _refused(posenc.InvalidArgumentError, r"tensor_layout is required for a 3-D q",
             lambda: posenc.mrope_apply_(x, positions=pos, sections=(16, 24, 24)), x)
    _refused(posenc.InvalidArgumentError, r"q and k share memory",
             lambda: posenc.mrope_apply_(x, x, positions=pos, **sec), x)
    big = pos.copy()
    big[1, 5] = 2 ** 53
    q4 = sample((2, 2, 8, 128), 10)  # bhsd: one call per (batch, head), so the probe must catch it first
    _refused(posenc.Error, r"2\^53|9007199254740992",
             lambda: posenc.mrope_apply_(q4, positions=np.stack([pos, big], axis=1), sections=(16, 24, 24),
                                         tensor_layout="bhsd"), q4)
    dyn = dict(sections=(16, 24, 24), tensor_layout="shd", scaling="dynamic", factor=2.0, max_position=4)
    _refused(posenc.UnsupportedError, r"positions reach 4, past the trained length: dynamic scaling",
             lambda: posenc.mrope_apply_(x, positions=pos, **dyn), x)
    t = torch.from_numpy(x.copy()).requires_grad_()
    with pytest.raises(posenc.InvalidArgumentError, match="q requires grad"):
        pt.mrope_apply_(t, positions=pos, **sec)


def test_config_object_path_dict_and_model_give_the_same_rotation():
    path = os.path.join(MODELS, "qwen3_vl_8b.json")
    pos = vision_positions()
    x = sample((2, 4, pos.shape[2], 128), 11)
    outs = []
    for config in (path, fixture("qwen3_vl_8b"), posenc.load_config(path), posenc.rope.load_config(path)):
        y = x.copy()
        posenc.mrope_apply_(y, positions=pos, config=config, tensor_layout="bhsd")
        outs.append(y)
    explicit = x.copy()
    posenc.mrope_apply_(explicit, positions=pos, sections=(24, 20, 20), kind="interleaved", base=5e6,
                        tensor_layout="bhsd")
    assert all(np.array_equal(o, explicit) for o in outs)
    contiguous = x.copy()  # the same sections contiguous (Qwen2-VL's kind) rotate differently
    posenc.mrope_apply_(contiguous, positions=pos, config=path, kind="sections", tensor_layout="bhsd")
    assert not np.array_equal(contiguous, explicit)


def test_empty_is_a_no_op_after_checks():
    x = np.zeros((0, 2, 128), np.float32)
    posenc.mrope_apply_(x, positions=np.zeros((3, 0), np.int64), sections=(16, 24, 24), tensor_layout="shd")
    with pytest.raises(posenc.InvalidArgumentError, match="must add up"):
        posenc.mrope_apply_(x, positions=np.zeros((3, 0), np.int64), sections=(16, 24, 23), tensor_layout="shd")


def qwen2_vl_with_sections(tmp, sections):
    """Qwen2-VL's config with rope_scaling.mrope_section replaced, written under tmp; its path."""
    cfg = fixture("qwen2_vl_7b")
    cfg["rope_scaling"] = dict(cfg["rope_scaling"], mrope_section=sections)
    path = os.path.join(tmp, "qwen2_vl_" + "_".join(map(str, sections)) + ".json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


def test_a_zero_section_in_the_middle_keeps_the_axes_after_it(tmp):
    """mrope_section [16, 0, 48]: HF's split gives h no pairs and w 48; read as (16, 0, 48) by
    the config readers (before: the zero was dropped, (16, 48), and w's pairs went to h)."""
    path = qwen2_vl_with_sections(tmp, [16, 0, 48])
    assert posenc.load_config(path).mrope_sections == (16, 0, 48)
    pos = vision_positions()
    q = sample((2, 4, pos.shape[2], 128), 21)
    k = sample((2, 2, pos.shape[2], 128), 22)
    want_q, want_k = hf_qwen2_vl(torch.from_numpy(q), torch.from_numpy(k), 1e6, (16, 0, 48), torch.from_numpy(pos))
    got_q, got_k = q.copy(), k.copy()
    posenc.mrope_apply_(got_q, got_k, positions=pos, config=path, mode="torch", tensor_layout="bhsd")
    if EXACT:
        assert np.array_equal(got_q, want_q.numpy()) and np.array_equal(got_k, want_k.numpy())
    else:
        assert close(got_q, want_q.numpy(), q, "zero section q") and close(got_k, want_k.numpy(), k, "zero section k")
    done = run_cli("rope", "explain", "--config", path, "--json")
    assert '"mrope_sections": [16, 0, 48]' in done.stdout, done.stdout[-400:]


def test_a_zero_first_section_is_still_multi_axis(tmp):
    """mrope_section [0, 32, 32]: t gets no pairs. Read as (0, 32, 32), applied as HF splits it,
    and `rope explain` names the sections (before: its text said nothing of M-RoPE when the
    first section was 0)."""
    path = qwen2_vl_with_sections(tmp, [0, 32, 32])
    assert posenc.load_config(path).mrope_sections == (0, 32, 32)
    pos = vision_positions()
    q = sample((2, 4, pos.shape[2], 128), 23)
    want_q, _ = hf_qwen2_vl(torch.from_numpy(q), torch.from_numpy(q.copy()), 1e6, (0, 32, 32), torch.from_numpy(pos))
    got_q = q.copy()
    posenc.mrope_apply_(got_q, positions=pos, config=path, mode="torch", tensor_layout="bhsd")
    if EXACT:
        assert np.array_equal(got_q, want_q.numpy())
    else:
        assert close(got_q, want_q.numpy(), q, "zero first section q")
    done = run_cli("rope", "explain", "--config", path)
    assert "M-RoPE sections (pairs per t/h/w axis): 0, 32, 32" in done.stdout, done.stdout[-600:]


# ---- posenc.torch.mrope_apply: differentiable ---------------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_differentiable_apply_matches_hf_forward_and_gradient(name):
    """posenc.torch.mrope_apply against HF's formula run through torch autograd (float32):
    the forward as mrope_apply_ (bit for bit here, the torch-compat rule elsewhere), and the
    gradient of sum(y * g): HF's autograd forms g*cos + rotate_half^T(g*sin), the same
    products and sum as posenc's inverse rotation, so it is held to the same bound."""
    formula, base, sections, kind = CASES[name]
    path = os.path.join(MODELS, name + ".json")
    pos = vision_positions()
    x = sample((2, 4, pos.shape[2], 128), 31)
    g = torch.from_numpy(sample(x.shape, 32))
    mine = torch.from_numpy(x.copy()).requires_grad_(True)
    y = pt.mrope_apply(mine, positions=torch.from_numpy(pos), config=path, mode="torch", tensor_layout="bhsd")
    assert y.requires_grad and y.shape == mine.shape and y.dtype == torch.float32
    (y * g).sum().backward()
    ref = torch.from_numpy(x.copy()).requires_grad_(True)
    want, _ = formula(ref, ref.detach(), base, sections, torch.from_numpy(pos))
    (want * g).sum().backward()
    for got, exp, scale, what in ((y.detach().numpy(), want.detach().numpy(), x, "forward"),
                                  (mine.grad.numpy(), ref.grad.numpy(), g.numpy(), "gradient")):
        same = np.array_equal(got, exp)
        print("%s %s: %s" % (name, what, "bit for bit" if same else "DIFFERENT"))
        assert same if EXACT else close(got, exp, scale, what)
    # the input is left alone (out of place)
    assert np.array_equal(mine.detach().numpy(), x)


def test_differentiable_apply_is_its_own_adjoint_with_an_attention_factor():
    """<R x, g> = <x, R^T g> for a YaRN rotation (attention factor 0.1 ln 4 + 1 = 1.1386..., so
    the backward's A^2 matters), both layouts and the three kinds; float64 sums, relative 1e-6."""
    pos = vision_positions()
    for layout in ("neox", "gptj"):
        for kind, sections in (("sections", (16, 24, 24)), ("interleaved", (24, 20, 20)), ("axial", (16, 24, 24))):
            x = torch.from_numpy(sample((2, pos.shape[2], 3, 128), 41)).requires_grad_(True)
            g = torch.from_numpy(sample((2, pos.shape[2], 3, 128), 42))
            y = pt.mrope_apply(x, positions=pos, sections=sections, kind=kind, layout=layout, tensor_layout="bshd",
                               base=1e6, scaling="yarn", factor=4.0, original_max_position=32768)
            (y * g).sum().backward()
            left = float((y.detach().double() * g.double()).sum())
            right = float((x.detach().double() * x.grad.double()).sum())
            assert abs(left - right) <= 1e-6 * max(abs(left), 1.0), (layout, kind, left, right)
            # and the scale is A: |R x| = A |x| pair by pair
            ratio = float(y.detach().double().norm() / x.detach().double().norm())
            assert abs(ratio - (0.1 * np.log(4.0) + 1.0)) < 1e-5, (layout, kind, ratio)


def test_differentiable_apply_refuses_by_name():
    pos = vision_positions()
    x = torch.zeros((2, 4, pos.shape[2], 128), dtype=torch.float16, requires_grad=True)
    with pytest.raises(posenc.UnsupportedError, match="float32 only"):
        pt.mrope_apply(x, positions=pos, sections=(16, 24, 24), tensor_layout="bhsd")
    x = torch.zeros((2, 4, pos.shape[2], 128), requires_grad=True)
    with pytest.raises(posenc.InvalidArgumentError, match="positions are required"):
        pt.mrope_apply(x, sections=(16, 24, 24), tensor_layout="bhsd")
    with pytest.raises(posenc.InvalidArgumentError, match="must add up"):
        pt.mrope_apply(x, positions=pos, sections=(16, 24, 23), tensor_layout="bhsd")
    with pytest.raises(posenc.UnsupportedError, match="torch.Tensor"):
        pt.mrope_apply(x.detach().numpy(), positions=pos, sections=(16, 24, 24), tensor_layout="bhsd")
