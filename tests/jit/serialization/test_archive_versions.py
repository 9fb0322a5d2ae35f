"""Archives saved by earlier toolkits keep loading: ``data/v1_*.pt`` were written by the version-1 archive format,
whose code put one node per statement (before the code was printed as TorchScript prints it). Their graphs run as
saved, their parameters' defaults still come from the code, and they give the numbers the saved module gave."""

from __future__ import annotations

import json
import pathlib
import zipfile

import pytest

import toolkit
from toolkit.jit.serialization.archive import FORMAT_VERSION

from ...conftest import assert_close

DATA = pathlib.Path(__file__).parent / "data"


def _version(path) -> int:
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("archive/manifest.json"))["version"]


def _expected(m, x, scale=None):
    y = toolkit.nn.functional.linear(x, m.l.weight, m.l.bias).relu() * 2
    if scale is not None:
        y = y * scale
    return (y + 2).view(y.size(0), -1)


@pytest.mark.parametrize("kind", ["script", "trace"])
def test_version_1_module_archives_load_and_run(kind):
    path = DATA / f"v1_module_{kind}.pt"
    assert _version(path) == 1 < FORMAT_VERSION
    m = toolkit.jit.load(path)
    x = toolkit.arange(12, dtype=toolkit.float32).reshape(4, 3) / 10
    with toolkit.no_grad():
        assert_close(m(x), _expected(m, x))
        if kind == "script":  # the Optional parameter's default came from the saved code
            assert_close(m(x, toolkit.full((2,), 0.5)), _expected(m, x, toolkit.full((2,), 0.5)))
            assert m.steps == 2
    assert "torch.view" in m.code  # printed again by this toolkit


def test_version_1_function_archive_keeps_its_default():
    f = toolkit.jit.load(DATA / "v1_function_script.pt")
    x = toolkit.ones(2, 5)
    assert_close(f(x), x.sum(0) * 3 + 5)
    assert_close(f(x, 2), x.sum(0) * 2 + 5)


def test_archives_are_written_in_the_current_version(tmp_path):
    toolkit.jit.save(toolkit.jit.script(toolkit.nn.Linear(2, 2)), tmp_path / "m.pt")
    assert _version(tmp_path / "m.pt") == FORMAT_VERSION
