"""ALiBi, T5, Shaw and learned-table helpers against the goldens tests/test_alibi.c,
tests/test_t5.c use (BLOOM torch-compat slopes and biases bit for bit; T5 buckets exact;
ggml's derived slopes 1e-5 relative: they are read back from a softmax, ~1e-6 accurate)
and the worked examples of posenc.h."""
import numpy as np
import pytest

import posenc
from conftest import golden, ulp_f32


@pytest.mark.parametrize("heads", [8, 12, 20, 32])
def test_bloom_slopes_and_bias(heads):
    want = golden("hf_bloom_alibi_slopes_nhead%d" % heads)
    compat = posenc.alibi_slopes(heads, mode="torch", dtype="f32")
    ulp, at = ulp_f32(compat, want)
    precise = posenc.alibi_slopes(heads)
    worst = np.max(np.abs(precise - want) / want)
    print("bloom %d heads: torch-compat %d ULP (tol 0); precise max rel %.3g (tol %g: BLOOM's rounded base "
          "raised to k)" % (heads, ulp, worst, 2e-7 * heads))
    assert ulp == 0 and worst <= 2e-7 * heads
    bias = golden("hf_bloom_alibi_nhead%d_len64" % heads)  # [heads, 1, 64] = slope * j
    got = posenc.alibi_bias(compat, queries=np.array([0]), keys=np.arange(64))
    assert np.array_equal(got, bias)


def test_bloom_padded_batch_via_key_positions():
    want = golden("hf_bloom_alibi_nhead12_padded_batch2_len16").reshape(2, 12, 1, 16)
    slopes = posenc.alibi_slopes(12, mode="torch", dtype="f32")
    for row, mask in enumerate([[1] * 16, [0] * 5 + [1] * 11]):
        keys = posenc.alibi_key_positions_from_mask(np.array(mask))
        got = posenc.alibi_bias(slopes, queries=np.array([0]), keys=keys)
        assert np.array_equal(got, want[row]), "row %d" % row


@pytest.mark.parametrize("heads", [8, 12, 32])
def test_ggml_slopes(heads):
    want = golden("ggml_alibi_slopes_derived_nhead%d" % heads)
    rel = np.max(np.abs(posenc.alibi_slopes(heads) - want) / want)
    print("ggml %d heads: max rel %.3g (tol 1e-5)" % (heads, rel))
    assert rel <= 1e-5


def test_alibi_forms_and_errors():
    bias = posenc.alibi_bias(np.array([0.5], np.float32), queries=np.array([3]), keys=np.arange(5), form="symmetric")
    assert np.array_equal(bias[0, 0], np.float32([-1.5, -1, -0.5, 0, -0.5]))  # posenc.h's example
    with pytest.raises(posenc.InvalidArgumentError, match="max_bias"):
        posenc.alibi_slopes(8, max_bias=0)
    with pytest.raises(posenc.InvalidArgumentError, match="mask"):
        posenc.alibi_key_positions_from_mask(np.array([0, 2, 1]))


@pytest.mark.parametrize("bidirectional", [0, 1])
def test_t5_buckets(bidirectional):
    grid = golden("hf_t5_bucket_grid64_bidir%d" % bidirectional)
    assert np.array_equal(posenc.t5_buckets(64, 64, bidirectional=bool(bidirectional)), grid)
    line = golden("hf_t5_bucket_line_m300_p300_bidir%d" % bidirectional)
    assert np.array_equal(posenc.t5_bucket(np.arange(-300, 301), bidirectional=bool(bidirectional)), line)
    print("T5 bidirectional=%d: grid 64x64 and line -300..300 identical" % bidirectional)


def test_t5_bias_gathers_the_table():
    table = np.random.default_rng(0).standard_normal((32, 4)).astype(np.float32)
    bias = posenc.t5_bias(table, 10, 12, query_start=2)
    buckets = posenc.t5_buckets(10, 12, query_start=2)
    assert np.array_equal(bias, table[buckets].transpose(2, 0, 1))
    with pytest.raises(posenc.InvalidArgumentError, match="num_buckets"):
        posenc.t5_buckets(4, 4, num_buckets=3)


def test_shaw_examples_of_the_header():
    assert np.array_equal(posenc.shaw_indices(2, 5), [[2, 3, 4, 4, 4], [1, 2, 3, 4, 4], [0, 1, 2, 3, 4],
                                                      [0, 0, 1, 2, 3], [0, 0, 0, 1, 2]])
    assert np.array_equal(posenc.shaw_indices(2, 2, 5), [[0, 0, 1, 2, 3], [0, 0, 0, 1, 2]])
    table = np.arange(10, dtype=np.float32).reshape(5, 2)
    idx = posenc.shaw_indices(2, 3)
    assert np.array_equal(posenc.shaw_gather(idx, 2, table), table[idx])
    with pytest.raises(posenc.OutOfRangeError):
        posenc.shaw_gather(np.array([0, 5]), 2, table)


def test_learned_helpers():
    assert np.array_equal(posenc.positions_from_input_ids(np.array([0, 31414, 232, 2, 1, 1]), pad_id=1),
                          [2, 3, 4, 5, 1, 1])  # posenc.h's example
    table = posenc.learned_init(10, 4, seed=5, padding_idx=1)
    assert np.all(table[1] == 0) and abs(table.std() - 0.02) < 0.01
    pos = np.array([3, 3, 9])
    assert np.array_equal(posenc.learned_gather(table, pos), table[pos])
    with pytest.raises(posenc.OutOfRangeError, match="12"):
        posenc.learned_gather(table, np.array([1, 12]))
    assert np.array_equal(posenc.learned_gather(table, np.array([12]), past_end="clamp"), table[[9]])
    g = np.ones((3, 4), np.float32)
    grad = posenc.learned_backward(g, pos, 10)
    assert grad[3, 0] == 2 and grad[9, 0] == 1 and grad.sum() == 12
    grad_before = grad.copy()
    with pytest.raises(posenc.OutOfRangeError):
        posenc.learned_backward(g, np.array([0, 1, 99]), 10, grad_table=grad)
    assert np.array_equal(grad, grad_before)  # checked before anything is added
    resized = posenc.learned_resize(table, 19, keep=2)
    assert resized.shape == (19, 4) and np.array_equal(resized[:2], table[:2])
    assert np.array_equal(resized[-1], table[-1]) and np.array_equal(resized[2], table[2])
