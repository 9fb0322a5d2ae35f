"""Compiled graphs differentiate ops composed of other ops: generated from the registry.

A composite op runs as its parts, and the tensors its parts save for backward are not values of the
compiled graph; the executor must then leave the call to eager autograd instead of freezing them into a
backward plan. Each composite op with a differentiable sample is traced, called twice (the second call
runs the compiled plan), and its gradients compared with eager autograd's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import toolkit
from toolkit.ops import registry

from ...conftest import assert_close
from ...ops.test_registry import _grad_case

COMPOSITE_CASES = [
    pytest.param(o, i, id=f"{o.schema.full_name}-{i}")
    for o in registry.all_ops()
    if o.composite is not None and o.differentiable and o.samples is not None
    and o.kind != registry.RANDOM  # draws differ between calls: their own tests compare them by seed
    for i, _ in enumerate(o.samples(np.random.default_rng(0)))
]


@pytest.mark.parametrize("o,i", COMPOSITE_CASES)
def test_traced_composite_op_gives_eager_gradients(o, i):
    fn, inputs = _grad_case(o, i)

    def total(*ts):
        out = fn(*ts)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return sum((t.double().sum() for t in outs if isinstance(t, toolkit.Tensor) and t.is_floating_point()),
                   toolkit.zeros((), dtype=toolkit.float64))

    eager = total(*inputs)
    if eager.grad_fn is None:
        pytest.skip("the sample's outputs are empty or not differentiable")
    expected = toolkit.autograd.grad(eager, inputs, allow_unused=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = toolkit.jit.trace(total, tuple(inputs), check_trace=False)
        for _ in range(2):
            got = toolkit.autograd.grad(traced(*inputs), inputs, allow_unused=True)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if g is not None:
            assert_close(g, e)


def test_composite_cases_exist():
    assert len(COMPOSITE_CASES) > 20
