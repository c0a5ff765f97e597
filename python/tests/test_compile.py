"""torch.compile: posenc's rotation is two torch.library custom ops (posenc::rotate_ in place,
posenc::rotate out of place with autograd), so a compiled model that rotates with posenc has
no graph break at posenc and gives eager's bits (the compiled graph calls the same C kernel).

Everything inductor writes (its cache, and the precompiled headers it puts under the temporary
folder whatever TORCHINDUCTOR_CACHE_DIR says) goes to a folder of this test, removed at the end;
the test fails if inductor left anything in the caller's temporary folder."""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
import torch

import posenc
import posenc.torch as pt

P = posenc.RopeParams(head_dim=16, base=10000.0)
# YaRN: attention factor != 1, so the backward's A^2 correction is exercised too
P_YARN = posenc.RopeParams(head_dim=16, base=10000.0, scaling="yarn", factor=4.0, original_max_position=8)


@pytest.fixture(scope="module")
def inductor_folder(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("inductor"))
    outer = tempfile.gettempdir()
    before = set(os.listdir(outer))
    saved = {k: os.environ.get(k) for k in ("TMPDIR", "TORCHINDUCTOR_CACHE_DIR", "TORCHINDUCTOR_COMPILE_THREADS")}
    saved_tempdir = tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = folder
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(folder, "cache")
    # one compile thread: no pool of worker processes to start on a small, loaded machine
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    try:
        yield folder
    finally:
        tempfile.tempdir = saved_tempdir
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(folder, ignore_errors=True)
    # names inductor uses (torchinductor_<user>): none may appear outside our folder
    left = sorted(n for n in set(os.listdir(outer)) - before if "inductor" in n or "triton" in n)
    assert not left, "torch.compile left %s in %s" % (left, outer)


class Tiny(torch.nn.Module):
    """A projection, posenc's Rotary (differentiable), and posenc's in-place apply_rope_ on q and k."""

    def __init__(self, params):
        super().__init__()
        torch.manual_seed(0)
        self.proj = torch.nn.Linear(32, 64)
        self.rot = pt.Rotary(params=params, tensor_layout="bshd")
        self.params = params

    def forward(self, x, pos):
        b, s, _ = x.shape
        q, k = self.proj(x).view(b, s, 4, 16).split(2, dim=2)
        qr, kr = self.rot(q, k, pos)
        q2, k2 = q.detach().clone(), k.detach().clone()
        pt.apply_rope_(q2, k2, positions=pos, params=self.params, tensor_layout="bshd", layout="gptj")
        return qr, kr, q2, k2


def _bits_equal(a, b):
    return all(torch.equal(u, v) for u, v in zip(a, b))


def _inputs():
    x = torch.randn(2, 5, 32)
    # batched positions with different offsets per row (a KV-cache step of two sequences)
    pos = torch.tensor([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]])
    return x, pos


def test_compiled_model_has_no_graph_break_and_eager_bits(inductor_folder):
    """inductor (the default backend: C++ code generated around the two opaque posenc nodes),
    inference: the time it takes is inductor's first compile, so training is checked below
    with aot_eager (the same capture, fake kernels, functionalization and autograd)."""
    model = Tiny(P.replace())  # a fresh params object: its JSON is first made under compile
    x, pos = _inputs()
    explained = torch._dynamo.explain(model)(x, pos)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True)  # fullgraph: any graph break raises
    with torch.no_grad():
        want = model(x, pos)
        assert _bits_equal(compiled(x, pos), want)
        # the positions are a graph input, not a constant: new ones rotate by the new positions
        pos2 = pos + 100
        assert _bits_equal(compiled(x, pos2), model(x, pos2))
        assert not _bits_equal(model(x, pos2), want)
    torch._dynamo.reset()


@pytest.mark.parametrize("params", [P, P_YARN], ids=["plain", "yarn"])
def test_compiled_training_matches_eager(inductor_folder, params):
    """Forward and backward through the compiled graph (register_autograd: R^T g, with YaRN's
    A^2 correction) equal eager's bits."""
    model = Tiny(params.replace())
    x, pos = _inputs()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    got = compiled(x, pos)
    assert _bits_equal(got, model(x, pos))
    sum(t.sum() for t in got[:2]).backward()
    g_compiled = model.proj.weight.grad.clone()
    model.zero_grad()
    sum(t.sum() for t in model(x, pos)[:2]).backward()
    assert torch.equal(g_compiled, model.proj.weight.grad)
    torch._dynamo.reset()


def test_ops_pass_opcheck():
    """torch.library.opcheck: the schema, the fake kernels (shapes, strides, no aliasing), the
    declared mutation and the autograd registration agree with the real kernels."""
    pos = torch.tensor([[0, 1, 2], [4, 5, 6]])
    x = torch.randn(2, 3, 2, 16, dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(torch.ops.posenc.rotate.default, (x, pos, 0, pt._params_json(P_YARN), "half", "bshd", -1, False))
    xf = torch.randn(2, 2, 3, 16)
    torch.library.opcheck(torch.ops.posenc.rotate.default, (xf, None, 3, pt._params_json(P), "interleaved", "bhsd", -1, True))
    q, k = torch.randn(2, 3, 2, 16), torch.randn(2, 3, 1, 16)
    torch.library.opcheck(torch.ops.posenc.rotate_.default, (q, k, pos, 0, pt._params_json(P), "", "bshd", -1, False))


def test_ops_match_the_eager_functions():
    """The ops' kernels are the eager functions' bits (the layer they add is argument passing)."""
    x = torch.randn(2, 6, 3, 16)
    pos = torch.tensor([[0, 1, 2, 3, 4, 5], [9, 10, 11, 12, 13, 14]])
    assert torch.equal(torch.ops.posenc.rotate(x, pos, 0, pt._params_json(P_YARN), "half", "bshd", -1, False),
                       pt.apply_rope(x, positions=pos, params=P_YARN, tensor_layout="bshd"))
    q, want = x.clone(), x.clone()
    torch.ops.posenc.rotate_(q, None, None, 5, pt._params_json(P), "gptj", "bshd", -1, False)
    pt.apply_rope_(want, offset=5, params=P, tensor_layout="bshd", layout="gptj")
    assert torch.equal(q, want)


def test_compiled_errors_name_the_bad_value(inductor_folder):
    """Inside a compiled function the eager checks still refuse by name (before the op runs)."""
    q = torch.randn(1, 4, 2, 16, requires_grad=True)

    @torch.compile(fullgraph=True, backend="eager")
    def in_place(t):
        pt.apply_rope_(t, params=P, tensor_layout="bshd")
        return t

    with pytest.raises(Exception, match="q requires grad"):
        in_place(q)

    @torch.compile(fullgraph=True, backend="eager")
    def per_row_offsets(t):
        return pt.apply_rope(t, offset=[1, 2], params=P, tensor_layout="bshd")

    with pytest.raises(Exception, match="one int offset"):
        per_row_offsets(q.detach())
    torch._dynamo.reset()


class HFAttentionRope(torch.nn.Module):
    """What a transformers attention layer does with a patched rotary embedding: posenc's
    RotaryEmbedding (cos, sin) and posenc.hf.apply_rotary_pos_emb on [B, H, S, D]."""

    def __init__(self, mode):
        super().__init__()
        from posenc import hf  # noqa: F401  (the HF glue, on top of posenc.torch)
        self.rotary = pt.RotaryEmbedding(params=posenc.RopeParams(head_dim=16, base=10000.0, mode=mode))

    def forward(self, q, k, position_ids):
        from posenc import hf
        cos, sin = self.rotary(q, position_ids)
        return hf.apply_rotary_pos_emb(q, k, cos, sin)


@pytest.mark.parametrize("mode", ["torch", "precise"])
def test_compiled_hf_drop_in_has_no_graph_break(inductor_folder, mode):
    """RotaryEmbedding + apply_rotary_pos_emb (what posenc.hf.patch puts into a model) compile
    whole: torch mode as HF's own torch ops (compiled: transformers' own code compiled, bit for
    bit), precise mode through posenc::rope_cos_sin (a fake kernel gives its shapes; eager's bits)."""
    model = HFAttentionRope(mode)
    q, k = torch.randn(2, 4, 6, 16), torch.randn(2, 2, 6, 16)
    ids = torch.tensor([[0, 1, 2, 3, 4, 5], [10, 11, 12, 13, 14, 15]])
    explained = torch._dynamo.explain(model)(q, k, ids)
    assert explained.graph_break_count == 0, explained.break_reasons
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="inductor" if mode == "torch" else "aot_eager")
    with torch.no_grad():
        got, want = compiled(q, k, ids), model(q, k, ids)
    if mode == "precise":  # the same C table and HF's expression in both
        assert _bits_equal(got, want)
    else:
        # inductor generates its own loop for HF's cos/sin and multiply-add, which is not torch
        # eager's bits (transformers' own code compiled differs from itself eager by up to
        # 2.4e-7 here); the oracle is transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb
        # compiled the same way: posenc compiled gives its bits
        from transformers import LlamaConfig
        from transformers.models.llama import modeling_llama as ml
        cfg = LlamaConfig(hidden_size=64, num_attention_heads=4, head_dim=16,
                          rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
        theirs = ml.LlamaRotaryEmbedding(cfg)

        def hf_own(q, k, ids):
            cos, sin = theirs(q, ids)
            return ml.apply_rotary_pos_emb(q, k, cos, sin)
        with torch.no_grad():
            assert _bits_equal(want, hf_own(q, k, ids))  # eager: posenc is HF's bits
            assert _bits_equal(got, torch.compile(hf_own, fullgraph=True)(q, k, ids))
    torch._dynamo.reset()


def test_importing_posenc_torch_writes_nothing(tmp_path):
    """import posenc.torch (and an eager call) leaves the temporary folder empty: torch._dynamo,
    imported, makes its cache folder there (TMPDIR/torchinductor_<user>), so posenc must not
    import it (it did through torch.compiler.assume_constant_result)."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    code = ("import torch, posenc, posenc.torch as pt, posenc.hf, sys; x = torch.ones(1, 3, 1, 8); "
            "pt.apply_rope_(x, base=10000.0, tensor_layout='bshd'); pt.apply_rope(x, base=10000.0, tensor_layout='bshd'); "
            "print('torch._dynamo' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert os.listdir(tmp_path) == [], os.listdir(tmp_path)
