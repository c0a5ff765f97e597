"""posenc RoPE from Python against the peer goldens (the ones tests/test_rope_golden.c uses)
and against the C tool (`posenc rope apply`) bit for bit.

Tolerances (as the C test states them): torch-compat vs HF 0 ULP (we repeat HF's float32
steps with torch's SLEEF functions; 1 ULP in cos/sin, 2 after a rotation, without AVX2+FMA);
precise vs HF inv_freq rtol 2e-6 (HF rounds the exponent 2k/d to float32); precise apply vs
HF atol 1e-5 at positions 0..36, 2e-4 at 1000..1036 (HF's float32 angle p*w is off by up
to p * 2^-24 rad). Against the C tool: identical bits (same library, same call)."""
import numpy as np
import pytest

import posenc
from conftest import avx2_fma, golden, manifest, run_cli, ulp_f32

TRIG_ULP = 0 if avx2_fma() else 1
# The HF goldens (tests/golden/manifest.json) were made by Debian's torch 1.13.0a0, whose float32
# cos/sin are SLEEF u10 on AVX2. posenc's torch-compat now follows the torch in this process
# (torch 2.x's AVX-512 kernels on this CPU, or torch's MKL VML through POSENC_TORCH_MKL), which
# differs from that build by <= 1 ULP in a few values: 1 ULP per cos/sin (2 per rotated value).
# Exactness against the running torch is test_torch.py's and test_hf.py's (live torch, 0 ULP);
# goldens regenerated with torch 2.13 would restore 0 here.
GOLDEN_TRIG_ULP = 1
MANIFEST = manifest()
INVFREQ = sorted(k for k in MANIFEST if k.startswith("hf_rope_invfreq_"))


def test_manifest_has_cases():
    assert len(INVFREQ) >= 60, "expected the HF inv_freq goldens, found %d" % len(INVFREQ)


@pytest.mark.parametrize("case", INVFREQ)
def test_invfreq_from_config_dict(case):
    """RopeParams.from_config(dict) -> rope_frequencies vs HF's inv_freq and attention factor."""
    entry = MANIFEST[case]
    config = entry["params"]["config"]
    seq_len = entry["params"].get("seq_len") or 0
    want = golden(case)
    torch_mode = posenc.rope_frequencies(config=config, seq_len=seq_len, mode="torch")
    ulp, at = ulp_f32(torch_mode.inv_freq.astype(np.float32), want)
    print("%s torch-compat: %d ULP at pair %d" % (case, ulp, at))
    assert ulp == 0
    precise = posenc.rope_frequencies(config=config, seq_len=seq_len)
    rel = np.max(np.abs(precise.inv_freq - want) / np.abs(want))
    print("%s precise: max rel %.3g (tol 2e-6)" % (case, rel))
    assert rel <= 2e-6
    scaling = config.get("rope_scaling") or {}
    # the golden's HF (~v4.47, manifest hf_versions_note) has no yarn mscale/mscale_all_dim;
    # the config importer follows current HF, which reads them: compare only without them
    if "attention_factor" in entry and "mscale" not in scaling:
        print("attention factor %.17g vs %.17g" % (precise.attention_factor, entry["attention_factor"]))
        assert abs(precise.attention_factor - entry["attention_factor"]) <= 1e-6 * entry["attention_factor"]


COS_SIN = sorted(k for k in MANIFEST if k.startswith("hf_llama_rotary_cos_"))


@pytest.mark.parametrize("case", COS_SIN)
def test_hf_cos_sin_tables(case):
    """rope_cos_sin(duplicate="half") in torch-compat mode vs LlamaRotaryEmbedding.forward."""
    entry = MANIFEST[case]
    p = entry["params"]
    if "config_case" in p:
        config = MANIFEST[p["config_case"]]["params"]["config"]
    else:
        config = p["config"]
    first, last = (int(v) for v in p["position_ids"].split(".."))
    positions = np.arange(first, last + 1)
    for which in ("cos", "sin"):
        want = golden(case.replace("_cos_", "_" + which + "_"))
        cos, sin = posenc.rope_cos_sin(config=config, positions=positions, duplicate="half", mode="torch",
                                       seq_len=last + 1)
        got = cos if which == "cos" else sin
        ulp, at = ulp_f32(got, want)
        print("%s %s: %d ULP at %d (tol %d)" % (case, which, ulp, at, GOLDEN_TRIG_ULP))
        assert ulp <= GOLDEN_TRIG_ULP


def formula_input():
    return golden("input_formula_T37_H3_D64")


NEOX = [("hf_neox_apply_q_default_hd64_base10000_pos0", "hf_rope_invfreq_default_hd64_base10000", 0),
        ("hf_neox_apply_q_default_hd64_base10000_pos1000", "hf_rope_invfreq_default_hd64_base10000", 1000),
        ("hf_neox_apply_q_default_hd64_base500000_pos0", "hf_rope_invfreq_default_hd64_base500000", 0),
        ("hf_neox_apply_q_llama3_f8_orig8192_hd64_base500000_pos1000",
         "hf_rope_invfreq_llama3_f8_orig8192_hd64_base500000", 1000),
        ("hf_neox_apply_q_yarn_f4_hd64_base10000_pos0", "hf_rope_invfreq_yarn_f4_hd64_base10000", 0)]


@pytest.mark.parametrize("case,config_case,start", NEOX)
def test_neox_apply_golden(case, config_case, start):
    config = MANIFEST[config_case]["params"]["config"]
    want = golden(case)
    for mode in ("torch", "precise"):
        x = formula_input().copy()
        posenc.apply_rope_(x, offset=start, layout="neox", config=config, mode=mode, seq_len=0, tensor_layout="bshd")
        if mode == "torch":
            ulp, at = ulp_f32(x, want)
            # a cos/sin 1 ULP (<= 2^-24) off moves a*c - b*s by <= 2^-24 (|a| + |b|) <= 2^-23 max|x|
            # (plus the rounding of the result, 2^-24 |y|): ULPs of a cancelling sum say nothing here
            err = float(np.max(np.abs(x.astype(np.float64) - want)))
            tol = 0.0 if GOLDEN_TRIG_ULP == 0 else 2.0 ** -22 * float(np.max(np.abs(formula_input())))
            print("%s torch-compat: %d ULP at %d, max abs %.3g (tol %.3g)" % (case, ulp, at, err, tol))
            assert err <= tol
        else:
            err = np.max(np.abs(x.astype(np.float64) - want))
            tol = 2e-4 if start else 1e-5
            print("%s precise: max abs %.3g (tol %g)" % (case, err, tol))
            assert err <= tol


@pytest.mark.parametrize("rotary_dim", [32, 64])
@pytest.mark.parametrize("start", [0, 1000])
def test_gptj_apply_golden(rotary_dim, start):
    want = golden("hf_gptj_apply_q_rotarydim%d_pos%d" % (rotary_dim, start))
    x = formula_input().copy()
    posenc.apply_rope_(x, offset=start, layout="gptj", rotary_dim=rotary_dim, tensor_layout="bshd", base=10000.0)
    err = np.max(np.abs(x.astype(np.float64) - want))
    tol = 2e-4 if start else 1e-5
    print("gptj rotary_dim %d pos %d precise: max abs %.3g (tol %g)" % (rotary_dim, start, err, tol))
    assert err <= tol
    # pass-through channels keep their bits
    assert np.array_equal(x[..., rotary_dim:].view(np.uint32), formula_input()[..., rotary_dim:].view(np.uint32))


def test_deepseek_freqs_cis():
    """YaRN from flags vs DeepSeek-V3's precompute_freqs_cis (unit magnitude, interleaved)."""
    want = golden("deepseek_v3_freqs_cis_v3default")  # [74, 32, 2] (cos, sin)
    positions = np.concatenate([np.arange(37), np.arange(1000, 1037)])
    cos, sin = posenc.rope_cos_sin(head_dim=64, positions=positions, scaling="yarn", factor=40,
                                   original_max_position=4096, fold_attention=False, seq_len=16384)
    err = max(np.max(np.abs(cos - want[..., 0])), np.max(np.abs(sin - want[..., 1])))
    print("deepseek freqs_cis: max abs %.3g (tol 2e-4)" % err)
    assert err <= 2e-4


# ---- bit for bit against the C tool ------------------------------------------------

def _cli_rotate(tmp, x_bits, dtype, args):
    src, dst = tmp / "x.npy", tmp / "y.npy"
    np.save(src, x_bits)
    extra = ["--bf16"] if dtype == "bf16" else []
    run_cli("rope", "apply", "--in", src, *extra, *args, "-o", dst)
    return np.load(dst)


def _sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if dtype == "f16":
        return x.astype(np.float16)
    if dtype == "bf16":
        return (x.view(np.uint32) >> 16).astype(np.uint16)  # truncated = exact bf16 values
    return x


CLI_CASES = [
    # (flags for python, CLI args)
    (dict(layout="neox"), ["--layout", "neox"]),
    (dict(layout="gptj", rotary_dim=32), ["--layout", "gptj", "--rotary-dim", "32"]),
    (dict(layout="neox", base=500000, scaling="yarn", factor=4, original_max_position=4096, mode="torch"),
     ["--layout", "neox", "--base", "500000", "--scaling", "yarn", "--factor", "4", "--original-max", "4096",
      "--torch-compat"]),
    (dict(layout="neox", partial_rotary_factor=0.5, scaling="dynamic", factor=2, max_position=64),
     ["--partial", "0.5", "--scaling", "dynamic", "--factor", "2", "--max-pos", "64"]),
]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("case", range(len(CLI_CASES)))
def test_numpy_apply_matches_cli_bits(tmp, dtype, case):
    flags, args = CLI_CASES[case]
    T, H, D = 100, 4, 64
    x = _sample((T, H, D), dtype, seed=case)
    positions = np.random.default_rng(7).integers(0, 5000, T).astype(np.int64)
    np.save(tmp / "p.npy", positions)
    want = _cli_rotate(tmp, x, dtype, args + ["--positions", str(tmp / "p.npy")])
    got = x.copy()
    posenc.apply_rope_(got, positions=positions, dtype="bf16" if dtype == "bf16" else None, **dict(dict(base=10000.0), **flags), tensor_layout="bshd")
    same = np.array_equal(got.view(np.uint16 if dtype != "f32" else np.uint32),
                          want.view(np.uint16 if dtype != "f32" else np.uint32))
    print("numpy %s case %d: %s, %d elements changed" % (dtype, case, "identical" if same else "DIFFERENT",
                                                        int(np.sum(got != x))))
    assert same


def test_numpy_bhsd_and_batch_offsets_match_cli(tmp):
    """[B, H, S, D] with one offset per batch row equals the CLI per row (--start), transposed."""
    B, H, S, D = 3, 4, 20, 32
    x = _sample((B, H, S, D), "f32", seed=3)
    got = x.copy()
    offsets = np.array([0, 17, 1000])
    posenc.apply_rope_(got, offset=offsets, tensor_layout="bhsd", layout="neox", base=500000)
    for b in range(B):
        want = _cli_rotate(tmp, np.ascontiguousarray(x[b].transpose(1, 0, 2)), "f32",
                           ["--start", offsets[b], "--base", "500000"])
        assert np.array_equal(got[b].transpose(1, 0, 2), want), "batch row %d differs" % b
    print("bhsd, 3 offsets: identical to the CLI per row")


def test_inverse_round_trip_and_untouched_passthrough():
    x = _sample((16, 2, 64), "f32", seed=5)
    y = x.copy()
    posenc.apply_rope_(y, offset=3, rotary_dim=48, layout="gptj", tensor_layout="bshd", base=10000.0)
    assert np.array_equal(y[..., 48:], x[..., 48:])
    posenc.apply_rope_(y, offset=3, rotary_dim=48, layout="gptj", inverse=True, tensor_layout="bshd", base=10000.0)
    err = np.max(np.abs(y - x))
    print("inverse round trip max abs %.3g (tol 1e-6)" % err)
    assert err <= 1e-6


def test_rope_params_from_config_path_dict_and_object(tmp):
    cfg = {"model_type": "llama", "rope_theta": 500000.0, "hidden_size": 4096, "num_attention_heads": 32,
           "max_position_embeddings": 131072,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192}}
    path = tmp / "config.json"
    path.write_text(__import__("json").dumps(cfg))

    class FakeHFConfig:
        def to_dict(self):
            return dict(cfg)

    a = posenc.RopeParams.from_config(str(path))
    b = posenc.RopeParams.from_config(cfg)
    c = posenc.RopeParams.from_config(FakeHFConfig())
    assert a == b == c
    assert (a.head_dim, a.scaling, a.factor, a.base, a.layout) == (128, "llama3", 8.0, 500000.0, "half")
    mc = posenc.load_config(cfg)
    assert mc.architecture == "llama" and mc.layout_known


def test_errors_leave_numpy_untouched():
    x = _sample((8, 2, 64), "f32")
    before = x.copy()
    cases = [
        (dict(rotary_dim=63), posenc.InvalidArgumentError, "rotary"),
        (dict(positions=np.arange(5)), posenc.InvalidArgumentError, "positions has 5 entries"),
        (dict(layout="diagonal"), posenc.InvalidArgumentError, "layout"),
        (dict(scaling="yarn", factor=4), posenc.InvalidArgumentError, "original"),
        (dict(base=float("nan")), posenc.InvalidArgumentError, "base"),
    ]
    for kwargs, cls, words in cases:
        with pytest.raises(cls) as info:
            posenc.apply_rope_(x, **dict(dict(base=10000.0), **kwargs), tensor_layout="bshd")
        print("%s -> %s: %s" % (kwargs, cls.__name__, info.value))
        assert words in str(info.value)
        assert np.array_equal(x, before)
    with pytest.raises(posenc.UnsupportedError, match="float32, float16"):
        posenc.apply_rope_(x.astype(np.float64), tensor_layout="bshd", base=10000.0)
    with pytest.raises(posenc.UnsupportedError, match="stride 1"):
        posenc.apply_rope_(np.asfortranarray(x), tensor_layout="bshd", base=10000.0)
    ro = x.copy()
    ro.setflags(write=False)
    with pytest.raises(posenc.InvalidArgumentError, match="read-only"):
        posenc.apply_rope_(ro, tensor_layout="bshd", base=10000.0)
    # a probe keeps multi-call applies all-or-nothing: torch-compat angle overflow in the
    # last batch row must leave the first rows alone
    y = _sample((3, 4, 5, 64), "f32")  # [B, H, S, D]
    y_before = y.copy()
    pos = np.tile(np.arange(1, 6), (3, 1))  # non-zero angles: a written row would show
    pos[2, 4] = 2 ** 40  # below the |p| < 2^53 rule; p * 1e30 overflows float32
    with pytest.raises(posenc.InvalidArgumentError, match="overflows") as info:
        posenc.apply_rope_(y, positions=pos, tensor_layout="bhsd", mode="torch", scaling="linear", factor=1e-30, base=10000.0)
    print("torch-compat angle:", info.value)
    assert np.array_equal(y, y_before)
    # the positions rule |p| < 2^53 (every apply entry point), also all-or-nothing
    pos[2, 4] = 2 ** 53
    with pytest.raises(posenc.InvalidArgumentError, match=r"2\^53") as info:
        posenc.apply_rope_(y, positions=pos, tensor_layout="bhsd", base=10000.0)
    print("positions rule:", info.value)
    assert np.array_equal(y, y_before)
    # inf/NaN results (issue 13): NonFiniteError names the first bad value, after q and k are
    # both rotated in full (the same values a call that allows them would write)
    q = (np.random.RandomState(0).randn(1, 4, 2, 16) * 2).astype(np.float16)  # [B, S, H, D]
    k = q.copy()
    with pytest.raises(posenc.NonFiniteError, match=r"q: rotated value at token 0 \(position 0\), head 0, "
                       r"channel 0 is inf: the rotation scaled by the attention factor 100000 overflows f16"):
        posenc.apply_rope_(q, k, scaling="yarn", factor=4, original_max_position=4096, attention_factor=1e5, tensor_layout="bshd", base=10000.0)
    assert np.isinf(q).any() and np.isinf(k).any() and np.array_equal(q, k)


def test_rope_check_and_frequencies_flags():
    p = posenc.RopeParams(head_dim=128, partial_rotary_factor=0.25)
    assert p.check() == 32
    f = posenc.rope_frequencies(p)
    assert f.inv_freq.shape == (16,) and f.attention_factor == 1.0
    assert abs(f.inv_freq[1] - 10000 ** (-2 / 32)) < 1e-15


GGML = [(mode, kind, nd, start) for mode in ("normal", "neox") for kind in ("plain", "linear0.25", "yarn")
        for nd in (32, 64) for start in (0, 1000)]


@pytest.mark.parametrize("mode,kind,n_dims,start", GGML)
def test_ggml_rope_golden(mode, kind, n_dims, start):
    """ggml_rope_ext (NORMAL = interleaved, NEOX = half), as tests/test_rope_golden.c maps it:
    n_dims = rotary_dim; freq_scale 0.25 = linear factor 4; YaRN ext_factor 1 with
    n_ctx_orig 4096 = yarn factor 4, original 4096. Precise, atol 1e-5 / 2e-4 (ggml's float32)."""
    flags = dict(rotary_dim=n_dims, base=10000.0)
    if kind == "linear0.25":
        flags.update(scaling="linear", factor=4)
    elif kind == "yarn":
        flags.update(scaling="yarn", factor=4, original_max_position=4096)
    x = formula_input().copy()
    posenc.apply_rope_(x, offset=start, layout="neox" if mode == "neox" else "gptj", seq_len=0, **flags, tensor_layout="bshd")
    want = golden("ggml_rope_%s_%s_ndims%d_pos%d" % (mode, kind, n_dims, start))
    err = np.max(np.abs(x.astype(np.float64) - want))
    tol = 2e-4 if start else 1e-5
    print("ggml %s %s n_dims %d pos %d: max abs %.3g (tol %g)" % (mode, kind, n_dims, start, err, tol))
    assert err <= tol


@pytest.mark.parametrize("case", ["v3default", "mscale0.707", "noyarn_maxseq4096"])
def test_deepseek_apply_golden(case):
    """DeepSeek-V3 apply_rotary_emb (interleaved complex pairs); mscale goes to the softmax
    scale, so the attention factor is pinned to 1; no YaRN when max_seq_len <= original."""
    flags = dict(base=10000.0) if case.startswith("noyarn") else dict(
        base=10000.0, scaling="yarn", factor=40, original_max_position=4096, attention_factor=1.0)
    x = formula_input().copy()
    posenc.apply_rope_(x, layout="gptj", seq_len=0, **flags, tensor_layout="bshd")
    want = golden("deepseek_v3_apply_rotary_%s_pos0" % case)
    err = np.max(np.abs(x.astype(np.float64) - want))
    print("deepseek %s: max abs %.3g (tol 1e-5)" % (case, err))
    assert err <= 1e-5


def test_layout_names_neox_is_half_gptj_is_interleaved():
    """The one vocabulary: "neox" = "half" (pairs (k, k+R/2)), "gptj" = "interleaved"
    (pairs (2k, 2k+1)), for rotations and additive tables alike; results say half/interleaved."""
    x = _sample((6, 2, 64), "f32")
    rotated = {}
    for name in ("neox", "half", "gptj", "interleaved"):
        y = x.copy()
        posenc.apply_rope_(y, layout=name, tensor_layout="bshd", base=10000.0)
        rotated[name] = y
    assert np.array_equal(rotated["neox"], rotated["half"])
    assert np.array_equal(rotated["gptj"], rotated["interleaved"])
    assert not np.array_equal(rotated["neox"], rotated["gptj"])
    # half: channel 0 pairs with channel 32; interleaved: with channel 1 (position 1, pair 0 turns 1 rad)
    c, s = np.cos(np.float32(1)), np.sin(np.float32(1))
    assert abs(rotated["half"][1, 0, 0] - (x[1, 0, 0] * c - x[1, 0, 32] * s)) < 1e-6
    assert abs(rotated["gptj"][1, 0, 0] - (x[1, 0, 0] * c - x[1, 0, 1] * s)) < 1e-6
    assert np.array_equal(posenc.sinusoid_table(8, 16, layout="neox"), posenc.sinusoid_table(8, 16, layout="half"))
    assert np.array_equal(posenc.sinusoid_table(8, 16, layout="gptj"),
                          posenc.sinusoid_table(8, 16, layout="interleaved"))
    assert posenc.load_config({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64}).layout \
        == "interleaved"
    assert posenc.load_config({"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 8}).layout \
        == "half"
    print("neox == half, gptj == interleaved: bit-identical rotations and tables")


def test_model_config_fields_and_free(tmp):
    """ModelConfig mirrors posenc_model_config (M-RoPE sections, family, head dims, the
    unknown-family warning with the keys read); a malformed document raises FormatError."""
    cfg = posenc.load_config({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28,
                              "num_hidden_layers": 28, "max_position_embeddings": 32768,
                              "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})
    print(cfg)
    assert cfg.family != "" and cfg.num_hidden_layers == 28 and cfg.mrope_sections == (16, 24, 24)
    assert cfg.attention_head_dim == 128 and cfg.rotary_offset == 0 and cfg.softmax_head_dim == 128
    assert cfg.layer_types == () and isinstance(cfg.defaults_used, str) and cfg.mrope_interleaved is False
    q3 = posenc.load_config({"model_type": "qwen3_vl", "text_config": {"model_type": "qwen3_vl_text", "head_dim": 128,
                             "rope_theta": 5000000, "rope_scaling": {"mrope_interleaved": True,
                                                                     "mrope_section": [24, 20, 20]}}})
    assert q3.family == "qwen3_vl" and q3.mrope_sections == (24, 20, 20) and q3.mrope_interleaved is True
    assert q3.rope.base == 5e6 and q3.num_hidden_layers == 32  # Qwen3VLTextConfig's 32 layers
    with pytest.raises(posenc.UnsupportedError, match="mystery_lm"):  # issue 23: refused by name, no guess
        posenc.load_config({"model_type": "mystery_lm", "hidden_size": 256, "num_attention_heads": 4})
    with pytest.raises(posenc.FormatError):
        posenc.load_config(str(_write(tmp / "bad.json", "{")))


def _write(path, text):
    path.write_text(text)
    return path
