"""Shared helpers for the toolkit.nn.utils tests: module twins with the same weights, and comparisons."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close


def twins(make_torch, make_toolkit):
    """A torch module and a toolkit module with the same parameters and buffers (copied from torch's)."""
    tm, km = make_torch(), make_toolkit()
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, km


def same_state(km, tm, accum: int = 1) -> None:
    """Same state-dict keys, in the same order, with the same shapes and values."""
    ks, ts = km.state_dict(), tm.state_dict()
    assert list(ks) == list(ts)
    for k in ts:
        assert tuple(ks[k].shape) == tuple(ts[k].shape), k
        assert_close(ks[k], ts[k], accum=accum, msg=k)


def same_grads(km, tm, accum: int = 1) -> None:
    kp, tp = dict(km.named_parameters()), dict(tm.named_parameters())
    assert list(kp) == list(tp)
    for name, p in tp.items():
        assert (kp[name].grad is None) == (p.grad is None), name
        if p.grad is not None:
            assert_close(kp[name].grad, p.grad, accum=accum, msg=name)


def inputs(rng, shape):
    a = rng.standard_normal(shape).astype(np.float32)
    return torch.tensor(a), toolkit.tensor(a)


def raises_like(fn_k, fn_t) -> None:
    """toolkit raises the exception type and message torch raises (first line; torch.Size and other
    names of torch print as toolkit.Size...)."""
    with pytest.raises(Exception) as expected:
        fn_t()
    message = str(expected.value).split("\n")[0].replace("torch.", "toolkit.")
    with pytest.raises(type(expected.value), match=re.escape(message)):
        fn_k()
