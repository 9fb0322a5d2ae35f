"""Size and shape helpers."""

from __future__ import annotations

import pytest

import toolkit
from toolkit._core.shape import broadcast_shapes, infer_size, wrap_dim


def test_size_behaves_like_torch_size():
    s = toolkit.zeros(2, 3).size()
    assert s == (2, 3) and isinstance(s, tuple)
    assert repr(s) == "toolkit.Size([2, 3])"
    assert s.numel() == 6
    assert isinstance(s[1:], toolkit.Size)


def test_broadcast_error_names_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"mul: shapes \(3, 4\) and \(5,\) cannot be broadcast"):
        broadcast_shapes((3, 4), (5,), op="mul")
    with pytest.raises(RuntimeError, match=r"mul: shapes \(3, 4\) and \(5,\) cannot be broadcast"):
        toolkit.ones(3, 4) * toolkit.ones(5)


def test_wrap_dim_and_infer_size():
    assert wrap_dim(-1, 3) == 2
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"):
        wrap_dim(3, 3)
    assert infer_size((-1, 4), 12) == (3, 4)
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 12"):
        infer_size((5, -1), 12)
