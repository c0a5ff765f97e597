"""analyze / diff / precision / explain / report from Python: structured results equal
to what the CLI (`--json`) reports from the same library, plus the worked cases of
docs/analysis.md (offset, layout, torch-compat angle precision)."""
import json

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
    print("findings:", [(f.kind, f.value) for f in report.findings], "| presets:", report.preset_a, report.preset_b)
    assert [(f.kind, f.value) for f in report.findings] == [(f["key"], f["value"]) for f in want["findings"]]
    assert report.kinds == ["layout", "offset"] and report.finding("offset").value == 2
    assert report.explained == want["explained"]
    assert report.preset_a == "tutorial" and report.preset_b == "vaswani_half"
    assert report.max_abs == want["max_abs"] and report.divergence_onset == want["divergence_onset"]
    assert isinstance(report.findings[0], posenc.Finding)


def test_diff_against_a_framework_table_names_the_precision():
    """The PyTorch tutorial's table vs the exact one: only float32 angle rounding."""
    report = posenc.diff(posenc.sinusoid_table(50, 64), golden("tutorial_pe_d64_len50_float32"))
    print([(f.kind, f.value, f.a, f.b) for f in report.findings])
    assert report.shapes_equal and report.max_abs < 7.7e-6


def test_diff_rope_outputs_with_input_and_torch_tensors():
    """HF-style torch-compat outputs vs precise outputs of the same bf16 tensor."""
    torch.manual_seed(0)
    x = torch.randn(256, 2, 64)
    a, b = x.clone(), x.clone()
    pt.apply_rope_(a, offset=0, layout="gptj")
    pt.apply_rope_(b, offset=0, layout="neox")
    report = posenc.diff(a, b, input=x, tolerance=1e-5)
    print([(f.kind, f.value, f.a, f.b) for f in report.findings])
    assert report.finding("layout") is not None


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
