"""``toolkit.profiler.profile`` around int8 models, eager and compiled: the int8 ops appear by PyTorch's names
(``quantized::linear_dynamic``, ``quantized::conv2d``, ``quantized::linear``, ``aten::quantize_per_tensor``) in
``key_averages()`` and its table, as PyTorch's profiler lists them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from tests.ao.nn.quantized.dynamic.twins import float_twins, inputs

from .test_quantized_modules import converted_static_pair

torch.backends.quantized.engine = "x86"

_INT8 = ("quantized::", "aten::quantize_per_tensor", "aten::dequantize", "aten::int_repr")


def int8_keys(prof) -> set[str]:
    return {e.key for e in prof.key_averages() if e.key.startswith(_INT8)}


def _profiled(lib, fn, *args):
    with lib.profiler.profile() as prof:
        fn(*args)
    return prof


@pytest.fixture(scope="module")
def dynamic_linear():
    ours_f, theirs_f = float_twins("Linear", 4, 3)
    x, tx = inputs((2, 4))
    return (toolkit.ao.nn.quantized.dynamic.Linear.from_float(ours_f),
            torch.ao.nn.quantized.dynamic.Linear.from_float(theirs_f), x, tx)


def test_dynamic_linear_op_is_listed_as_torch_lists_it(dynamic_linear):
    ours, theirs, x, tx = dynamic_linear
    mine, twin = _profiled(toolkit, ours, x), _profiled(torch, theirs, tx)
    assert int8_keys(mine) == int8_keys(twin) == {"quantized::linear_dynamic"}
    (row,) = [e for e in mine.key_averages() if e.key == "quantized::linear_dynamic"]
    assert row.count == 1
    assert "quantized::linear_dynamic" in mine.key_averages().table(sort_by="cpu_time_total")


@pytest.mark.parametrize("how", ["trace", "script"])
def test_compiled_dynamic_linear_runs_the_listed_op(dynamic_linear, how):
    ours, _, x, _ = dynamic_linear
    compiled = toolkit.jit.trace(ours, (x,)) if how == "trace" else toolkit.jit.script(ours)
    compiled(x)  # the first run may compile
    prof = _profiled(toolkit, compiled, x)
    assert int8_keys(prof) == {"quantized::linear_dynamic"}


def test_tensor_level_ops_are_listed_as_torch_lists_them():
    def run(lib):
        x = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        q = lib.quantize_per_tensor(x, 0.05, 10, lib.quint8)
        q.dequantize()
        q.int_repr()

    assert int8_keys(_profiled(toolkit, run, toolkit)) == int8_keys(_profiled(torch, run, torch)) == {
        "aten::quantize_per_tensor", "aten::dequantize", "aten::int_repr"}


def test_static_model_ops_are_listed_as_torch_lists_them():
    ours, theirs, xn = converted_static_pair()
    keys = [int8_keys(_profiled(lib, m, lib.tensor(xn))) for lib, m in ((toolkit, ours), (torch, theirs))]
    assert keys[0] == keys[1] == {"aten::quantize_per_tensor", "quantized::conv2d", "quantized::linear",
                                  "aten::dequantize"}
