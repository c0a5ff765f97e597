"""Tables as NumPy arrays against the peer goldens tests/test_sinusoidal.c and
tests/test_grid.c use, with their tolerances: torch-compat 0 ULP (same SLEEF functions,
same operation order); precise vs torch float32 7.7e-6 absolute (torch's angle p*w is off
by <= p 2^-24, p < 64, plus w's rounding); tatp22 1-D precise 2e-6 (p < 10)."""
import numpy as np
import pytest

import posenc
from conftest import golden, run_cli, ulp_f32


@pytest.mark.parametrize("name,dim,length", [("tutorial_pe_d64_len50_float32", 64, 50),
                                             ("tutorial_pe_d1024_len64_float32", 1024, 64)])
def test_pytorch_tutorial(name, dim, length):
    want = golden(name)
    got = posenc.sinusoid_table(length, dim, mode="torch")
    assert got.dtype == np.float32 and got.shape == (length, dim)
    ulp, at = ulp_f32(got, want)
    print("%s torch-compat: %d ULP at %d (tol 0)" % (name, ulp, at))
    assert ulp == 0
    err = np.max(np.abs(posenc.sinusoid_table(length, dim).astype(np.float64) - want))
    print("%s precise: max abs %.3g (tol 7.7e-6)" % (name, err))
    assert err <= 7.7e-6


def test_pytorch_tutorial_float64():
    want = golden("tutorial_pe_d64_len50_float64")
    err = np.max(np.abs(posenc.sinusoid_table(50, 64, dtype="f64") - want))
    print("tutorial f64 precise: max abs %.3g (tol 1e-13)" % err)
    assert err <= 1e-13


@pytest.mark.parametrize("name,dim,pad_row", [("fairseq_sinusoidal_get_embedding_n50_d64_pad1", 64, 1),
                                              ("fairseq_sinusoidal_get_embedding_n50_d65_pad1", 65, 1),
                                              ("fairseq_sinusoidal_get_embedding_n50_d64_padNone", 64, None)])
def test_fairseq(name, dim, pad_row):
    want = golden(name)
    got = posenc.sinusoid_table(50, dim, freqs="t2t", layout="half", odd="pad", mode="torch")
    if pad_row is not None:
        got[pad_row] = 0  # fairseq zeroes the padding row (a lookup concern)
    ulp, at = ulp_f32(got, want)
    print("%s torch-compat: %d ULP at %d (tol 0)" % (name, ulp, at))
    assert ulp == 0


def test_fairseq_forward_from_positions_from_input_ids():
    """fairseq's forward = the t2t/half table at RoBERTa-style positions, pad rows zero."""
    want = golden("fairseq_sinusoidal_forward_d64_pad1_tokens2x6")
    tokens = np.array([[5, 6, 7, 8, 1, 1], [1, 1, 9, 10, 11, 12]])
    ids = posenc.positions_from_input_ids(tokens, pad_id=1)
    table = posenc.sinusoid_table(dim=64, positions=ids.reshape(-1), freqs="t2t", layout="half", mode="torch")
    table[ids.reshape(-1) == 1] = 0
    ulp, at = ulp_f32(table.reshape(2, 6, 64), want)
    print("fairseq forward: %d ULP (tol 0)" % ulp)
    assert ulp == 0


@pytest.mark.parametrize("name,channels", [("tatp22_pe1d_len10_ch16", 16), ("tatp22_pe1d_len10_ch15", 15)])
def test_tatp22_1d(name, channels):
    want = golden(name)[0]
    got = posenc.sinusoid_table(10, channels, odd="round_up")
    err = np.max(np.abs(got.astype(np.float64) - want))
    print("%s precise: max abs %.3g (tol 2e-6)" % (name, err))
    assert err <= 2e-6


@pytest.mark.parametrize("name,shape,channels", [("tatp22_pe2d_6x5_ch12", (6, 5), 12),
                                                 ("tatp22_pe2d_6x5_ch10", (6, 5), 10),
                                                 ("tatp22_pe3d_4x3x2_ch18", (4, 3, 2), 18),
                                                 ("tatp22_pe3d_4x3x2_ch20", (4, 3, 2), 20)])
def test_tatp22_grids(name, shape, channels):
    want = golden(name)[0]
    got = posenc.grid_table(shape, channels, mode="torch")
    assert got.shape == tuple(shape) + (channels,)
    ulp, at = ulp_f32(got, want)
    print("%s torch-compat: %d ULP at %d (tol 0)" % (name, ulp, at))
    assert ulp == 0


def test_gptj_sinusoidal_positions():
    """GPT-J create_sinusoidal_positions = [sin | cos] (half layout), vaswani frequencies. GPT-J
    forms the angle in float64 and rounds it to float32 before sin/cos (not torch's float32
    w), so only the precise table is compared: |error| <= 64 * 2^-24 + rounding < 7.7e-6."""
    want = golden("hf_gptj_sinusoidal_positions_dim64_n64")
    err = np.max(np.abs(posenc.sinusoid_table(64, 64, layout="half").astype(np.float64) - want))
    print("gptj sinusoidal positions: precise max abs %.3g (tol 7.7e-6)" % err)
    assert err <= 7.7e-6


@pytest.mark.parametrize("args,kwargs", [
    (["--len", 20, "--dim", 33, "--odd", "pad", "--freqs", "t2t", "--layout", "half", "--start", 7],
     dict(length=20, dim=33, odd="pad", freqs="t2t", layout="half", start=7)),
    (["--len", 30, "--dim", 16, "--base", 500, "--dtype", "f16"], dict(length=30, dim=16, base=500, dtype="f16")),
    (["--len", 30, "--dim", 16, "--dtype", "bf16-bits", "--torch-compat"],
     dict(length=30, dim=16, dtype="bf16", mode="torch")),
    (["--len", 9, "--dim", 8, "--kind", "index"], None),
    (["--kind", "xl", "--len", 16, "--dim", 64, "--clamp", 8], None),
    (["--kind", "3d", "--grid", "4x3x2", "--dim", 24, "--split", "even"], None),
    (["--kind", "learned", "--len", 20, "--dim", 8, "--seed", 3, "--padding-idx", 1], None),
])
def test_every_table_option_matches_the_cli(tmp, args, kwargs):
    out = tmp / "t.npy"
    run_cli("table", *args, "-o", out)
    want = np.load(out)
    kind = args[args.index("--kind") + 1] if "--kind" in args else "sinusoidal"
    if kind == "sinusoidal":
        got = posenc.sinusoid_table(**kwargs)
    elif kind == "index":
        got = posenc.baseline_table("index", 9, 8)
    elif kind == "xl":
        got = posenc.xl_relative_table(16, 64, clamp=8)
    elif kind == "3d":
        got = posenc.grid_table((4, 3, 2), 24, split="even")
    else:
        got = posenc.learned_init(20, 8, seed=3, padding_idx=1)
    same = got.shape == want.shape and np.array_equal(got.view(np.uint8), want.view(np.uint8))
    print("posenc table %s: %s" % (" ".join(map(str, args)), "identical" if same else "DIFFERENT"))
    assert same


def test_other_tables_and_helpers():
    assert np.array_equal(posenc.grid_positions((2, 3)), [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]])
    norm = posenc.baseline_table("normalized", 5, 2)
    assert norm[-1, 0] == 1 and norm[2, 1] == 0.5
    w = posenc.sinusoid_frequencies(8)
    assert np.allclose(w, 10000.0 ** (-np.arange(4) * 2 / 8), rtol=1e-15)
    real = posenc.sinusoid_table(dim=4, positions=np.array([0.5, 2.25]), dtype="f64")
    assert abs(real[1, 0] - np.sin(2.25)) < 1e-15
    scaled = posenc.freq_scale_table(10, 8, 0.5)
    assert np.array_equal(scaled, posenc.sinusoid_table(dim=8, positions=np.arange(10) * 0.5))
    learned = posenc.learned_init(64, 4, seed=1)
    hybrid = posenc.hybrid_table(learned, 10, 8)
    assert np.array_equal(hybrid[:, :4], learned[:10]) and np.array_equal(hybrid[:, 4:], posenc.sinusoid_table(10, 8)[:, 4:])
    bits = posenc.sinusoid_table(4, 4, dtype="bf16")
    assert bits.dtype == np.uint16 and posenc.bf16_to_f32(bits)[1, 0] == np.float32(0.83984375)


def test_table_errors_carry_the_library_message():
    with pytest.raises(posenc.InvalidArgumentError, match="dim"):
        posenc.sinusoid_table(10, 65)
    with pytest.raises(posenc.InvalidArgumentError, match="base"):
        posenc.sinusoid_table(10, 64, base=1.0)
    with pytest.raises(posenc.InvalidArgumentError, match="multiple"):
        posenc.grid_table((4, 3), 10, split="even")
    with pytest.raises(posenc.UnsupportedError, match="dtype"):
        posenc.sinusoid_table(10, 64, dtype="i8")
    with pytest.raises(posenc.InvalidArgumentError, match="freqs must be one of"):
        posenc.sinusoid_table(10, 64, freqs="golden")
