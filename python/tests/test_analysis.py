"""analyze / diff / precision / explain / report from Python: structured results equal
to what the CLI (`--json`) reports from the same library, plus the worked cases of
docs/analysis.md (offset, layout, torch-compat angle precision)."""
import json
import math

import numpy as np
import pytest
import torch

import posenc
import posenc.torch as pt
from conftest import golden, run_cli


def _cli_json(*args):
    return json.loads(run_cli(*args, "--json").stdout)


def test_diff_findings_are_objects_equal_to_the_cli(tmp):
    a = posenc.sinusoid_table(64, 32)
    b = posenc.sinusoid_table(64, 32, layout="half", start=2)
    np.save(tmp / "a.npy", a)
    np.save(tmp / "b.npy", b)
    report = posenc.diff(a, b, tolerance=1e-5)
    want = _cli_json("diff", tmp / "a.npy", tmp / "b.npy", "--tol", "1e-5")
    print("findings:", report.findings)
    print("CLI words:", [f["text"] for f in want["findings"]], "| summary:", want["summary"])

    def same(x, y):  # the CLI writes NaN/inf as null
        return (y is None and not math.isfinite(x)) or x == y
    assert [f.kind for f in report.findings] == [f["key"] for f in want["findings"]]
    for got, cli in zip(report.findings, want["findings"]):
        assert all(same(getattr(got, k), cli[k]) for k in ("value", "a", "b", "evidence")), (got, cli)
        assert got.from_fit == cli["from_fit"]
    assert report.kinds == ["layout", "offset"] and report.finding("offset").value == 2
    # both differences at once: no exact row/channel test holds, the fitted models tell them
    layout, offset = report.finding("layout"), report.finding("offset")
    assert layout.from_fit and (layout.a, layout.b) == (0, 1)  # posenc_layout: interleaved vs half
    assert offset.from_fit and (offset.a, offset.b) == (0, 2) and offset.permutation == "none"
    assert report.explained == want["explained"] and not report.rope
    assert report.preset_a == "tutorial" and report.preset_b == "vaswani_half", (report.preset_a, report.preset_b)
    assert want["preset_a"].startswith("the PyTorch tutorial")  # the CLI words the same preset
    assert report.max_abs == want["max_abs"] and report.divergence_onset == want["divergence_onset"]
    assert isinstance(report.findings[0], posenc.Finding)
    assert not hasattr(report, "summary") and not hasattr(report.findings[0], "text")


def test_diff_against_a_framework_table_names_the_precision():
    """The PyTorch tutorial's table vs the exact one: only float32 angle rounding."""
    report = posenc.diff(posenc.sinusoid_table(50, 64), golden("tutorial_pe_d64_len50_float32"))
    print(report.findings)
    assert report.shapes_equal and report.max_abs < 7.7e-6


def test_diff_rope_outputs_with_input_and_torch_tensors():
    """HF-style torch-compat outputs vs precise outputs of the same bf16 tensor."""
    torch.manual_seed(0)
    x = torch.randn(256, 2, 64)
    a, b = x.clone(), x.clone()
    pt.apply_rope_(a, offset=0, layout="gptj", tensor_layout="bshd", base=10000.0)
    pt.apply_rope_(b, offset=0, layout="neox", tensor_layout="bshd", base=10000.0)
    report = posenc.diff(a, b, input=x, tolerance=1e-5)
    print(report.findings, report.preset_a, report.preset_b)
    assert report.rope and report.finding("layout") is not None
    assert report.preset_a == report.preset_b == "rope"
    assert report.fit_a.layout == "interleaved" and report.fit_b.layout == "half"  # gptj vs neox


def test_analyze_matches_the_cli(tmp):
    table = posenc.sinusoid_table(128, 64)
    np.save(tmp / "t.npy", table)
    health = posenc.analyze(table)
    want = _cli_json("analyze", tmp / "t.npy")
    assert isinstance(health, posenc.Health) and isinstance(health.fit, posenc.SinusoidFit)
    assert health.fit.found and health.fit.layout == "interleaved" and abs(health.fit.base - 10000) < 1e-3
    assert health.rows == want["rows"] == 128 and health.min == want["min"] and health.max == want["max"]
    assert np.array_equal(health.row_norm, np.array(want["row_norm"]))
    print("health: norm %s, closest pair %s at %.4g, linearity worst %.3g"
          % (health.norm_range, health.closest_pair, health.closest_distance, health.linearity_worst))
    bf16 = torch.from_numpy(table).to(torch.bfloat16)  # bf16 tensors are analyzed as bf16
    assert posenc.analyze(bf16).fit.found
    with pytest.raises(posenc.InvalidArgumentError, match="empty|shape|rows"):
        posenc.analyze(np.zeros((0, 4), np.float32))


def test_precision_matches_the_cli():
    report = posenc.precision("bf16", 20000, dim=128, base=500000)
    want = _cli_json("precision", "--dtype", "bf16", "--max-pos", "20000", "--dim", "128", "--base", "500000")
    print(report)
    assert report.first_inexact_position == 257 and report.first_inexact_rounds_to == 256
    flat = json.dumps(want)
    assert "257" in flat and report.pairs == 64 and len(report.bands) >= 1
    assert [b.angle_error for b in report.bands] == [b["angle_error"] for b in want["bands"]]
    with pytest.raises(posenc.UnsupportedError):
        posenc.precision("f64", 10)


def test_explain_a_config(tmp):
    cfg = {"model_type": "llama", "rope_theta": 500000.0, "hidden_size": 4096, "num_attention_heads": 32,
           "max_position_embeddings": 131072,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192}}
    e = posenc.explain(cfg)
    print(e)
    assert e.rotary_dim == 128 and len(e.pairs) == 64 and e.scaling == "llama3"
    assert e.pairs[0].scale == 1.0 and abs(e.pairs[-1].scale - 1 / 8) < 1e-12  # long wavelengths interpolated
    (tmp / "config.json").write_text(json.dumps(cfg))
    assert posenc.explain(str(tmp / "config.json")).pairs == e.pairs
    (tmp / "bad.json").write_text("{not json")
    with pytest.raises(posenc.FormatError) as info:
        posenc.explain(str(tmp / "bad.json"))
    print("malformed config:", info.value)
    with pytest.raises(posenc.PosencIOError):
        posenc.explain(str(tmp / "missing.json"))


def test_report_writes_html(tmp):
    out = posenc.report(str(tmp / "r.html"), posenc.sinusoid_table(32, 16))
    html = open(out).read()
    assert html.startswith("<!DOCTYPE html>") or "<html" in html[:200]
    bf16 = torch.from_numpy(posenc.sinusoid_table(32, 16)).to(torch.bfloat16)
    assert "<html" in open(posenc.report(str(tmp / "b.html"), bf16)).read()[:500].lower()
    with pytest.raises(posenc.InvalidArgumentError):
        posenc.report(str(tmp / "x.html"), kind="nonsense")
    assert not (tmp / "x.html").exists()


def test_the_worked_example_of_docs_python_md_runs(capsys):
    import os
    import re
    from conftest import ROOT
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    code = re.findall(r"```python\n(.*?)```", text, re.S)
    assert code, "docs/python.md has no python example"
    exec(compile(code[0], "docs/python.md", "exec"), {})
    out = capsys.readouterr().out
    assert "angle_precision" in out


def _explain_ulps(got, want):
    """Worst float64 ULP distance of inv_freq values from the reference's decimal strings."""
    assert len(got) == len(want)
    return max(abs(g - float(w)) / math.ulp(float(w)) for g, w in zip(got, want))


def test_explain_matches_the_model_fixtures_layer_types_included():
    """explain() on every config of tests/fixtures/models against expected.json (computed by
    reference.py with mpmath from the transformers classes' rules): layout, rotary dim, first
    rotated channel (MLA), head dims, softmax scale, and per-layer-type RoPE (Gemma-2/3 full vs
    sliding attention). Tolerance: 1 float64 ULP of inv_freq (the library rounds its long double
    values once; the CLI's model-family test uses the same bound); 1e-14 on the scale factor."""
    import os
    from conftest import ROOT
    models = os.path.join(ROOT, "tests", "fixtures", "models")
    expected = json.load(open(os.path.join(models, "expected.json")))
    worst, bad = (0.0, ""), []
    for name, want in sorted(expected.items()):
        e = posenc.explain(os.path.join(models, name + ".json"))
        got = dict(layout=e.layout, head_dim=e.head_dim, rotary_dim=e.rotary_dim,
                   first_rotated_channel=e.first_rotated_channel, attention_head_dim=e.attention_head_dim,
                   softmax_head_dim=e.softmax_head_dim)
        if any(got[k] != want[k] for k in got):
            bad.append((name, got))
        if abs(e.softmax_scale_factor - float(want["softmax_scale_factor"])) > 1e-14:
            bad.append((name, "softmax_scale_factor", e.softmax_scale_factor))
        u = _explain_ulps([p.frequency for p in e.pairs], want["inv_freq"])
        worst = max(worst, (u, name))
        kinds = want.get("layer_types", [])
        if [(t.name, t.layers, t.sliding_window, t.base) for t in e.layer_types] != \
                [(w["name"], w["layers"], w["sliding_window"], w["base"]) for w in kinds]:
            bad.append((name, "layer kinds", e.layer_types))
        for t, w in zip(e.layer_types, kinds):
            u = _explain_ulps([p.frequency for p in t.pairs], w["inv_freq"])
            worst = max(worst, (u, name + ":" + t.name))
            if u > 1 or abs(t.attention_factor - float(w["attention_factor"])) > 1e-15:
                bad.append((name, t.name, u, t.attention_factor))
    print("%d configs; worst inv_freq %.1f ULP (%s); %d mismatches %s" % (len(expected), worst[0], worst[1],
                                                                       len(bad), bad[:3]))
    assert len(expected) >= 25 and worst[0] <= 1 and not bad


def test_explain_gemma3_full_and_sliding_attention():
    """Gemma-3 4B: full attention = theta 1e6 with linear x8 scaling, 5 layers; sliding
    attention = rope_local_base_freq 1e4 unscaled, window 1024, 29 layers."""
    import os
    from conftest import ROOT
    e = posenc.explain(os.path.join(ROOT, "tests", "fixtures", "models", "gemma3_4b_it.json"))
    print(e)
    full, local = e.layer_types
    assert (full.name, full.layers, full.sliding_window) == ("full_attention", 5, 0)
    assert (full.base, full.scaling, full.factor) == (1e6, "linear", 8.0)
    assert (local.name, local.layers, local.sliding_window) == ("sliding_attention", 29, 1024)
    assert (local.base, local.scaling) == (10000.0, "none")
    assert full.pairs[0].frequency == 0.125 and full.pairs[0].scale == 0.125  # 1 / factor
    assert local.pairs[0].frequency == 1.0 and all(p.scale == 1.0 for p in local.pairs)
    assert e.pairs == full.pairs and e.base == full.base  # the top level is the main RoPE
    assert e.config.layer_types[1].rope.base == 10000.0 and e.config.num_hidden_layers == 34
    assert e.layout == "half" and e.rotary_dim == 256 and e.first_rotated_channel == 0
    assert "sliding_attention" in str(e) and "window 1024" in str(e)


def test_explain_mla_rotates_the_last_channels():
    import os
    from conftest import ROOT
    e = posenc.explain(os.path.join(ROOT, "tests", "fixtures", "models", "deepseek_v2_lite.json"))
    print(e.layout, e.head_dim, e.attention_head_dim, e.first_rotated_channel, e.softmax_scale_factor)
    assert (e.head_dim, e.attention_head_dim, e.first_rotated_channel) == (64, 192, 128)
    assert e.layout == "interleaved" and e.layer_types == [] and e.config.family != ""


def test_nonfinite_error_names_the_cell():
    """POSENC_ERR_NONFINITE (11) -> NonFiniteError, an ArithmeticError and a posenc.Error."""
    x = np.zeros((4, 8), np.float32)
    posenc.check_finite(x, "q")  # finite: no error
    x[2, 5] = np.inf
    with pytest.raises(posenc.NonFiniteError, match=r"q: cell \[2, 5\] is inf") as info:
        posenc.check_finite(x, "q")
    print("check_finite:", info.value)
    assert info.value.status == 11 and isinstance(info.value, ArithmeticError)
    posenc.check_finite(np.array([1, 2], np.int64))  # integers are always finite
    # a library result that would overflow its dtype: position 70000 in float16 (max 65504)
    with pytest.raises(posenc.NonFiniteError, match="overflows f16") as info:
        posenc.baseline_table("index", positions=np.array([0, 70000]), dim=4, dtype="f16")
    print("baseline f16:", info.value)
    assert posenc.baseline_table("index", positions=np.array([0, 65504]), dim=4, dtype="f16")[1, 0] == 65504


def test_health_most_similar_pair():
    table = posenc.sinusoid_table(64, 32)
    table[40] = 3 * table[7]  # same direction, different norm: cosine 1
    h = posenc.analyze(table)
    print("most similar", h.most_similar_pair, "cosine", h.max_cosine, "closest", h.closest_pair)
    assert sorted(h.most_similar_pair) == [7, 40] and abs(h.max_cosine - 1) < 1e-12
