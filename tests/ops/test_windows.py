"""Window functions against PyTorch: every overload, length and floating dtype, the keyword options, the errors,
and the same numbers on the (simulated) GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import toolkit

from ..conftest import TORCH_DTYPES, assert_close
from .test_factory_indices import same_error

# (name, extra positional arguments after the length): one entry per PyTorch overload.
OVERLOADS = [
    ("bartlett_window", ()), ("bartlett_window", (False,)), ("bartlett_window", (True,)),
    ("blackman_window", ()), ("blackman_window", (False,)),
    ("hamming_window", ()), ("hamming_window", (False,)), ("hamming_window", (True, 0.6)),
    ("hamming_window", (False, 0.6, 0.25)),
    ("hann_window", ()), ("hann_window", (False,)),
    ("kaiser_window", ()), ("kaiser_window", (False,)), ("kaiser_window", (True, 5.0)),
    ("kaiser_window", (False, 0.5)),
]
NAMES = sorted({name for name, _ in OVERLOADS})
LENGTHS = (0, 1, 2, 3, 4, 7, 10, 64, 257)


def _both(name, *args, **kwargs):
    th_kwargs = {k: TORCH_DTYPES.get(v, v) for k, v in kwargs.items()}
    return getattr(toolkit, name)(*args, **kwargs), getattr(torch, name)(*args, **th_kwargs)


@pytest.mark.parametrize("name,extra", OVERLOADS)
@pytest.mark.parametrize("dtype", [toolkit.float32, toolkit.float64, toolkit.float16])
def test_window_matches_torch(name, extra, dtype):
    for n in LENGTHS:
        got, expected = _both(name, n, *extra, dtype=dtype)
        assert got.dtype is dtype and tuple(got.shape) == (n,)
        assert got.is_contiguous() and not got.requires_grad
        assert_close(got, expected)


@pytest.mark.parametrize("name", NAMES)
def test_window_takes_the_default_dtype(name):
    toolkit.set_default_dtype(toolkit.float64)
    torch.set_default_dtype(torch.float64)
    try:
        got, expected = _both(name, 9)
    finally:
        toolkit.set_default_dtype(toolkit.float32)
        torch.set_default_dtype(torch.float32)
    assert got.dtype is toolkit.float64
    assert_close(got, expected)


@pytest.mark.parametrize("name", NAMES)
def test_window_keyword_options(name):
    got, expected = _both(name, 6, periodic=False, device="cpu", pin_memory=False, requires_grad=True)
    assert got.requires_grad and got.is_leaf and got.grad_fn is None and got._base is None
    assert got.device == toolkit.device("cpu")
    assert_close(got.detach(), expected.detach())
    for n in (0, 1):  # the short-cut lengths keep the options too
        assert getattr(toolkit, name)(n, requires_grad=True, dtype=toolkit.float64).requires_grad


def _same_error(name, *args, **kwargs):
    th_kwargs = {k: TORCH_DTYPES.get(v, v) for k, v in kwargs.items()}
    same_error(lambda: getattr(torch, name)(*args, **th_kwargs), lambda: getattr(toolkit, name)(*args, **kwargs))


@pytest.mark.parametrize("name", NAMES)
def test_window_errors_match_torch(name):
    _same_error(name, -1)
    _same_error(name, -3, False)
    for dtype in (toolkit.int64, toolkit.int32, toolkit.bool, toolkit.uint8):
        _same_error(name, 4, dtype=dtype)
    _same_error(name, 4, dtype=toolkit.int16, pin_memory=True)
    _same_error(name, 4, layout=torch.sparse_coo)


def test_hamming_parameters_are_positional_only_after_periodic():
    with pytest.raises(TypeError):
        torch.hamming_window(5, alpha=0.6)
    with pytest.raises(TypeError):
        toolkit.hamming_window(5, alpha=0.6)  # (the messages list the overloads each library has)
    got, expected = _both("hamming_window", 5, False, 0.6, 0.3)
    assert_close(got, expected)


def test_windows_are_registry_ops_without_the_default_device_flag():
    """They are compositions: the default device reaches them through the factories they call."""
    ops = [o for name in NAMES for o in toolkit.ops.registry.overloads(name)]
    assert len(ops) == 13
    assert all(o.composite is not None and not o.default_device and o.device_arg is not None for o in ops)


def test_windows_on_the_simulated_gpu_equal_the_cpu():
    code = textwrap.dedent("""
        import json, toolkit
        calls = [("hann_window", (5,)), ("hamming_window", (6, False, 0.6, 0.3)), ("bartlett_window", (7,)),
                 ("blackman_window", (5, False)), ("kaiser_window", (6, True, 3.0))]
        out = []
        for name, args in calls:
            gpu = getattr(toolkit, name)(*args, device="cuda")
            cpu = getattr(toolkit, name)(*args)
            out.append([str(gpu.device), (gpu.cpu() - cpu).abs().max().item()])
        print(json.dumps(out))
    """)
    env = {**os.environ, "TOOLKIT_CUDA_SIMULATOR": "1"}
    found = json.loads(subprocess.check_output([sys.executable, "-c", code], env=env, text=True).splitlines()[-1])
    assert [d for d, _ in found] == ["cuda:0"] * 5
    assert all(diff < 1e-6 for _, diff in found)
