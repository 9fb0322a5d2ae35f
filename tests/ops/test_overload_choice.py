"""Tests generated from the op registry: the overload a call picks is the one PyTorch picks.

For every op name with several overloads, each registry sample (and the sample with its Python numbers
given as 0-dim tensors, which both a Scalar and a Tensor argument take) runs through ``call_overloads``.
PyTorch runs the same call under a dispatch mode that sees which aten overload it reached; where that is
observable (the registry has PyTorch's overload, and the toolkit's is not decomposed before dispatch), the
toolkit's choice must be the same, and the results must match PyTorch's in every case. Nothing here names
an op.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from toolkit.dispatch.calls import call_overloads, select_overload
from toolkit.ops import registry
from toolkit.ops.registry import RANDOM

from ..conftest import TORCH_DTYPES, assert_close
from .test_registry import _th, _tk, _torch_fn

MULTI = sorted(n for n in registry.names() if len(registry.overloads(n)) > 1)


class _Seen(TorchDispatchMode):
    """Records the first aten overload of one name that PyTorch dispatches to."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.overload = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.overload is None and func.__name__.split(".")[0] == self.name:
            self.overload = "" if func._overloadname == "default" else func._overloadname
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def torch_overload(name: str):
    """``with torch_overload("clamp") as seen:``: after the block, ``seen.overload`` is the overload of
    ``aten::clamp`` PyTorch reached ("" for the default one), or None if none was reached."""
    mode = _Seen(name)
    with mode:
        yield mode


def _dispatched_by_torch(name: str, overload: str) -> bool:
    """Whether PyTorch's aten has this overload and dispatches it as itself (not decomposed before any mode
    sees it, as CompositeImplicitAutograd ops are)."""
    qualified = f"aten::{name}" + (f".{overload}" if overload else "")
    try:
        return not torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CompositeImplicitAutograd")
    except RuntimeError:
        return False


def _sample_ops(name: str):
    """(overload whose samples to run, whether calls go to a copy of ``self`` in place) for ``name``."""
    for o in registry.overloads(name):
        if o.samples is not None:
            yield o, False
        elif o.inplace_of is not None and o.inplace_of.samples is not None:
            yield o.inplace_of, True


def _numbers_as_tensors(args: tuple) -> tuple | None:
    """The arguments after the first with each Python number a 0-dim array; None if there is none."""
    out = tuple(np.array(a) if isinstance(a, (int, float)) and not isinstance(a, bool) and i else a
                for i, a in enumerate(args))
    return out if any(o is not a for o, a in zip(out, args)) else None


def _cases():
    for name in MULTI:
        for o, inplace in _sample_ops(name):
            for i, (args, _) in enumerate(o.samples(np.random.default_rng(0))):
                yield pytest.param(name, o, inplace, i, False, id=f"{name}-{o.schema.full_name}-{i}")
                if _numbers_as_tensors(tuple(args)) is not None:
                    yield pytest.param(name, o, inplace, i, True, id=f"{name}-{o.schema.full_name}-{i}-tensors")


def _sample(o, i: int, as_tensors: bool):
    for k, (args, kwargs) in enumerate(o.samples(np.random.default_rng(0))):
        if k == i:
            args = tuple(args)
            return (_numbers_as_tensors(args) if as_tensors else args), kwargs
    raise IndexError(i)


def _run_torch(name: str, o, inplace: bool, args, kwargs):
    targs, tkwargs = _th(args), _th(kwargs)
    with torch_overload(name) as seen:
        if inplace:
            out = getattr(targs[0].clone(), name)(*targs[1:], **tkwargs)
        else:
            out = _torch_fn(o)(*targs, **tkwargs)
    return out, seen.overload


@pytest.mark.parametrize("name,o,inplace,i,as_tensors", list(_cases()))
def test_overload_choice_matches_torch(name, o, inplace, i, as_tensors):
    args, kwargs = _sample(o, i, as_tensors)
    ops = registry.overloads(name)
    targs, tkwargs = _tk(args), _tk(kwargs)
    if inplace:
        targs = (targs[0].clone(), *targs[1:])
    try:
        expected, torch_choice = _run_torch(name, o, inplace, args, kwargs)
    except (TypeError, RuntimeError):
        if as_tensors:
            return  # PyTorch takes no tensor here: nothing to compare
        if not inplace:
            raise
        with pytest.raises((TypeError, RuntimeError)):  # a result self's dtype cannot hold, as in PyTorch
            call_overloads(ops, targs, tkwargs)
        return
    chosen, _ = select_overload(ops, targs, tkwargs)
    # Comparable where PyTorch reached an overload the registry has, and would have seen ours had it chosen it.
    if torch_choice in {d.overload for d in ops} and _dispatched_by_torch(name, chosen.overload):
        assert chosen.overload == torch_choice
    out = call_overloads(ops, targs, tkwargs)
    if inplace:
        assert out is targs[0]
    if o.kind == RANDOM:
        outs = out if isinstance(out, (tuple, list)) else (out,)
        exps = expected if isinstance(expected, (tuple, list)) else (expected,)
        assert [(tuple(a.shape), TORCH_DTYPES[a.dtype]) for a in outs] == [(tuple(e.shape), e.dtype) for e in exps]
        return
    assert_close(out, expected)
