"""Every op with a CUDA kernel, on its registry samples, against the CPU result (generated from the registry)."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.ops import registry

from .helpers import host, needs_cuda, to_device

pytestmark = needs_cuda
SAMPLES_PER_OP = 2  # the simulator runs each launch in Python threads: two samples per op keep this quick


def _cuda_ops():
    if not toolkit.cuda.is_available():
        return []
    toolkit.cuda.init()
    return [o for o in registry.all_ops() if "cuda" in o.kernels and o.kind not in (registry.INPLACE, registry.RANDOM)
            and o.samples is not None]


def _cases():
    for o in _cuda_ops():
        for i, _ in zip(range(SAMPLES_PER_OP), o.samples(np.random.default_rng(0))):
            yield pytest.param(o, i, id=f"{o.schema.full_name}-{i}")


def _sample(o, i):
    for k, s in enumerate(o.samples(np.random.default_rng(0))):
        if k == i:
            return s
    raise IndexError(i)


def _compare(a, b, name):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), name
        for x, y in zip(a, b):
            _compare(x, y, name)
        return
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), f"{name}: CUDA gave {type(b)}"
        assert a.dtype == b.dtype and a.shape == b.shape, f"{name}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        tol = 1e-5 if a.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True, err_msg=name)
    else:
        assert a == b or (a != a and b != b), name


@pytest.mark.parametrize("o,i", list(_cases()))
def test_cuda_matches_cpu(o, i):
    args, kwargs = _sample(o, i)
    try:
        expected = o(*to_device(args, "cpu"), **kwargs)
    except Exception as e:  # the CUDA kernel must refuse the same input the same way
        with pytest.raises(type(e)):
            o(*to_device(args, "cuda"), **kwargs)
        return
    if not o.tensor_args and o.device_arg is not None:
        kwargs = dict(kwargs, device="cuda")
    got = o(*to_device(args, "cuda"), **kwargs)
    if o.name == "empty":
        assert got.shape == expected.shape and got.dtype == expected.dtype and got.is_cuda
        return
    for t in (got if isinstance(got, (list, tuple)) else (got,)):
        if isinstance(t, toolkit.Tensor):
            assert t.is_cuda, f"{o.name} returned a {t.device} tensor"
    _compare(host(expected), host(got), o.schema.full_name)


def test_enough_ops_have_cuda_kernels():
    names = {o.name for o in _cuda_ops()}
    for n in ("add", "mul", "exp", "where", "sum", "mean", "amax", "argmax", "mm", "matmul", "addmm", "linear",
              "convolution", "conv2d", "max_pool2d", "softmax", "log_softmax", "nll_loss_nd", "gather",
              "index_select", "embedding", "view", "transpose", "_to_copy", "zeros", "ones", "full"):
        assert n in names, n


def test_op_without_cuda_kernel_raises_naming_op_and_device():
    x = toolkit.ones(3, device="cuda")
    missing = next(o for o in registry.all_ops() if "cuda" not in o.kernels and o.composite is None
                   and o.kind is registry.REDUCTION and o.name == "cumsum")
    with pytest.raises(NotImplementedError, match="cumsum.*cuda"):
        missing(x, 0)


def test_random_ops_equal_cpu_under_same_seed():
    toolkit.manual_seed(3)
    a = toolkit.rand(4, 5)
    b = toolkit.randn(7)
    toolkit.cuda.manual_seed(3)
    ca = toolkit.rand(4, 5, device="cuda")
    cb = toolkit.randn(7, device="cuda")
    assert ca.is_cuda and cb.is_cuda
    np.testing.assert_array_equal(ca.cpu().numpy(), a.numpy())
    np.testing.assert_array_equal(cb.cpu().numpy(), b.numpy())
    toolkit.manual_seed(5)
    d = toolkit.nn.functional.dropout(toolkit.ones(20), 0.5)
    toolkit.manual_seed(5)
    cd = toolkit.nn.functional.dropout(toolkit.ones(20, device="cuda"), 0.5)
    np.testing.assert_array_equal(cd.cpu().numpy(), d.numpy())
