"""Factories against PyTorch: exact values (bit for bit for ranges), dtypes, shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import TORCH_DTYPES, assert_close

DTYPES = [toolkit.float32, toolkit.float64, toolkit.float16, toolkit.int64, toolkit.int32, toolkit.uint8]


def _call(name, args, dtype=None):
    kw_tk = {} if dtype is None else {"dtype": dtype}
    kw_th = {} if dtype is None else {"dtype": TORCH_DTYPES[dtype]}
    return getattr(toolkit, name)(*args, **kw_tk), getattr(torch, name)(*args, **kw_th)


def _same(a, b):
    an, bn = a.numpy(), b.numpy()
    assert an.dtype == bn.dtype and an.shape == bn.shape
    np.testing.assert_array_equal(an, bn)


@pytest.mark.parametrize("args", [(5,), (1, 10), (0, 1, 0.1), (1, 2.5, 0.5), (-3, 3, 0.7), (10, 0, -1), (0.1, 1.1, 0.3),
                                  (1e-3, 1, 0.05), (0, 10, 3), (0, 5, 2.0), (-1.5, 1.5, 0.1), (0, 1, 1 / 3),
                                  (0, 100, 0.37)])
@pytest.mark.parametrize("dtype", [None, toolkit.float32, toolkit.float64, toolkit.float16, toolkit.int32,
                                   toolkit.uint8])
def test_arange_bitwise(args, dtype):
    _same(*_call("arange", args, dtype))


def test_arange_random_ranges_and_large_sizes():
    rng = np.random.default_rng(0)
    for _ in range(100):
        s, st = float(rng.normal() * 10), float(rng.random() * 3 + 0.01)
        e = s + st * int(rng.integers(1, 200))
        for d in (toolkit.float32, toolkit.float64):
            _same(*_call("arange", (s, e, st), d))
    # Beyond 32768 elements PyTorch splits the range over its threads, which changes the low bits: toolkit models
    # its own thread count, so PyTorch runs with as many here (conftest keeps it on one thread otherwise).
    torch.set_num_threads(toolkit.get_num_threads())
    try:
        for n in (32768, 40000, 65537):
            _same(*_call("arange", (0, n * 0.1, 0.1)))
    finally:
        torch.set_num_threads(1)
    _same(*_call("arange", (2.5,), toolkit.int64))


@pytest.mark.parametrize("args", [(0, 1, 5), (0, 1, 1), (0, 1, 0), (-2.5, 7.3, 17), (3, 100, 33), (1, 0, 11),
                                  (0, 10, 4), (0.1, 0.9, 7), (-1e5, 1e5, 1001)])
@pytest.mark.parametrize("dtype", [None, toolkit.float64, toolkit.int64, toolkit.int32, toolkit.float16])
def test_linspace_and_logspace_bitwise(args, dtype):
    if dtype is toolkit.float16 and abs(args[0]) > 65504:
        return
    _same(*_call("linspace", args, dtype))
    _same(*_call("logspace", args, dtype))
    _same(*_call("logspace", args + (2.0,), dtype))


@pytest.mark.parametrize("fn,match", [
    (lambda m: m.linspace(0, 1, -1), "number of steps must be non-negative"),
    (lambda m: m.linspace(-2.5, 7.3, 17, dtype=m.uint8), "value cannot be converted to type uint8_t without overflow"),
    (lambda m: m.linspace(-1e5, 1e5, 11, dtype=m.float16), "cannot be converted to type c10::Half without overflow"),
    (lambda m: m.arange(0, 5, 0), "step must be nonzero"),
    (lambda m: m.arange(5, 0, 1), "upper bound and lower bound inconsistent with step sign"),
    (lambda m: m.eye(-1), "n must be greater or equal to 0, got -1"),
    (lambda m: m.zeros((-1, 2)), "Dimension size must be non-negative"),
    (lambda m: m.ones(2, -3), "negative dimension -3: \\[2, -3\\]"),
    (lambda m: m.full((-2,), 1.0), "negative dimension -2"),
])
def test_errors(fn, match):
    with pytest.raises(RuntimeError, match=match):
        fn(torch)
    with pytest.raises(RuntimeError, match=match):
        fn(toolkit)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape", [(2, 3), (0,), (), (1, 0, 2)])
@pytest.mark.parametrize("dtype", [None, toolkit.int32, toolkit.bool, toolkit.float64])
def test_sized_factories(name, shape, dtype):
    a, b = _call(name, (shape,), dtype)
    assert a.dtype is toolkit.float32 if dtype is None else a.dtype is dtype
    assert TORCH_DTYPES[a.dtype] == b.dtype and tuple(a.shape) == tuple(b.shape)
    if name != "empty":
        _same(a, b)


@pytest.mark.parametrize("value", [3, 2.5, True, -1])
@pytest.mark.parametrize("dtype", [None, toolkit.float64, toolkit.int64])
def test_full_and_full_like(value, dtype):
    _same(*_call("full", ((2, 3), value), dtype))
    x, y = toolkit.zeros(2, 2, dtype=toolkit.int32), torch.zeros(2, 2, dtype=torch.int32)
    kw = {} if dtype is None else {"dtype": dtype}
    kwt = {} if dtype is None else {"dtype": TORCH_DTYPES[dtype]}
    _same(toolkit.full_like(x, value, **kw), torch.full_like(y, value, **kwt))


@pytest.mark.parametrize("args", [(3,), (2, 4), (0,), (4, 0)])
@pytest.mark.parametrize("dtype", [None, toolkit.int64, toolkit.bool])
def test_eye(args, dtype):
    _same(*_call("eye", args, dtype))


def test_like_factories_keep_dtype_and_take_options():
    x = toolkit.tensor([[1, 2], [3, 4]])
    assert toolkit.zeros_like(x).dtype is toolkit.int64
    assert toolkit.ones_like(x, dtype=toolkit.float64).dtype is toolkit.float64
    assert tuple(toolkit.empty_like(x).shape) == (2, 2)
    y = toolkit.zeros_like(toolkit.zeros(3), requires_grad=True)
    assert y.requires_grad and y.is_leaf
    _same(toolkit.ones_like(x), torch.ones_like(torch.tensor([[1, 2], [3, 4]])))


@pytest.mark.parametrize("args,kwargs", [
    ((0, 1, 0.1), {"dtype": "int64"}), ((0, 1, 0.5), {"dtype": "int64"}), ((1, 0, -0.1), {"dtype": "int64"}),
    ((0, 1, -0.1), {"dtype": "int64"}), ((0, 10, 0), {}), ((0, 10, 0), {"dtype": "int64"}), ((10, 0, 1), {}),
    ((float("nan"),), {}), ((float("inf"),), {}), ((float("-inf"), 0), {}), ((0, 5, float("nan")), {}),
    ((0, 1e20, 1e-10), {}), ((0, 1, 1e-300), {"dtype": "float64"}), ((0, 1e20, 1e-10), {"dtype": "int64"}),
    ((0, 1e19), {"dtype": "int64"}), ((0, 5, float("inf")), {"dtype": "int64"}), ((5,), {"dtype": "bool"}),
    ((0, 1, 0.1), {"dtype": "bool"}),
])
def test_arange_error_types_match_torch(args, kwargs):
    """Each bad arange raises PyTorch's exception type (ValueError for an int64 step truncated to 0)."""
    try:
        torch.arange(*args, **{k: getattr(torch, v) for k, v in kwargs.items()})
    except Exception as e:  # noqa: BLE001 - the oracle's exception type is what is compared
        expected = e
    else:
        raise AssertionError("torch accepted it")
    with pytest.raises(type(expected)) as info:
        toolkit.arange(*args, **{k: getattr(toolkit, v) for k, v in kwargs.items()})
    assert type(info.value) is type(expected)
    assert str(expected).split(" (")[0] in str(info.value)


@pytest.mark.parametrize("args,kwargs", [((0, 1, 0.1), {"dtype": "int32"}), ((0, 5, float("inf")), {}),
                                         ((0, 3, 1.5), {"dtype": "int64"}), ((0.5, 3, 1), {"dtype": "int64"})])
def test_arange_edge_values_match_torch(args, kwargs):
    expected = torch.arange(*args, **{k: getattr(torch, v) for k, v in kwargs.items()})
    assert_close(toolkit.arange(*args, **{k: getattr(toolkit, v) for k, v in kwargs.items()}), expected)
