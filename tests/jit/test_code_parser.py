"""toolkit.jit.load runs what the archive's ``.code`` text says, parsed with ``ast`` against an allow-list."""

import io
import zipfile

import numpy as np
import pytest

import toolkit
import toolkit.nn as nn
from toolkit.jit import load, save
from toolkit.jit.code_parser import CodeError, rebuild_from_code


def _fn(x, y):
    return (2 * x + y).sin() * y.mean(0, keepdim=True)


def _archive(obj) -> bytes:
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _edit_code(data: bytes, edit, entry: str = "archive/code/_fn.py") -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            body = src.read(name)
            if name == entry:
                new = edit(body.decode())
                assert new != body.decode()
                body = new.encode()
            dst.writestr(name, body)
    return out.getvalue()


def _load_bytes(data: bytes):
    return load(io.BytesIO(data))


@pytest.fixture
def xy():
    toolkit.manual_seed(0)
    return toolkit.randn(3, 4), toolkit.randn(3, 4)


def test_editing_the_op_changes_what_runs(xy):
    x, y = xy
    data = _archive(toolkit.jit.trace(_fn, xy))
    lf = _load_bytes(_edit_code(data, lambda s: s.replace("_4 = torch.mul(_2, _3)", "_4 = torch.add(_2, _3)")))
    expected = (2 * x + y).sin() + y.mean(0, keepdim=True)
    np.testing.assert_allclose(lf(x, y).numpy(), expected.numpy(), rtol=1e-6)
    assert not np.allclose(lf(x, y).numpy(), _fn(x, y).numpy())
    assert "aten::add(%" in str(lf.graph).splitlines()[-2]


def test_editing_a_constant_and_wiring_changes_what_runs(xy):
    x, y = xy
    data = _archive(toolkit.jit.trace(_fn, xy))
    lf = _load_bytes(_edit_code(data, lambda s: s.replace("torch.mul(2, x)", "torch.mul(3, x)")))
    np.testing.assert_allclose(lf(x, y).numpy(), ((3 * x + y).sin() * y.mean(0, keepdim=True)).numpy(), rtol=1e-6)
    lf = _load_bytes(_edit_code(data, lambda s: s.replace("torch.mean(y, [0]", "torch.mean(x, [1]")))
    np.testing.assert_allclose(lf(x, y).numpy(), ((2 * x + y).sin() * x.mean(1, keepdim=True)).numpy(),
                               rtol=1e-6)
    lf = _load_bytes(_edit_code(data, lambda s: s.replace("return _4", "return _2")))
    np.testing.assert_allclose(lf(x, y).numpy(), (2 * x + y).sin().numpy(), rtol=1e-6)


def test_untouched_code_round_trips_exactly(xy):
    sf = toolkit.jit.trace(_fn, xy)
    lf = _load_bytes(_archive(sf))
    assert str(lf.graph) == str(sf.graph) and lf.code == sf.code
    toolkit.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    sm = toolkit.jit.trace(m, toolkit.randn(2, 4))
    lm = _load_bytes(_archive(sm))
    assert str(lm.graph) == str(sm.graph) and lm.code == sm.code


@pytest.mark.parametrize("old,new,match", [
    ("torch.mul(_2, _3)", "torch.system(_2, _3)", r"unknown op 'torch\.system'"),
    ("torch.mul(_2, _3)", "os.system(_2)", r"unknown op 'os\.system'"),
    ("torch.mul(_2, _3)", "__import__('os')", r"unknown op '__import__'"),
    ("torch.mul(_2, _3)", "torch.mul(_2, secret)", r"unknown name 'secret'"),
    ("torch.mul(_2, _3)", "torch.mul(_2, open('f'))", r"unsupported expression \"open\('f'\)\""),
    ("torch.mul(_2, _3)", "_2 if _3 else _3", r"expected an op call"),
    ("torch.mul(2, x)", "torch.mul(2, x, 5, 6, 7)", r"no overload of torch\.mul"),
    ("  return _4", "  import os\n  return _4", r"unexpected statement 'import os'"),
    ("  _4 = torch.mul(_2, _3)", "  import os", r"expected an assignment for aten::mul"),
    ("  return _4", "  return _4 +", r"does not parse"),
])
def test_unknown_names_and_constructs_are_rejected(xy, old, new, match):
    data = _archive(toolkit.jit.trace(_fn, xy))
    with pytest.raises(RuntimeError, match=r"<BytesIO> is not a valid archive: archive/code/_fn\.py: .*" + match):
        _load_bytes(_edit_code(data, lambda s: s.replace(old, new)))


def test_missing_code_entry_is_an_error(xy):
    data = _archive(toolkit.jit.trace(_fn, xy))
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            if not name.startswith("archive/code/"):
                dst.writestr(name, src.read(name))
    with pytest.raises(RuntimeError, match=r"no archive/code/_fn\.py in the archive"):
        load(io.BytesIO(out.getvalue()))


def test_rebuild_refuses_a_second_definition(xy):
    g = toolkit.jit.trace(_fn, xy).graph.copy()
    with pytest.raises(CodeError, match="exactly one function definition"):
        rebuild_from_code(g, "def f(x, y):\n  return x\ndef g():\n  return 1\n")
    with pytest.raises(CodeError, match="takes 1 inputs, the graph 2"):
        rebuild_from_code(g, "def f(x):\n  return x\n")
