"""torch.compile: posenc's rotation is two torch.library custom ops (posenc::rotate_ in place,
posenc::rotate out of place with autograd), so a compiled model that rotates with posenc has
no graph break at posenc and gives eager's bits (the compiled graph calls the same C kernel).

Everything inductor writes (its cache, and the precompiled headers it puts under the temporary
folder whatever TORCHINDUCTOR_CACHE_DIR says) goes to a folder of this test, removed at the end;
the test fails if inductor left anything in the caller's temporary folder."""
import os
import shutil
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
    saved = {k: os.environ.get(k) for k in ("TMPDIR", "TORCHINDUCTOR_CACHE_DIR")}
    saved_tempdir = tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = folder
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(folder, "cache")
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


@pytest.mark.parametrize("params", [P, P_YARN], ids=["plain", "yarn"])
def test_compiled_model_has_no_graph_break_and_eager_bits(inductor_folder, params):
    model = Tiny(params.replace())  # a fresh object: its JSON is first made under compile
    x = torch.randn(2, 5, 32)
    # batched positions with different offsets per row (a KV-cache step of two sequences)
    pos = torch.tensor([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]])

    explained = torch._dynamo.explain(model)(x, pos)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1

    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True)  # fullgraph: any graph break raises
    got = compiled(x, pos)
    want = model(x, pos)
    assert _bits_equal(got, want)

    # the positions are a graph input, not a constant: new ones rotate by the new positions
    pos2 = pos + 100
    assert _bits_equal(compiled(x, pos2), model(x, pos2))
    assert not _bits_equal(model(x, pos2), want)

    # backward through the compiled graph (register_autograd: R^T g) equals eager's
    sum(t.sum() for t in compiled(x, pos)[:2]).backward()
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
