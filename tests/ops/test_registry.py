"""Tests generated from the op registry: every op, against PyTorch, with gradcheck.

Nothing here names an op: adding an op to the registry adds its tests, and an
op without samples, meta rule or derivative fails the coverage checks.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit.dispatch import bind
from toolkit.ops import api, registry
from toolkit.ops.registry import FACTORY, INPLACE, RANDOM

from ..conftest import TORCH_DTYPES, assert_close

OPS = [o for o in registry.all_ops() if o.kind != INPLACE]
NONDETERMINISTIC = (RANDOM,)


def _op_id(o) -> str:
    return o.schema.full_name


def _cases():
    for o in OPS:
        if o.samples is None:
            continue
        for i, _ in enumerate(o.samples(np.random.default_rng(0))):
            yield pytest.param(o, i, id=f"{_op_id(o)}-{i}")


CASES = list(_cases())


def _sample(o, i):
    for k, s in enumerate(o.samples(np.random.default_rng(0))):
        if k == i:
            return s
    raise IndexError(i)


def _tk(x, float64_grad=False):
    if isinstance(x, np.ndarray):
        t = toolkit.tensor(x)
        if float64_grad and x.dtype.kind == "f":
            t = toolkit.tensor(x.astype(np.float64)).requires_grad_()
        return t
    if isinstance(x, list):
        return [_tk(e, float64_grad) for e in x]
    if isinstance(x, tuple):
        return tuple(_tk(e, float64_grad) for e in x)
    return x


def _th(x):
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x.copy())
    if isinstance(x, list):
        return [_th(e) for e in x]
    if isinstance(x, tuple):
        return tuple(_th(e) for e in x)
    if isinstance(x, dict):
        return {k: _th(v) for k, v in x.items()}
    if isinstance(x, toolkit.dtype):
        return TORCH_DTYPES[x]
    if isinstance(x, toolkit.device):
        return torch.device(str(x))
    return x


def _call_tk(o, args, kwargs):
    if o.function:
        public = o.function if isinstance(o.function, str) else o.name
        if o.namespace is None:
            return getattr(toolkit, public)(*args, **kwargs)
        return api.function_for(o.name)(*args, **kwargs)
    if not o.method:  # aten-only ops (slice, index): neither a function nor a method
        return api.function_for(o.name)(*args, **kwargs)
    name = o.method if isinstance(o.method, str) else o.name
    return getattr(args[0], name)(*args[1:], **kwargs)


def _torch_fn(o):
    if o.namespace:
        mod = torch
        for part in o.namespace.split("."):
            mod = getattr(mod, part)
        return getattr(mod, o.function if isinstance(o.function, str) else o.name)
    if o.function:
        return getattr(torch, o.function if isinstance(o.function, str) else o.name)
    if not o.method:
        return getattr(torch.ops.aten, o.name)
    name = o.method if isinstance(o.method, str) else o.name
    return lambda self, *a, **k: getattr(self, name)(*a, **k)


def test_every_op_has_samples():
    missing = [_op_id(o) for o in OPS if o.samples is None]
    assert not missing, f"ops without sample inputs: {missing}"


def test_every_differentiable_op_has_a_derivative():
    missing = [
        _op_id(o) for o in OPS
        if o.differentiable and o.returns_tensor and o.diff_args and o.derivative is None
        and o.kind not in (FACTORY, RANDOM)
    ]
    assert not missing, f"differentiable ops without a derivative: {missing}"


def test_every_elementwise_op_has_a_formula():
    missing = [_op_id(o) for o in OPS if o.kind == registry.ELEMENTWISE and not o.formula]
    assert not missing, f"elementwise ops without a scalar formula: {missing}"


def test_elementwise_ops_promoting_every_tensor_take_the_pointwise_path():
    """Dispatch and the JIT tell "promotes every tensor argument" by the tuple's identity; an op or alias naming
    exactly its tensor arguments must hold that tuple, or it takes the slower casting path (``divide``)."""
    stray = [_op_id(o) for o in OPS if o.kind in (registry.ELEMENTWISE, registry.COMPARISON)
             and o.promote_args == o.tensor_args and o.promote_args is not o.tensor_args]
    assert not stray, f"elementwise ops with a copy of their tensor_args as promote_args: {stray}"


def test_every_op_has_a_docstring():
    missing = [_op_id(o) for o in OPS if not o.doc]
    assert not missing, f"ops without a docstring: {missing}"


@pytest.mark.parametrize("o,i", CASES)
def test_forward_matches_torch(o, i):
    args, kwargs = _sample(o, i)
    out = _call_tk(o, _tk(args), _tk(kwargs))
    expected = _torch_fn(o)(*_th(args), **_th(kwargs))
    if o.kind in NONDETERMINISTIC:
        # Values are the random ops' own tests' business (seeded against torch); here shapes and dtypes.
        outs = out if isinstance(out, (tuple, list)) else (out,)
        exps = expected if isinstance(expected, (tuple, list)) else (expected,)
        assert len(outs) == len(exps)
        for a, e in zip(outs, exps):
            assert tuple(a.shape) == tuple(e.shape) and TORCH_DTYPES[a.dtype] == e.dtype
        return
    if isinstance(expected, (bool, int, float)):
        assert out == expected
        return
    assert_close(out, expected)


def _flat(x) -> list:
    return [e for item in x for e in _flat(item)] if isinstance(x, (tuple, list)) else [x]


@pytest.mark.parametrize("o,i", CASES)
def test_meta_rule_matches_result(o, i):
    args, kwargs = _sample(o, i)
    targs, tkwargs = _tk(args), _tk(kwargs)
    out = _call_tk(o, targs, tkwargs)
    if not o.returns_tensor:
        return
    bound = bind(o, tuple(targs), dict(tkwargs))
    meta = o.infer(*bound)
    outs, metas = _flat(out), _flat(meta)  # a tensor and a list of tensors (histogramdd) count as their tensors
    assert len(outs) == len(metas)
    for t, m in zip(outs, metas):
        assert tuple(t.shape) == tuple(m.shape), f"meta shape {m.shape} != {tuple(t.shape)}"
        assert t.dtype is m.dtype, f"meta dtype {m.dtype} != {t.dtype}"


def _grad_case(o, i):
    args, kwargs = _sample(o, i)
    # Only the op's differentiable arguments require grad (class weights of a loss, say, do not).
    targs = tuple(_tk(a, float64_grad=k in o.diff_args) for k, a in enumerate(args))
    tkwargs = _tk(kwargs)
    flat = []

    def collect(x):
        if isinstance(x, toolkit.Tensor) and x.requires_grad:
            flat.append(x)
        elif isinstance(x, (list, tuple)):
            for e in x:
                collect(e)

    collect(targs)
    if not flat:
        pytest.skip("no differentiable inputs in this sample")

    def rebuild(x, it):
        if isinstance(x, toolkit.Tensor) and x.requires_grad:
            return next(it)
        if isinstance(x, list):
            return [rebuild(e, it) for e in x]
        if isinstance(x, tuple):
            return tuple(rebuild(e, it) for e in x)
        return x

    def fn(*ts):
        it = iter(ts)
        return _call_tk(o, rebuild(targs, it), tkwargs)

    return fn, flat


DIFF_CASES = [c for c in CASES if c.values[0].derivative is not None and c.values[0].differentiable]


@pytest.mark.parametrize("o,i", DIFF_CASES)
def test_gradcheck(o, i):
    fn, inputs = _grad_case(o, i)
    assert toolkit.autograd.gradcheck(fn, tuple(inputs))


@pytest.mark.parametrize("o,i", DIFF_CASES)
def test_gradgradcheck(o, i):
    fn, inputs = _grad_case(o, i)
    assert toolkit.autograd.gradgradcheck(fn, tuple(inputs))


INPLACE_CASES = [c for c in CASES if c.values[0].inplace_variant is not None]


@pytest.mark.parametrize("o,i", INPLACE_CASES)
def test_inplace_variant_matches_functional(o, i):
    args, kwargs = _sample(o, i)
    targs, tkwargs = _tk(args), _tk(kwargs)
    if not isinstance(targs[0], toolkit.Tensor):
        pytest.skip("self is not a tensor")
    expected = _call_tk(o, targs, tkwargs)
    if tuple(expected.shape) != tuple(targs[0].shape) or not toolkit.can_cast(expected.dtype, targs[0].dtype):
        with pytest.raises(RuntimeError):
            getattr(targs[0].clone(), o.name + "_")(*targs[1:], **tkwargs)
        return
    self_t = targs[0].clone()
    version = self_t._version
    out = getattr(self_t, o.name + "_")(*targs[1:], **tkwargs)
    assert out is self_t
    assert self_t._version > version
    assert_close(self_t, expected.to(self_t.dtype))
