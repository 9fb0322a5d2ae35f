"""Memory-overlap rules (``toolkit._core.overlap``) on numpy arrays, as PyTorch's ``MemOverlap`` judges them."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit._core.overlap import (
    FULL,
    NO,
    PARTIAL,
    TOO_HARD,
    has_internal_overlap,
    is_non_overlapping_and_dense,
    overlap_status,
    writable_alias,
)


def test_internal_overlap_is_a_zero_stride_over_more_than_one_element():
    a = np.arange(3.0)
    assert has_internal_overlap(np.broadcast_to(a, (3, 3)))
    assert not has_internal_overlap(np.broadcast_to(a[:1], (1, 3))[:, :1])
    assert not has_internal_overlap(np.broadcast_to(a, (1, 3)))
    assert not has_internal_overlap(a.reshape(3, 1)[:, [0, 0]][:0])  # no elements, whatever the strides
    assert not has_internal_overlap(np.lib.stride_tricks.sliding_window_view(a, 2))  # overlapping, but "too hard"


@pytest.mark.parametrize("make,dense", [
    (lambda a: a, True), (lambda a: a.T, True), (lambda a: a[:, :2], False), (lambda a: a[::2], False),
    (lambda a: a[:1], True), (lambda a: np.broadcast_to(a[0], (3, 4)), False), (lambda a: a[0, 0], True),
])
def test_non_overlapping_and_dense(make, dense):
    assert is_non_overlapping_and_dense(make(np.zeros((3, 4)))) is dense


@pytest.mark.parametrize("out,inp,status", [
    (lambda x: x[1:], lambda x: x[:-1], PARTIAL),
    (lambda x: x[:3], lambda x: x[3:], NO),
    (lambda x: x, lambda x: x.reshape(2, 3).reshape(6), FULL),
    (lambda x: x.reshape(2, 3), lambda x: x.reshape(2, 3).T, PARTIAL),  # same bytes, other strides
    (lambda x: x, lambda x: x[2:3].reshape(()), PARTIAL),  # a 0-dim view inside
    (lambda x: x[1:], lambda x: x[:1].reshape(()), NO),
    (lambda x: x[::2], lambda x: x[1::2], TOO_HARD),
    (lambda x: x[1:1], lambda x: x, NO),
])
def test_overlap_status(out, inp, status):
    x = np.arange(6.0)
    assert overlap_status(out(x), inp(x)) == status


def test_writable_alias_writes_through_an_expanded_view():
    base = np.zeros(3)
    expanded = np.broadcast_to(base, (2, 3))
    alias = writable_alias(expanded, base)
    alias[1] = 5.0
    assert base.tolist() == [5.0, 5.0, 5.0]
    ro = np.zeros(3)
    ro.flags.writeable = False
    assert writable_alias(np.broadcast_to(ro, (2, 3)), ro) is None
