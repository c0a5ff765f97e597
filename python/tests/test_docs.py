"""Every ```python block of docs/python.md runs (issue 41 items 4 and 7: a block used names it
never defined). Each block runs on its own, in a fresh namespace, from a temporary folder."""
import os
import re

import pytest

import posenc  # noqa: F401  (loaded before a block changes folder: POSENC_LIBRARY may be relative)
import posenc.torch  # noqa: F401

from conftest import ROOT

DOC = os.path.join(ROOT, "docs", "python.md")
BLOCKS = re.findall(r"```python\n(.*?)```", open(DOC, encoding="utf-8").read(), re.S)


def test_the_doc_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))  # keras writes keras.json at its first import
    # torch._dynamo (keras' torch backend imports it) makes its cache folder at import
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    exec(compile(BLOCKS[index], "docs/python.md block %d" % index, "exec"), {"__name__": "__doc_example__"})
