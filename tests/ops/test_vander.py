"""``vander`` against PyTorch: exact values for every dtype (PyTorch's running product), ``N`` and
``increasing``, gradients and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close, to_torch
from .test_factory_indices import same_error


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int8", "int64", "bool"])
def test_vander_matches_torch_exactly(dtype):
    data = (np.random.default_rng(0).standard_normal(6) * 2).astype(dtype)
    for N in (None, 0, 1, 2, 3, 8):
        for increasing in (False, True):
            got = toolkit.vander(toolkit.tensor(data), N, increasing)
            expected = torch.vander(torch.tensor(data), N=N, increasing=increasing)
            assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
            np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_vander_of_an_empty_vector():
    assert tuple(toolkit.vander(toolkit.zeros(0)).shape) == tuple(torch.vander(torch.zeros(0)).shape) == (0, 0)


def _powers(r, N, increasing):
    """PyTorch's vander written with ``pow``, whose gradient PyTorch computes (its own vander's backward fails
    in PyTorch 2.13: it overwrites a value its cumprod saved)."""
    exponents = torch.arange(N, dtype=r.dtype)
    out = r.unsqueeze(1) ** exponents
    return out if increasing else out.flip(1)


def test_vander_gradient_matches_the_power_formula():
    x = toolkit.tensor([0.5, -1.25, 2.0, 0.0], dtype=toolkit.float64, requires_grad=True)
    r = to_torch(x)
    for N, increasing in ((None, False), (3, True), (6, False), (2, True)):
        x.grad, r.grad = None, None
        n = N or 4
        weights = np.random.default_rng(n).standard_normal((4, n))
        (toolkit.vander(x, N, increasing) * toolkit.tensor(weights)).sum().backward()
        (_powers(r, n, increasing) * torch.tensor(weights)).sum().backward()
        assert_close(x.grad, r.grad)
    assert toolkit.autograd.gradcheck(lambda t: toolkit.vander(t, 4), (x,))
    nonzero = toolkit.tensor([0.5, -1.25, 2.0], dtype=toolkit.float64, requires_grad=True)  # (cumprod's second
    assert toolkit.autograd.gradgradcheck(lambda t: toolkit.vander(t, 3, True), (nonzero,))  # derivative at 0)
    assert toolkit.vander(x, 1).requires_grad == torch.vander(r, 1).requires_grad  # a column of ones


@pytest.mark.parametrize("shape,N", [((2, 2), None), ((3,), -1), ((), None)])
def test_vander_errors_match_torch(shape, N):
    same_error(lambda: torch.vander(torch.ones(shape), N), lambda: toolkit.vander(toolkit.ones(shape), N))


def test_vander_on_the_simulated_gpu_equals_the_cpu():
    code = textwrap.dedent("""
        import json, toolkit
        x = toolkit.tensor([0.5, -1.25, 2.0])
        gpu, cpu = toolkit.vander(x.cuda(), 4), toolkit.vander(x, 4)
        ints = toolkit.vander(toolkit.tensor([1, 2, 3], device="cuda"), increasing=True)
        print(json.dumps([str(gpu.device), gpu.cpu().tolist() == cpu.tolist(), str(ints.dtype), ints.cpu().tolist()]))
    """)
    env = {**os.environ, "TOOLKIT_CUDA_SIMULATOR": "1"}
    found = json.loads(subprocess.check_output([sys.executable, "-c", code], env=env, text=True).splitlines()[-1])
    assert found == ["cuda:0", True, "toolkit.int64", [[1, 1, 1], [1, 2, 4], [1, 3, 9]]]
