"""``math`` functions of one number in script code: TorchScript's ``aten::<name>.int/.float`` builtins, giving
Python's bits, saved and loaded."""

from __future__ import annotations

import math

import pytest
import torch

import toolkit
from toolkit.jit.frontend.script import FrontendError

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")


def _scalars(d: int, x: float) -> float:
    return (math.sqrt(d) + math.sqrt(x) + math.exp(x) + math.expm1(x) + math.log10(d) + math.log1p(x)
            + math.sin(x) + math.cos(d) + math.tan(x) + math.tanh(x) + math.atan(d) + math.erf(x))


class _Scale(toolkit.nn.Module):
    def forward(self, q, d: int):
        return q * math.sqrt(1.0 / float(d)) + 1.0 / math.sqrt(d)


@pytest.mark.parametrize("d,x", [(1, 0.5), (723, 1e-3), (64, 2.25)])
def test_math_functions_give_python_and_torchscript_values(d, x):
    s = toolkit.jit.script(_scalars)
    assert s(d, x) == _scalars(d, x) == torch.jit.script(_scalars)(d, x)
    kinds = {n.kind for n in s.graph.all_nodes()}
    assert {"aten::sqrt.int", "aten::sqrt.float", "aten::erf.float", "aten::cos.int"} <= kinds


def test_module_using_math_saves_and_loads(tmp_path):
    m = _Scale()
    toolkit.jit.save(toolkit.jit.script(m), str(tmp_path / "m.pt"))
    q = toolkit.randn(3)
    assert toolkit.jit.load(str(tmp_path / "m.pt"))(q, 723).tolist() == m(q, 723).tolist()


def _two_args(x: float) -> float:
    return math.sqrt(x, x)


def _a_bool(x: bool) -> float:
    return math.sqrt(x)


@pytest.mark.parametrize("fn,msg", [(_two_args, r"math.sqrt\(\) takes exactly one argument"),
                                    (_a_bool, r"math.sqrt\(\) expects an int or a float in script code, got bool")])
def test_bad_arguments_are_located_errors(fn, msg):
    with pytest.raises(FrontendError, match=msg) as e:
        toolkit.jit.script(fn)
    assert "test_math_builtins.py" in str(e.value)
