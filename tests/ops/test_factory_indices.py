"""``tril_indices``, ``triu_indices`` and the deprecated ``range`` against PyTorch, and the default device reaching
every new factory on the simulated GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops.factory_indices import RANGE_WARNING

from ..conftest import TORCH_DTYPES, assert_close


def same_error(torch_call, toolkit_call) -> None:
    """Both calls raise: the same exception type, with the same message."""
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as got:
        toolkit_call()
    assert str(got.value) == str(expected.value)


# ---------------------------------------------------------------------------------------------- triangles
@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices_match_torch(name):
    for row in (0, 1, 3, 5):
        for col in (0, 1, 4, 6):
            for offset in (-7, -2, -1, 0, 1, 3, 8):
                got = getattr(toolkit, name)(row, col, offset)
                expected = getattr(torch, name)(row, col, offset)
                assert got.dtype is toolkit.int64 and got.is_contiguous()
                np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices_options(name):
    got = getattr(toolkit, name)(4, 3, offset=-1, dtype=toolkit.int32, device="cpu")
    expected = getattr(torch, name)(4, 3, offset=-1, dtype=torch.int32, device="cpu")
    assert got.dtype is toolkit.int32
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert getattr(toolkit, name)(3, 3, dtype=None).dtype is toolkit.int64  # None is int64 too, as in PyTorch
    x = toolkit.arange(12.0).reshape(4, 3)  # the indices index the triangle
    assert_close(x[tuple(getattr(toolkit, name)(4, 3))], torch.arange(12.0).reshape(4, 3)[tuple(
        getattr(torch, name)(4, 3))])


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args,dtype", [((-1, 3), None), ((3, -2), None), ((3, 3), "float32"), ((3, 3), "int16"),
                                        ((3, 3), "bool")])
def test_triangle_indices_errors_match_torch(name, args, dtype):
    same_error(lambda: getattr(torch, name)(*args, **({"dtype": getattr(torch, dtype)} if dtype else {})),
                lambda: getattr(toolkit, name)(*args, **({"dtype": getattr(toolkit, dtype)} if dtype else {})))


# ---------------------------------------------------------------------------------------------- range
RANGES = [((0, 3), {}), ((1, 4), {}), ((0, 1, 0.1), {}), ((3, 0, -0.7), {}), ((-1.5, 2.5, 0.25), {}),
          ((0, 100, 0.3), {}), ((1e3, 1e3 + 7, 0.013), {"dtype": toolkit.float64}),
          ((0, 4, 1.5), {"dtype": toolkit.float16}),
          ((0.5, 3.7), {"dtype": toolkit.int32}), ((10, 1, -3), {"dtype": toolkit.int64}), ((2, 2), {}),
          ((-5, 5, 2), {"dtype": toolkit.int8})]


@pytest.mark.parametrize("args,kwargs", RANGES)
def test_range_matches_torch_exactly(args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = toolkit.range(*args, **kwargs)
        expected = torch.range(*args, **{k: TORCH_DTYPES[v] for k, v in kwargs.items()})
    assert TORCH_DTYPES[got.dtype] == expected.dtype
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_range_is_inclusive_in_the_default_dtype():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = toolkit.range(1, 4)
        toolkit.set_default_dtype(toolkit.float64)
        try:
            wide = toolkit.range(1, 4)
        finally:
            toolkit.set_default_dtype(toolkit.float32)
        assert toolkit.range(0, 1, 0.5, requires_grad=True).requires_grad
    assert got.tolist() == [1.0, 2.0, 3.0, 4.0] and got.dtype is toolkit.float32
    assert wide.dtype is toolkit.float64


def test_range_warns_at_the_callers_line():
    with pytest.warns(UserWarning) as caught:
        toolkit.range(0, 3)
    assert str(caught[0].message) == RANGE_WARNING
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning) as expected:
        torch.range(0, 3)
    assert str(expected[0].message) == RANGE_WARNING
    with pytest.warns(UserWarning, match="torch.range is deprecated"):  # every call warns, failing ones too
        with pytest.raises(RuntimeError):
            toolkit.range(0, 3, 0)


@pytest.mark.parametrize("args,kwargs", [((0, 3, 0), {}), ((0, 3, -1), {}), ((3, 0), {}), ((0, float("inf")), {}),
                                         ((float("nan"), 1), {}), ((0, 3), {"dtype": "bool"}),
                                         ((0, 3, -1), {"dtype": "int64"})])
def test_range_errors_match_torch(args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda: torch.range(*args, **{k: getattr(torch, v) for k, v in kwargs.items()}),
                    lambda: toolkit.range(*args, **{k: getattr(toolkit, v) for k, v in kwargs.items()}))


def test_range_step_truncated_to_zero_is_an_error():
    """PyTorch's integer kernel divides by the truncated step (the process dies); toolkit raises instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            toolkit.range(0, 1, 0.3, dtype=toolkit.int64)


# ---------------------------------------------------------------------------------------------- default device
def test_default_device_reaches_the_new_factories_on_the_simulated_gpu():
    code = textwrap.dedent("""
        import json, warnings, toolkit
        warnings.simplefilter("ignore")
        toolkit.set_default_device("cuda")
        made = [toolkit.hann_window(4), toolkit.tril_indices(3, 3), toolkit.empty_strided((2,), (1,)),
                toolkit.range(0, 3), toolkit.kaiser_window(4), toolkit.triu_indices(2, 2),
                toolkit.empty_permuted((2, 3), (1, 0)), toolkit.empty_strided((2, 3), (1, 2)),
                toolkit.bartlett_window(3, False), toolkit.hann_window(1), toolkit.blackman_window(0)]
        values = [made[0].cpu().tolist(), made[1].cpu().tolist(), made[3].cpu().tolist(), list(made[7].stride())]
        cpu = toolkit.hann_window(4, device="cpu")
        toolkit.set_default_device(None)
        print(json.dumps([str(t.device) for t in made] + [str(cpu.device), str(toolkit.hann_window(2).device)]
                         + [values]))
    """)
    env = {**os.environ, "TOOLKIT_CUDA_SIMULATOR": "1"}
    found = json.loads(subprocess.check_output([sys.executable, "-c", code], env=env, text=True).splitlines()[-1])
    assert found[:-1] == ["cuda:0"] * 11 + ["cpu", "cpu"]
    hann, tril, rng, stride = found[-1]
    assert hann == torch.hann_window(4).tolist() and tril == torch.tril_indices(3, 3).tolist()
    assert rng == [0.0, 1.0, 2.0, 3.0] and stride == [1, 2]


def test_triangle_and_range_ops_take_the_default_device_themselves():
    """Made by kernels of their own, they carry the registry's default-device flag (PyTorch lists them too)."""
    reg = toolkit.ops.registry
    for o in (*reg.overloads("tril_indices"), *reg.overloads("triu_indices"), *reg.overloads("range")):
        assert o.default_device and o.composite is None
