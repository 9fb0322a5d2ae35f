"""The single call path: memory-overlap checks of in-place ops, made once in dispatch for every in-place op.

PyTorch refuses to write into a tensor several of whose elements share one memory location (an expanded
tensor), and to write from an input that partially overlaps the written tensor (the result would depend
on the order of the loop); a few ops are exempt (``fill_``, ``zero_``, ``masked_fill_``, ``index_put_``,
``index_fill_`` write into expanded tensors), and index-scatter ops refuse even a source that is the
destination itself. Every case below runs in PyTorch too: same outcome, same error type and message.
"""

from __future__ import annotations

import re

import pytest
import torch

import toolkit

from .conftest import assert_close

INTERNAL = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.")
PARTIAL = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
           "memory location. Please clone() the tensor before performing the operation.")


def _same_outcome(fn):
    """``fn(module)`` returns the tensor written to; toolkit must end with PyTorch's values or PyTorch's error."""
    try:
        want = fn(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=re.escape(str(e))):
            fn(toolkit)
        return
    assert_close(fn(toolkit), want)


def _expanded(m):
    return m.ones(3).expand(3, 3)


EXPANDED = {
    "add_ number": lambda y, m: y.add_(1),
    "add_ tensor": lambda y, m: y.add_(m.ones(3)),
    "mul_": lambda y, m: y.mul_(2),
    "div_": lambda y, m: y.div_(2),
    "exp_": lambda y, m: y.exp_(),
    "neg_": lambda y, m: y.neg_(),
    "clamp_": lambda y, m: y.clamp_(0, 1),
    "sigmoid_": lambda y, m: y.sigmoid_(),
    "pow_": lambda y, m: y.pow_(2),
    "lerp_": lambda y, m: y.lerp_(m.zeros(3, 3), 0.5),
    "addcmul_": lambda y, m: y.addcmul_(m.ones(3), m.ones(3)),
    "copy_": lambda y, m: y.copy_(m.zeros(3, 3)),
    "copy_ broadcast": lambda y, m: y.copy_(m.zeros(3)),
    "uniform_": lambda y, m: y.uniform_(),
    "normal_": lambda y, m: y.normal_(),
    "bernoulli_": lambda y, m: y.bernoulli_(0.5),
    "scatter_": lambda y, m: y.scatter_(0, m.tensor([[0, 1, 2]]), 2.0),
    "index_add_": lambda y, m: y.index_add_(0, m.tensor([0]), m.ones(1, 3)),
    "masked_scatter_": lambda y, m: y.masked_scatter_(m.ones(3, 3, dtype=m.bool), m.zeros(9)),
    "setitem column": lambda y, m: y.__setitem__((slice(None), 0), 5.0) or y,
    "setitem all": lambda y, m: y.__setitem__(slice(None), m.zeros(3, 3)) or y,
    # PyTorch lets these write into an expanded tensor
    "fill_": lambda y, m: y.fill_(2),
    "zero_": lambda y, m: y.zero_(),
    "masked_fill_": lambda y, m: y.masked_fill_(m.tensor([[True, False, False]] * 3), 2.0),
    "index_put_": lambda y, m: y.index_put_((m.tensor([0]),), m.tensor(2.0)),
    "index_fill_": lambda y, m: y.index_fill_(1, m.tensor([1]), 2.0),
    "setitem row": lambda y, m: y.__setitem__(0, 5.0) or y,
    "setitem mask": lambda y, m: y.__setitem__(m.ones(3, 3, dtype=m.bool), 5.0) or y,
    "size-1 expand add_": lambda y, m: m.ones(1, 3).expand(1, 3).add_(1),
}


@pytest.mark.parametrize("name", list(EXPANDED))
def test_writes_into_an_expanded_tensor_like_torch(name):
    """Refused with PyTorch's message where PyTorch refuses; where it writes, the base sees the writes."""
    def run(m):
        base = m.ones(3)
        out = EXPANDED[name](base.expand(3, 3), m)
        return m.cat([out.reshape(-1), base])

    _same_outcome(run)


def _partial(f, n=6):
    def run(m):
        x = m.arange(float(n))
        f(x, m)
        return x

    return run


def _square(f):
    def run(m):
        x = m.arange(9.0).view(3, 3)
        f(x, m)
        return x

    return run


PARTIAL_CASES = {
    "copy_ shifted": _partial(lambda x, m: x[1:].copy_(x[:-1])),
    "iadd shifted": _partial(lambda x, m: x[1:].__iadd__(x[:-1])),
    "add_ shifted back": _partial(lambda x, m: x[:-1].add_(x[1:])),
    "add_ own element": _partial(lambda x, m: x.add_(x[2])),
    "mul_ element outside": _partial(lambda x, m: x[1:].mul_(x[0])),
    "add_ disjoint halves": _partial(lambda x, m: x[:3].add_(x[3:])),
    "add_ itself": _partial(lambda x, m: x.add_(x)),
    "add_ a full view": _partial(lambda x, m: x.add_(x.view(2, 3).view(6))),
    "add_ detached": _partial(lambda x, m: x.add_(x.detach())),
    "add_ interleaved": _partial(lambda x, m: x[::2].add_(x[1::2])),
    "empty": _partial(lambda x, m: x[1:1].add_(x[:0])),
    "copy_ cast partial": _partial(lambda x, m: x[1:].copy_(x[:-1].long())),
    "row into matrix": _square(lambda x, m: x.add_(x[0])),
    "transpose": _square(lambda x, m: x.copy_(x.t())),
    "rows shifted": _square(lambda x, m: x[1:].add_(x[:-1])),
    "row from column": _square(lambda x, m: x[0].add_(x[:, 0])),
    "addcmul_ shifted": _partial(lambda x, m: x[1:].addcmul_(x[:-1], m.ones(5))),
    "lerp_ weight shifted": _partial(lambda x, m: x[1:].lerp_(m.ones(5), x[:-1])),
    "clamp_ min shifted": _partial(lambda x, m: x[1:].clamp_(min=x[:-1])),
    "div_ shifted": _partial(lambda x, m: x[1:].div_(x[:-1])),
    "masked_fill_ value inside": _partial(lambda x, m: x[1:].masked_fill_(m.ones(5, dtype=m.bool), x[1])),
    "fill_ value inside": _partial(lambda x, m: x.fill_(x[1])),
    "index_put_ shifted": _partial(lambda x, m: x[1:].index_put_((m.tensor([0, 1]),), x[:2])),
    "index_put_ itself": _partial(lambda x, m: x.index_put_((m.arange(6),), x)),
    "setitem advanced itself": _partial(lambda x, m: x.__setitem__(m.arange(6), x)),
    "index_add_ itself": _partial(lambda x, m: x.index_add_(0, m.arange(6), x)),
    "index_copy_ itself": _partial(lambda x, m: x.index_copy_(0, m.arange(6), x)),
    "scatter_ itself": _partial(lambda x, m: x.scatter_(0, m.arange(6), x)),
    "scatter_add_ itself": _partial(lambda x, m: x.scatter_add_(0, m.arange(6), x)),
    "scatter_ shifted": _partial(lambda x, m: x[1:].scatter_(0, m.tensor([0, 1]), x[:2])),
    "masked_scatter_ itself": _partial(lambda x, m: x.masked_scatter_(m.ones(6, dtype=m.bool), x)),
    "copy_ itself": _partial(lambda x, m: x.copy_(x)),
}


@pytest.mark.parametrize("name", list(PARTIAL_CASES))
def test_inputs_overlapping_the_written_tensor_like_torch(name):
    _same_outcome(PARTIAL_CASES[name])


def test_setitem_with_an_overlapping_in_place_add():
    """``x[1:] += x[:-1]`` is ``x[1:].add_(x[:-1])``: refused before anything is written."""
    x = toolkit.arange(6.0)
    with pytest.raises(RuntimeError, match=re.escape("add_: " + PARTIAL)):
        x[1:] += x[:-1]
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match=re.escape("add_: " + INTERNAL)):
        toolkit.ones(3).expand(3, 3).add_(1)
    x = toolkit.arange(5.0)
    with pytest.raises(RuntimeError, match=re.escape("copy_: " + PARTIAL)):
        x[1:].copy_(x[:-1])


def test_overlap_checked_before_autograd_records():
    x = toolkit.ones(4, requires_grad=True)
    y = x * 1
    with pytest.raises(RuntimeError, match=re.escape(PARTIAL)):
        y[1:].add_(y[:-1])
    assert y.grad_fn.name() == "MulBackward0"
