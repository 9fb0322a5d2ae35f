"""Every registry op with generated samples, given a fully named first tensor: it either runs as it does
unnamed (same shapes and values, each output with one name or None per dim) or raises RuntimeError, never
another error. Ops with no name rule must raise, unless they are compositions whose parts name the result."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import toolkit
from toolkit.ops import registry as R

from .samples import float_first_samples, named, tensors


def _cases():
    for op in R.all_ops():
        if op.samples is None:
            continue
        yield pytest.param(op, id=str(op.schema.name) + ("." + op.overload if op.overload else ""))


@pytest.mark.parametrize("op", list(_cases()))
def test_named_first_input_runs_as_unnamed_or_refuses(op):
    checked = 0
    for args, kw in float_first_samples(op):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rest = [tensors(a) for a in args[1:]]
            try:
                toolkit.manual_seed(0)
                plain = op(tensors(args[0]), *rest, **kw)
            except Exception:  # the sample is an error case of the op itself
                continue
            try:
                toolkit.manual_seed(0)
                out = op(named(args[0]), *[tensors(a) for a in args[1:]], **kw)
            except RuntimeError:
                checked += 1
                continue
        assert op.name_rule is not None or op.composite is not None, f"{op.name} has no name rule but ran"
        outs = out if isinstance(out, (tuple, list)) else (out,)
        plains = plain if isinstance(plain, (tuple, list)) else (plain,)
        for o, p in zip(outs, plains):
            if isinstance(o, toolkit.Tensor):
                assert tuple(o.shape) == tuple(p.shape)
                assert len(o.names) == o.ndim
                if o.dtype.is_floating_point and op.kind is not R.RANDOM:
                    np.testing.assert_allclose(o.rename(None).numpy(), p.numpy(), equal_nan=True)
        checked += 1
    if not checked:
        pytest.skip("no sample with a floating first tensor")
