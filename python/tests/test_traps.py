"""API traps of issue 25 (item 5) and the hostile-input findings of issue 26 (items 5, 7, 12):
each test failed on the package as it was (0.3.1 before these fixes), silently wrong or a
raw exception; each names what it guards."""
import copy
import io
import os
import pickle
import shutil
import subprocess
import sys
import typing

import numpy as np
import pytest
import torch

import posenc
import posenc.torch as pt
from conftest import HERE


# ---- one tensor layout rule: required where the shape is ambiguous ----------------------

def test_tensor_layout_is_required_for_3d_and_4d_arrays():
    """An HF q [B, H, S, D] passed without a layout used to be read as [B, S, H, D]: its heads
    axis was rotated, no error. Now every entry point refuses to guess, naming tensor_layout."""
    q = torch.randn(1, 4, 8, 64)
    before = q.clone()
    for call in (lambda: pt.apply_rope_(q, base=10000.0), lambda: pt.apply_rope(q, base=10000.0), lambda: posenc.apply_rope_(q.numpy(), base=10000.0),
                 lambda: pt.apply_rope_(q[0], base=10000.0), lambda: posenc.apply_rope_(q[0].numpy(), base=10000.0)):
        with pytest.raises(posenc.InvalidArgumentError, match="tensor_layout is required"):
            call()
    with pytest.raises(posenc.KeywordError, match="tensor_layout"):
        pt.Rotary(head_dim=64, base=10000.0)
    with pytest.raises(posenc.InvalidArgumentError, match="tensor_layout must be"):
        pt.apply_rope_(q, tensor_layout="BHSD", base=10000.0)
    assert torch.equal(q, before)
    # [S, D] is unambiguous; "bhsd" rotates the sequence axis of an HF q
    x = torch.randn(8, 64)
    y = x.clone()
    pt.apply_rope_(y, base=10000.0)
    hf = q.clone()
    pt.apply_rope_(hf, tensor_layout="bhsd", base=10000.0)
    per_head = q.clone()
    for h in range(4):
        pt.apply_rope_(per_head[0, h], base=10000.0)
    assert torch.equal(hf, per_head) and not torch.equal(y, x)


# ---- every bad keyword is a posenc.Error naming it ---------------------------------------

def test_bad_keywords_raise_posenc_errors_naming_them():
    x = torch.randn(1, 8, 2, 64)
    cases = [
        (lambda: pt.apply_rope(x, head_dim=32, tensor_layout="bshd", base=10000.0), "head_dim=32"),
        (lambda: pt.apply_rope(x, tensor_layot="bshd", base=10000.0), "'tensor_layot' (did you mean 'tensor_layout'?)"),
        (lambda: pt.apply_rope_(x, tensor_layout="bshd", bsae=10.0, base=10000.0), "'bsae' (did you mean 'base'?)"),
        (lambda: posenc.apply_rope_(x.numpy(), tensor_layout="bshd", ofset=3, base=10000.0), "'ofset' (did you mean 'offset'?)"),
        (lambda: posenc.sinusoid_table(4, 8, bsae=3), "'bsae' (did you mean 'base'?)"),
        (lambda: posenc.alibi_slopes(8, max_bais=8), "'max_bais' (did you mean 'max_bias'?)"),
        (lambda: posenc.RopeParams(head_dim=8, bsae=3), "'bsae' (did you mean 'base'?)"),
        (lambda: posenc.RopeParams(head_dim=8).replace(bsae=3), "'bsae' (did you mean 'base'?)"),
        (lambda: posenc.rope_cos_sin(head_dim=8, positions=4, sclaing="yarn"), "'sclaing'"),
        (lambda: pt.RotaryEmbedding(head_dim=8, mdoe="torch"), "'mdoe' (did you mean 'mode'?)"),
        (lambda: pt.Rotary(head_dim=8, tensor_layout="bhsd", bsae=1, base=10000.0), "'bsae'"),
        (lambda: posenc.ThreadPool(thread=2), "'thread' (did you mean 'threads'?)"),
        (lambda: posenc.sinusoid_table(4, 8, 9), "positional"),
    ]
    for call, words in cases:
        with pytest.raises(posenc.Error) as info:
            call()
        print("%s: %s" % (type(info.value).__name__, info.value))
        assert words in str(info.value)
        assert isinstance(info.value, (posenc.KeywordError, posenc.InvalidArgumentError))
    assert issubclass(posenc.KeywordError, TypeError)  # what `except TypeError` callers caught before
    pt.apply_rope(x, head_dim=64, tensor_layout="bshd", base=10000.0)  # the right head_dim is accepted


# ---- modules survive pickle / deepcopy / torch.save after a forward -------------------------

def test_modules_pickle_deepcopy_and_save_after_a_forward():
    q, k = torch.randn(1, 2, 6, 32), torch.randn(1, 2, 6, 32)
    ids = torch.arange(6)[None] + 40
    rot = pt.Rotary(head_dim=32, tensor_layout="bhsd", scaling="yarn", factor=4.0, original_max_position=16,
                    short_factors=None, base=10000.0)
    emb = pt.RotaryEmbedding(head_dim=32, mode="torch")
    model = torch.nn.ModuleDict({"rot": rot, "emb": emb})
    want_q, _ = rot(q, k, ids)
    want_cos, _ = emb(q, ids)
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model)), torch.load(buffer, weights_only=False)):
        assert torch.equal(clone["rot"](q, k, ids)[0], want_q)
        assert torch.equal(clone["emb"](q, ids)[0], want_cos)
    params = posenc.RopeParams(head_dim=16, scaling="longrope", short_factors=[1.0] * 8, long_factors=[2.0] * 8,
                               original_max_position=64, max_position=256)
    params.to_c()  # caches the C struct with pointers into the factor arrays
    again = pickle.loads(pickle.dumps(params))
    assert again == params and "_c_keep" not in again.__dict__
    with pytest.raises(posenc.UnsupportedError, match="cannot be pickled"):
        with posenc.ThreadPool(1) as pool:
            pickle.dumps(pool)


# ---- one default mode; reprs with resolved values; Literal option types ---------------------

def test_one_default_mode_everywhere():
    modes = {pt.Rotary(head_dim=64, tensor_layout="bhsd", base=10000.0).params.mode, posenc.RopeParams(head_dim=64).mode}
    assert modes == {"precise"}, modes
    # the one exception, by design (issue 41): RotaryEmbedding, offered as HF's replacement, gives HF's bits
    assert pt.RotaryEmbedding(head_dim=64).params.mode == "torch"
    assert pt.RotaryEmbedding(head_dim=64, mode="precise").params.mode == "precise"
    # apply_rope's default is the same: equal to an explicit precise call, not to torch mode
    x = torch.randn(1, 3, 900, 64)
    default, precise, hf = (pt.apply_rope(x, tensor_layout="bhsd", offset=70000, base=10000.0, **kw)
                            for kw in ({}, {"mode": "precise"}, {"mode": "torch"}))
    assert torch.equal(default, precise) and not torch.equal(default, hf)


def test_reprs_show_resolved_values():
    config = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8,
              "max_position_embeddings": 8192,
              "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}}
    params = posenc.RopeParams.from_config(config)
    text = repr(params)
    print(text)
    assert "rotary_dim=64" in text and "attention_factor=1.1386" in text
    assert "rotary_dim=0" not in text and "attention_factor=0.0" not in text
    partial = repr(posenc.RopeParams(head_dim=64, partial_rotary_factor=0.25))
    assert "rotary_dim=16" in partial
    for module, mode in ((pt.Rotary(config, tensor_layout="bhsd"), "precise"), (pt.RotaryEmbedding(config), "torch")):
        text = repr(module)
        print(text)
        assert "scaling='yarn'" in text and "rotary_dim=64" in text and "mode='%s'" % mode in text
    assert "invalid=" in repr(posenc.RopeParams(head_dim=64, rotary_dim=63))  # never raises


def test_option_strings_are_typed_with_literal():
    for fn, name in ((posenc.apply_rope_, "layout"), (pt.apply_rope_, "tensor_layout"), (pt.apply_rope, "layout")):
        hint = typing.get_type_hints(fn)[name]
        literals = {a for arg in typing.get_args(hint) for a in (typing.get_args(arg) or (arg,))}
        print(fn.__qualname__, name, hint)
        assert {"neox", "gptj"} <= literals or {"bshd", "bhsd"} <= literals
    hints = typing.get_type_hints(posenc.RopeParams)
    assert set(typing.get_args(hints["mode"])) >= {"precise", "torch"}
    assert "yarn" in typing.get_args(hints["scaling"])


# ---- conftest: a skip fails the run ---------------------------------------------------------

def test_a_skipped_test_fails_the_run(tmp_path):
    """conftest.py used to define pytest_sessionfinish twice: the second (cleanup) replaced
    the first, so a skipped test passed the run."""
    shutil.copy(os.path.join(HERE, "conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_skips.py").write_text("import pytest\n\ndef test_skipped():\n    pytest.skip('no input')\n")
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path))
    print(done.stdout[-1500:], done.stderr[-1500:])
    assert "1 skipped" in done.stdout and "a skip is a failure here" in done.stdout
    assert done.returncode != 0


# ---- issue 26 item 5: ThreadPool.close() while another thread uses the pool --------------------

_POOL_RACE = r"""
import threading, sys, numpy as np, posenc
x = np.random.default_rng(0).standard_normal((2048, 8, 128)).astype(np.float32)
pool = posenc.ThreadPool(2)
calls, refused, started = [0], [0], threading.Event()
def worker():
    for _ in range(400):
        try:
            posenc.apply_rope_(x, offset=1, tensor_layout="shd", pool=pool, base=10000.0)
            calls[0] += 1
            started.set()
        except posenc.InvalidArgumentError as exc:
            assert "closed" in str(exc), exc
            refused[0] += 1
threads = [threading.Thread(target=worker) for _ in range(3)]
for t in threads:
    t.start()
started.wait()
pool.close()  # must wait for the calls in flight, then refuse later ones
for t in threads:
    t.join()
print("calls", calls[0], "refused", refused[0])
assert calls[0] >= 1 and refused[0] >= 1 and calls[0] + refused[0] == 1200
"""


def test_closing_a_pool_while_other_threads_use_it():
    """Before: close() freed the C pool under a running call: deadlock (4 of 5 runs) or heap
    corruption. A subprocess with a timeout, so a hang or an abort is a failure, not a stall."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(HERE)] + [p for p in [env.get("PYTHONPATH")] if p])
    for attempt in range(3):
        done = subprocess.run([sys.executable, "-c", _POOL_RACE], capture_output=True, text=True, env=env,
                              timeout=120)
        print(done.stdout, done.stderr[-2000:])
        assert done.returncode == 0


def test_a_closed_pool_is_refused_by_name():
    x = np.ones((4, 1, 8), np.float32)
    before = x.copy()
    pool = posenc.ThreadPool(2)
    pool.close()
    pool.close()  # idempotent
    for call in (lambda: posenc.apply_rope_(x, tensor_layout="shd", pool=pool, base=10000.0),
                 lambda: pt.apply_rope_(torch.from_numpy(x), tensor_layout="shd", pool=pool, base=10000.0)):
        with pytest.raises(posenc.InvalidArgumentError, match="ThreadPool is closed"):
            call()
    assert np.array_equal(x, before) and "closed" in repr(pool)
    with pytest.raises(posenc.InvalidArgumentError, match="pool must be a posenc.ThreadPool"):
        posenc.apply_rope_(x, tensor_layout="shd", pool=2, base=10000.0)


# ---- issue 26 item 7: extreme and fractional integers; q and k sharing memory -------------------

def test_integers_are_never_wrapped_or_truncated():
    x = np.ones((3, 1, 8), np.float32)
    before = x.copy()
    cases = [
        (lambda: posenc.apply_rope_(x, tensor_layout="shd", positions=np.array([0, 1, 2 ** 64 - 1], np.uint64),
                                    base=10000.0),
         "18446744073709551615 does not fit int64"),
        (lambda: posenc.apply_rope_(x, tensor_layout="shd", offset=1.5, base=10000.0), "offset must be an integer, got 1.5"),
        (lambda: pt.apply_rope_(torch.from_numpy(x), tensor_layout="shd", offset=0.5, base=10000.0), "offset must be an integer"),
        (lambda: posenc.apply_rope_(x, tensor_layout="shd", offset=np.array([1.5]), base=10000.0), "offset must be an int"),
        (lambda: posenc.apply_rope_(x, tensor_layout="shd", seq_len=7.5, base=10000.0), "seq_len must be an integer"),
        (lambda: posenc.sinusoid_table(4.5, 8), "length must be an integer, got 4.5"),
        (lambda: posenc.sinusoid_table(4, 8.9), "dim must be an integer, got 8.9"),
        (lambda: posenc.sinusoid_table(4, 8, start=1.5), "start must be an integer, got 1.5"),
        (lambda: posenc.rope_cos_sin(head_dim=8, count=3, start=0.5), "start must be an integer"),
        (lambda: posenc.alibi_slopes(7.5), "heads must be an integer"),
        (lambda: posenc.sinusoid_table(True, 8), "length must be an integer, got True"),
        (lambda: posenc.rope_frequencies(head_dim=8, seq_len=float("nan")), "seq_len must be an integer"),
        # issue 41: the largest int64 position made seq_len = max + 1 wrap ("seq_len must be >= 0, got
        # -9223372036854775808"); it is named now
        (lambda: posenc.apply_rope_(x, tensor_layout="shd", positions=np.array([0, 1, 2 ** 63 - 1], np.int64),
                                    base=10000.0), "position 9223372036854775807 is the largest int64"),
        (lambda: pt.apply_rope_(torch.from_numpy(x), tensor_layout="shd", positions=torch.tensor([0, 1, 2 ** 63 - 1]),
                                base=10000.0), "position 9223372036854775807 is the largest int64"),
        (lambda: pt.apply_rope(torch.from_numpy(x), tensor_layout="shd", positions=torch.tensor([0, 1, 2 ** 63 - 1]),
                               base=10000.0), "position 9223372036854775807 is the largest int64"),
        # issue 41: neither params, config nor base silently used base 10000
        (lambda: posenc.apply_rope_(x, tensor_layout="shd"), "apply_rope_: give params=, config= or base="),
        (lambda: pt.apply_rope_(torch.from_numpy(x), tensor_layout="shd"), "apply_rope_: give params=, config= or base="),
        (lambda: pt.apply_rope(torch.from_numpy(x), tensor_layout="shd"), "apply_rope: give params=, config= or base="),
        (lambda: pt.Rotary(head_dim=16, tensor_layout="bhsd"), "Rotary: give params=, config= or base="),
    ]
    for call, words in cases:
        with pytest.raises(posenc.InvalidArgumentError) as info:
            call()
        print(info.value)
        assert words in str(info.value)
    assert np.array_equal(x, before)
    # integral values of other types are fine, and equal the int results
    assert np.array_equal(posenc.sinusoid_table(4.0, np.int64(8), start=np.int32(2)), posenc.sinusoid_table(4, 8, start=2))
    a, b = x.copy(), x.copy()
    posenc.apply_rope_(a, tensor_layout="shd", positions=np.array([5, 6, 2 ** 40], np.uint64), base=10000.0)
    posenc.apply_rope_(b, tensor_layout="shd", positions=np.array([5, 6, 2 ** 40], np.int64), base=10000.0)
    assert np.array_equal(a, b)


def test_q_and_k_sharing_memory_are_refused():
    """apply_rope_(q, q) or overlapping views rotated the shared elements twice."""
    x = np.random.default_rng(1).standard_normal((6, 4, 16)).astype(np.float32)
    before = x.copy()
    t = torch.from_numpy(x)
    cases = [lambda: posenc.apply_rope_(x, x, tensor_layout="shd", base=10000.0),
             lambda: posenc.apply_rope_(x[:, :3], x[:, 2:], tensor_layout="shd", base=10000.0),
             lambda: pt.apply_rope_(t, t, tensor_layout="shd", base=10000.0),
             lambda: pt.apply_rope_(t[:, 1:3], t[:, 2:4], tensor_layout="shd", base=10000.0),
             lambda: pt.apply_rope_(t.view(6, 2, 2, 16)[:, 0], t.view(6, 2, 2, 16)[:, :, 0], tensor_layout="shd", base=10000.0)]
    for call in cases:
        with pytest.raises(posenc.InvalidArgumentError, match="share memory"):
            call()
    assert np.array_equal(x, before)
    # slices of one fused buffer that do not overlap (interleaved in memory) are fine
    q, k = x[:, 0:2], x[:, 2:4]
    q2, k2 = q.copy(), k.copy()
    posenc.apply_rope_(q, k, tensor_layout="shd", offset=3, base=10000.0)
    posenc.apply_rope_(q2, k2, tensor_layout="shd", offset=3, base=10000.0)
    assert np.array_equal(q, q2) and np.array_equal(k, k2)


def test_empty_arrays_are_a_no_op_like_torch():
    """NumPy apply_rope_ on a (0, 4, 16) array raised "stride 0"; torch's ops do nothing."""
    for shape, tl in (((0, 4, 16), "shd"), ((2, 0, 4, 16), "bshd"), ((2, 4, 0, 16), "bhsd"), ((3, 0, 16), "shd")):
        x = np.zeros(shape, np.float32)
        posenc.apply_rope_(x, tensor_layout=tl, base=10000.0)
        posenc.apply_rope_(x, np.zeros(shape, np.float32), tensor_layout=tl, positions=np.zeros(shape[1] if tl == "bshd"
                           and len(shape) == 4 else (shape[0] if tl == "shd" else shape[2]), np.int64), base=10000.0)
        pt.apply_rope_(torch.from_numpy(x), tensor_layout=tl, base=10000.0)
        assert pt.apply_rope(torch.from_numpy(x), tensor_layout=tl, base=10000.0).shape == shape
    with pytest.raises(posenc.InvalidArgumentError, match="rotary_dim"):
        posenc.apply_rope_(np.zeros((0, 4, 16), np.float32), tensor_layout="shd", rotary_dim=17, base=10000.0)  # still checked
