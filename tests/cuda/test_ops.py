"""Every op with a CUDA kernel, on its registry samples, against the CPU result (generated from the registry)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import toolkit
from toolkit.backends.cuda.elementwise import COMPLEX_REFUSAL
from toolkit.ops import registry

from .helpers import UP_TO_SIGN, compare, host, needs_cuda, sample_accum, to_device

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


def _complex(*values) -> bool:
    """Whether a sample or a result holds a complex tensor or array."""
    for v in values:
        if isinstance(v, (list, tuple)):
            if _complex(*v):
                return True
        elif isinstance(v, dict):
            if _complex(*v.values()):
                return True
        elif isinstance(v, (np.ndarray, toolkit.Tensor)) and v.dtype in (np.complex64, np.complex128, toolkit.complex64,
                                                                        toolkit.complex128):
            return True
    return False


def _sample(o, i):
    for k, s in enumerate(o.samples(np.random.default_rng(0))):
        if k == i:
            return s
    raise IndexError(i)


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
    try:
        got = o(*to_device(args, "cuda"), **kwargs)
    except NotImplementedError as e:
        if COMPLEX_REFUSAL in str(e) and _complex(args, expected):
            return  # complex math runs on the CPU only for now; the kernels refuse it instead of dropping parts
        raise
    if o.name == "empty":
        assert got.shape == expected.shape and got.dtype == expected.dtype and got.is_cuda
        return
    for t in (got if isinstance(got, (list, tuple)) else (got,)):
        if isinstance(t, toolkit.Tensor):
            assert t.is_cuda, f"{o.name} returned a {t.device} tensor"
    if type(got) is not type(expected):  # the same namedtuple (``.U``, ``.eigenvalues``) or plain type
        raise AssertionError(f"{o.name}: CUDA gave {type(got).__name__}, CPU {type(expected).__name__}")
    rule = UP_TO_SIGN.get(o.name)
    if rule is not None:
        rule(args, kwargs, host(expected), host(got), o.name)
        return
    compare(host(expected), host(got), o.schema.full_name, sample_accum(args))


WITHOUT_CUDA_KERNEL_YET = frozenset(
    line.strip() for line in open(os.path.join(os.path.dirname(__file__), "ops_without_cuda_kernel.txt"))
    if line.strip() and not line.startswith("#"))
"""The ops that run on the CPU only for now (on CUDA tensors they raise NotImplementedError naming the op and
the device): the list only shrinks."""


def test_every_op_with_a_kernel_has_a_cuda_kernel():
    """A new op needs a CUDA kernel too: every op except compositions of other ops (which run on any device),
    in-place variants through the functional op whose kernels they share, and the listed ops still waiting for
    theirs. An op of the list that gains a kernel leaves the list."""
    toolkit.cuda.init()
    missing = {o.schema.full_name for o in registry.all_ops()
               if o.composite is None and "cuda" not in (o.inplace_of or o).kernels}
    assert not missing - WITHOUT_CUDA_KERNEL_YET, f"ops without a CUDA kernel: {sorted(missing - WITHOUT_CUDA_KERNEL_YET)}"
    assert not WITHOUT_CUDA_KERNEL_YET - missing, (
        f"ops listed in ops_without_cuda_kernel.txt that have a CUDA kernel now (remove them from the list): "
        f"{sorted(WITHOUT_CUDA_KERNEL_YET - missing)}")


def test_op_without_cuda_kernel_raises_naming_op_and_device(monkeypatch):
    x = toolkit.ones(3, device="cuda")
    missing = registry.get("cumsum")
    monkeypatch.delitem(missing.kernels, "cuda", raising=False)  # as if it had none
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
