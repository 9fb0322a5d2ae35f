"""``torch.fill`` (out of place) against PyTorch: values, dtype, layout, gradients and errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close, to_torch
from .test_factory_indices import same_error


@pytest.mark.parametrize("value", [1.5, 3.7, -2, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_fill_matches_torch(value, dtype):
    data = np.arange(6).reshape(2, 3).astype(dtype)
    got, expected = toolkit.fill(toolkit.tensor(data), value), torch.fill(torch.tensor(data), value)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert got.dtype.name == str(expected.dtype).removeprefix("torch.")


def test_fill_keeps_the_layout_and_leaves_self_alone():
    x = toolkit.arange(6.0).reshape(2, 3).t()
    out = toolkit.fill(x, 4.0)
    assert out.stride() == torch.fill(torch.arange(6.0).reshape(2, 3).t(), 4.0).stride()
    assert x.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_fill_with_a_tensor_value():
    x, value = toolkit.zeros(3), toolkit.tensor(2.5, dtype=toolkit.float64)
    assert_close(toolkit.fill(x, value), torch.fill(torch.zeros(3), torch.tensor(2.5, dtype=torch.float64)))
    same_error(lambda: torch.fill(torch.zeros(3), torch.ones(2)), lambda: toolkit.fill(x, toolkit.ones(2)))


def test_fill_gradients_match_torch():
    x = toolkit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = toolkit.tensor(2.0, requires_grad=True)
    rx, rv = to_torch(x), to_torch(v)
    out, expected = toolkit.fill(x, v), torch.fill(rx, rv)
    assert out.requires_grad and out.grad_fn is not None
    weights = [1.0, -2.0, 4.0]
    (out * toolkit.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    assert_close(x.grad, rx.grad)
    assert_close(v.grad, rv.grad)
    y = toolkit.tensor([1.0, 2.0], requires_grad=True)
    scalar_filled = toolkit.fill(y, 5.0)
    assert scalar_filled.requires_grad == torch.fill(torch.ones(2, requires_grad=True), 5.0).requires_grad
    scalar_filled.sum().backward()
    assert y.grad.tolist() == [0.0, 0.0]
    assert not toolkit.fill(toolkit.ones(2), 1.0).requires_grad


def test_fill_on_the_simulated_gpu():
    code = textwrap.dedent("""
        import json, toolkit
        x = toolkit.zeros(2, 3, device="cuda").t()
        a, b = toolkit.fill(x, 1.5), toolkit.fill(x, toolkit.tensor(-2.0, device="cuda"))
        print(json.dumps([str(a.device), a.cpu().tolist(), b.cpu().tolist()]))
    """)
    env = {**os.environ, "TOOLKIT_CUDA_SIMULATOR": "1"}
    found = json.loads(subprocess.check_output([sys.executable, "-c", code], env=env, text=True).splitlines()[-1])
    assert found == ["cuda:0", [[1.5] * 2] * 3, [[-2.0] * 2] * 3]


_FILL_DTYPES = ["int32", "int64", "uint8", "int8", "int16", "float32", "float64", "float16", "bool", "complex64"]
_FILL_VALUES = [float("inf"), -float("inf"), float("nan"), 1e300, 70000.0, 2.5, -2.5, 300, -1, -255, -256, 2 ** 31,
                2 ** 63 - 1, -129, True, 3 + 0j, 1 + 2j]
_FILLERS = {
    "full": lambda lib, d, v: lib.full((2,), v, dtype=d),
    "fill_": lambda lib, d, v: lib.zeros(2, dtype=d).fill_(v),
    "full_like": lambda lib, d, v: lib.full_like(lib.zeros(2, dtype=d), v),
    "new_full": lambda lib, d, v: lib.zeros(2, dtype=d).new_full((2,), v),
}


@pytest.mark.parametrize("filler", list(_FILLERS))
@pytest.mark.parametrize("dtype", _FILL_DTYPES)
def test_fill_values_a_dtype_cannot_hold_are_refused_as_torch(filler, dtype):
    """PyTorch's checked conversion: inf/NaN/out-of-range into integers, beyond-finite into floats, an imaginary
    part into a real type are 'value cannot be converted to type ... without overflow'; -1 into uint8 wraps."""
    fill = _FILLERS[filler]
    for v in _FILL_VALUES:
        try:
            expected = fill(torch, getattr(torch, dtype), v).tolist()
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=re.escape(str(e))):
                fill(toolkit, getattr(toolkit, dtype), v)
        else:
            got = fill(toolkit, getattr(toolkit, dtype), v).tolist()
            assert str(got) == str(expected), (dtype, v)
