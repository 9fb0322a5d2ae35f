"""toolkit.functional: tensordot and cdist are Python over one registry op each, as torch.functional's are, so
traced and scripted graphs call ``aten::tensordot`` / ``aten::cdist`` and nothing PyTorch lacks."""

from __future__ import annotations

import pytest
import torch

import toolkit

from .conftest import assert_close


def both(a, b):
    return toolkit.tensordot(a, b, dims=1), toolkit.cdist(a, b.t(), compute_mode="donot_use_mm_for_euclid_dist")


def test_traced_and_scripted_graphs_call_pytorchs_ops():
    a, b = toolkit.randn(3, 4), toolkit.randn(4, 3)
    for compiled in (toolkit.jit.trace(both, (a, b)), toolkit.jit.script(both)):
        kinds = [n.kind for n in compiled.graph.nodes()]
        assert "aten::tensordot" in kinds and "aten::cdist" in kinds and "prim::PythonOp" not in kinds
        for got, expected in zip(compiled(a, b), both(a, b)):
            assert_close(got, expected)


@pytest.mark.parametrize("dims", [0, 1, ([1, 0], [0, 1]), [[1], [0]]])
def test_tensordot_forms_of_dims(dims):
    a, b = toolkit.randn(3, 4), toolkit.randn(4, 3)
    ta, tb = torch.from_numpy(a.numpy()), torch.from_numpy(b.numpy())
    expected = torch.tensordot(ta, tb, dims=dims)
    assert_close(toolkit.tensordot(a, b, dims=dims), expected)
    as_tensor = toolkit.tensor(dims)  # dims given as a tensor: its int or its two lists, as torch takes them
    assert_close(toolkit.tensordot(a, b, dims=as_tensor), torch.tensordot(ta, tb, dims=torch.tensor(dims)))


def test_cdist_compute_mode_names():
    x1, x2 = toolkit.randn(3, 2), toolkit.randn(4, 2)
    for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        assert_close(toolkit.cdist(x1, x2, compute_mode=mode),
                     torch.cdist(torch.from_numpy(x1.numpy()), torch.from_numpy(x2.numpy()), compute_mode=mode))
    with pytest.raises(ValueError, match="foo is not a valid value for compute_mode"):
        toolkit.cdist(x1, x2, compute_mode="foo")


def test_tensordot_writes_into_out():
    a, b = toolkit.randn(2, 3), toolkit.randn(3, 2)
    out = toolkit.empty(2, 2)
    assert toolkit.tensordot(a, b, dims=1, out=out) is out
    assert_close(out, toolkit.tensordot(a, b, dims=1))
    with pytest.raises(RuntimeError, match="dtype"):
        toolkit.tensordot(a, b, dims=1, out=toolkit.empty(2, 2, dtype=toolkit.float64))
