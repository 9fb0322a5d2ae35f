"""Shape, view and copy functions against PyTorch: the calling forms, storage sharing, in-place views, errors.

The registry's generated tests compare each op's values, meta rule and gradients; these check what they
cannot: which results share storage, the in-place view methods, the forms that take several tensors, and the
exceptions for bad arguments.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close


def _pair(shape=(3, 4), seed=0, dtype=np.float64):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return toolkit.tensor(a), torch.from_numpy(a.copy())


def _shares(a, b) -> bool:
    return np.shares_memory(a._data, b._data)


def _grad_pair(shape=(3, 4), seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return toolkit.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


# ---------------------------------------------------------------------------------------------
# atleast_nd, broadcast_to, ravel, reshape_as, type_as, detach
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2, 3])
def test_atleast_forms(k):
    name = f"atleast_{k}d"
    tk_fn, th_fn = getattr(toolkit, name), getattr(torch, name)
    shapes = [(), (3,), (2, 3), (2, 1, 3)]
    pairs = [_pair(s, i) for i, s in enumerate(shapes)]
    for x, y in pairs:
        out = tk_fn(x)
        assert isinstance(out, toolkit.Tensor)
        assert_close(out, th_fn(y))
        assert _shares(out, x)
    several = tk_fn(*[p[0] for p in pairs])
    assert isinstance(several, tuple) and len(several) == len(pairs)
    for a, b in zip(several, th_fn(*[p[1] for p in pairs])):
        assert_close(a, b)
    seq = tk_fn([pairs[1][0]])
    assert isinstance(seq, tuple) and len(seq) == 1
    assert_close(seq[0], th_fn([pairs[1][1]])[0])


def test_broadcast_to_is_a_view_and_a_method():
    x, y = _pair((3, 1))
    out = x.broadcast_to((2, 3, 4))
    assert_close(out, y.broadcast_to((2, 3, 4)))
    assert out._base is x and out.stride() == y.broadcast_to((2, 3, 4)).stride()
    assert_close(toolkit.broadcast_to(x, (3, -1)), torch.broadcast_to(y, (3, -1)))
    with pytest.raises(RuntimeError, match="must match the existing size"):
        toolkit.broadcast_to(x, (2, 2))
    with pytest.raises(RuntimeError, match="must match the existing size"):
        torch.broadcast_to(y, (2, 2))


def test_ravel_views_only_when_contiguous():
    x, y = _pair((3, 4))
    assert _shares(x.ravel(), x)
    assert not _shares(x.t().ravel(), x)
    assert_close(toolkit.ravel(x.t()), torch.ravel(y.t()))


def test_reshape_as_and_type_as():
    x, y = _pair((3, 4))
    other = toolkit.zeros(2, 6, dtype=toolkit.float32)
    assert_close(x.reshape_as(other), y.reshape_as(torch.zeros(2, 6)))
    assert _shares(x.reshape_as(other), x)
    assert x.type_as(other).dtype is toolkit.float32
    assert x.type_as(x) is x
    g, h = _grad_pair((2, 3))
    g.type_as(other).sum().backward()
    h.type_as(torch.zeros(1, dtype=torch.float32)).sum().backward()
    assert_close(g.grad, h.grad)


def test_detach_function_shares_storage_without_history():
    g, _ = _grad_pair((2, 3))
    d = toolkit.detach(g * 2)
    assert not d.requires_grad and d.grad_fn is None
    e = toolkit.detach(g)
    assert _shares(e, g) and e._version == g._version


# ---------------------------------------------------------------------------------------------
# splits
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", [3, [2, 5], (-2, 9, 3), 1])
def test_tensor_split_views_and_grads(spec):
    g, h = _grad_pair((7, 2))
    parts = toolkit.tensor_split(g, spec)
    expected = torch.tensor_split(h, spec)
    assert len(parts) == len(expected)
    for p, e in zip(parts, expected):
        assert_close(p, e)
        assert p._base is g
    sum(((i + 1) * p.sum() for i, p in enumerate(parts)), toolkit.tensor(0.0)).backward()
    sum(((i + 1) * p.sum() for i, p in enumerate(expected)), torch.tensor(0.0)).backward()
    assert_close(g.grad, h.grad)


def test_tensor_split_parts_may_change_in_place():
    g, h = _grad_pair((6, 2))
    x, y = g * 1, h * 1
    x.tensor_split(2)[1].mul_(3)
    y.tensor_split(2)[1].mul_(3)
    assert_close(x, y)
    (x * x).sum().backward()
    (y * y).sum().backward()
    assert_close(g.grad, h.grad)


def test_tensor_split_with_a_tensor_and_methods():
    x, y = _pair((7, 4))
    for spec in (np.array(3), np.array([1, 4])):
        for a, b in zip(x.tensor_split(toolkit.tensor(spec), 1), y.tensor_split(torch.tensor(spec), 1)):
            assert_close(a, b)
    with pytest.raises(RuntimeError, match="dtype of long"):
        x.tensor_split(toolkit.tensor([1.0]))
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0"):
        x.tensor_split(0)
    with pytest.raises(RuntimeError, match="at least a 1-dimensional tensor"):
        toolkit.tensor(1.0).tensor_split(2)


@pytest.mark.parametrize("name,shape", [("hsplit", (4, 6)), ("hsplit", (6,)), ("vsplit", (4, 6)), ("dsplit", (2, 3, 4))])
def test_directional_splits(name, shape):
    x, y = _pair(shape)
    for spec in (2, [1, 3]):
        got, want = getattr(toolkit, name)(x, spec), getattr(torch, name)(y, spec)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert_close(a, b)
            assert _shares(a, x) or a.numel() == 0
        for a, b in zip(getattr(x, name)(spec), want):
            assert_close(a, b)


def test_directional_split_errors():
    x, y = _pair((7,))
    for t, mod in ((x, toolkit), (y, torch)):
        with pytest.raises(RuntimeError, match="not divisible by the split_size 2"):
            mod.hsplit(t, 2)
        with pytest.raises(RuntimeError, match="requires a tensor with at least 2 dimension"):
            mod.vsplit(t, 1)
        with pytest.raises(RuntimeError, match="requires a tensor with at least 3 dimension"):
            mod.dsplit(t.reshape(7, 1), 1)


def test_unsafe_splits_share_memory_without_view_tracking():
    x, y = _pair((7, 2))
    for name, arg in (("unsafe_split", 3), ("unsafe_chunk", 3), ("unsafe_split_with_sizes", [3, 4])):
        got, want = getattr(toolkit, name)(x, arg), getattr(torch, name)(y, arg)
        for a, b in zip(got, want):
            assert_close(a, b)
            assert _shares(a, x) and a._base is None
        assert [p.shape for p in getattr(x, name)(arg)] == [p.shape for p in want]


# ---------------------------------------------------------------------------------------------
# meshgrid, cartesian_prod, combinations, unravel_index
# ---------------------------------------------------------------------------------------------
def test_meshgrid_indexing_and_warning():
    a, b = toolkit.arange(3.0), toolkit.arange(2.0)
    ta, tb = torch.arange(3.0), torch.arange(2.0)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        got = toolkit.meshgrid(a, b)
    for x, y in zip(got, torch.meshgrid(ta, tb, indexing="ij")):
        assert_close(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for indexing in ("ij", "xy"):
            got = toolkit.meshgrid([a, b], indexing=indexing)
            for x, y in zip(got, torch.meshgrid([ta, tb], indexing=indexing)):
                assert_close(x, y)
                assert _shares(x, a) or _shares(x, b)
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij"'):
        toolkit.meshgrid(a, b, indexing="foo")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
        toolkit.meshgrid(a.reshape(3, 1), b, indexing="ij")
    with pytest.raises(RuntimeError, match="same dtype"):
        toolkit.meshgrid(a, toolkit.arange(2), indexing="ij")


def test_meshgrid_grad():
    g1, h1 = _grad_pair((3,), 1)
    g2, h2 = _grad_pair((2,), 2)
    w = np.random.default_rng(3).standard_normal((2, 3))
    x, y = toolkit.meshgrid(g1, g2, indexing="xy")
    (x * toolkit.tensor(w) + y * y).sum().backward()
    p, q = torch.meshgrid(h1, h2, indexing="xy")
    (p * torch.tensor(w) + q * q).sum().backward()
    assert_close(g1.grad, h1.grad)
    assert_close(g2.grad, h2.grad)


def test_cartesian_prod_and_combinations():
    a, b = toolkit.tensor([1, 2, 3]), toolkit.tensor([4, 5])
    assert_close(toolkit.cartesian_prod(a, b), torch.cartesian_prod(torch.tensor([1, 2, 3]), torch.tensor([4, 5])))
    assert toolkit.cartesian_prod(a) is a
    with pytest.raises(RuntimeError, match="Expect a 1D vector"):
        toolkit.cartesian_prod(a.reshape(3, 1), b)
    x, y = _pair((4,))
    for r, rep in ((2, False), (3, True), (5, False), (0, False)):
        assert_close(toolkit.combinations(x, r, rep), torch.combinations(y, r, rep))
    with pytest.raises(RuntimeError, match="Expect a non-negative number, but got -1"):
        toolkit.combinations(x, -1)
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 2\]"):
        toolkit.combinations(x.reshape(2, 2))


def test_unravel_index():
    for idx, shape in (([5, 7, -1], (3, 4)), (5, 6), ([[1, 23]], (2, 3, 4))):
        got = toolkit.unravel_index(toolkit.tensor(idx), shape)
        want = torch.unravel_index(torch.tensor(idx), shape)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert_close(a, b)
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype"):
        toolkit.unravel_index(toolkit.tensor([1.0]), (3, 4))
    with pytest.raises(ValueError, match="'shape' cannot have negative values"):
        toolkit.unravel_index(toolkit.tensor([1]), (3, -4))


# ---------------------------------------------------------------------------------------------
# joins and reorders
# ---------------------------------------------------------------------------------------------
def test_block_diag_column_stack_row_stack():
    parts = [np.ones((2, 2)), np.arange(3), np.array(5.0)]
    got = toolkit.block_diag(*[toolkit.tensor(p) for p in parts])
    want = torch.block_diag(*[torch.tensor(p) for p in parts])
    assert_close(got, want)
    with pytest.raises(RuntimeError, match="Input 0 has 3 dimensions"):
        toolkit.block_diag(toolkit.ones(2, 2, 2))
    cols = [np.array(1.0), np.ones(1), np.ones((1, 2))]
    assert_close(toolkit.column_stack([toolkit.tensor(c) for c in cols]),
                 torch.column_stack([torch.tensor(c) for c in cols]))
    with pytest.raises(RuntimeError, match="column_stack expects a non-empty TensorList"):
        toolkit.column_stack([])
    rows = [np.ones(3), np.zeros((2, 3))]
    assert_close(toolkit.row_stack([toolkit.tensor(r) for r in rows]), torch.row_stack([torch.tensor(r) for r in rows]))


def test_rot90_and_diagflat_errors():
    x, y = _pair((2, 3))
    assert_close(x.rot90(1, [0, -1]), y.rot90(1, [0, -1]))
    assert_close(x.diagflat(1), y.diagflat(1))
    with pytest.raises(RuntimeError, match="expected total rotation dims == 2, but got dims = 1"):
        x.rot90(1, [0])
    with pytest.raises(RuntimeError, match="expected rotation dims to be different"):
        x.rot90(1, [0, 0])
    with pytest.raises(RuntimeError, match="expected total dims >= 2"):
        toolkit.arange(3.0).rot90()
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.rot90(1, [0, 2])


# ---------------------------------------------------------------------------------------------
# *_copy
# ---------------------------------------------------------------------------------------------
COPIES = [
    ("alias_copy", ()), ("detach_copy", ()), ("diagonal_copy", (1,)), ("expand_copy", ((2, 3, 4),)),
    ("narrow_copy", (1, 1, 2)), ("permute_copy", ((1, 0),)), ("select_copy", (0, 1)), ("slice_copy", (1, 0, 3, 2)),
    ("split_copy", (2,)), ("split_with_sizes_copy", ([1, 2],)), ("squeeze_copy", ()), ("squeeze_copy", (0,)),
    ("t_copy", ()), ("transpose_copy", (0, 1)), ("unbind_copy", (1,)), ("unfold_copy", (1, 2, 1)),
    ("unsqueeze_copy", (0,)), ("view_copy", ((4, 3),)), ("as_strided_copy", ((2, 2), (1, 4), 1)),
]


@pytest.mark.parametrize("name,args", COPIES)
def test_copies_hold_fresh_memory(name, args):
    x, y = _pair((3, 4))
    got, want = getattr(toolkit, name)(x, *args), getattr(torch, name)(y, *args)
    for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert_close(a, b)
        assert not _shares(a, x) and a._base is None


def test_narrow_copy_method_and_view_copy_dtype():
    x, y = _pair((3, 4))
    assert_close(x.narrow_copy(0, 1, 2), y.narrow_copy(0, 1, 2))
    assert_close(toolkit.view_copy(x, toolkit.int64), torch.view_copy(y, torch.int64))


# ---------------------------------------------------------------------------------------------
# in-place view methods
# ---------------------------------------------------------------------------------------------
INPLACE_VIEWS = [
    ("squeeze_", ()), ("squeeze_", (1,)), ("squeeze_", ((1, 3),)), ("unsqueeze_", (0,)), ("transpose_", (0, 2)),
    ("swapaxes_", (1, -1)), ("swapdims_", (0, 1)),
]


@pytest.mark.parametrize("name,args", INPLACE_VIEWS)
def test_inplace_views_change_geometry_and_record(name, args):
    g, h = _grad_pair((2, 1, 3, 1))
    x, y = g * 1, h * 1
    version = x._version
    out = getattr(x, name)(*args)
    assert out is x and x._version > version
    getattr(y, name)(*args)
    assert tuple(x.shape) == tuple(y.shape) and x.stride() == y.stride()
    w = np.random.default_rng(1).standard_normal(tuple(y.shape))
    (x * toolkit.tensor(w)).sum().backward()
    (y * torch.tensor(w)).sum().backward()
    assert_close(g.grad, h.grad)


def test_t_inplace_on_a_view_reaches_its_base():
    g, h = _grad_pair((2, 3))
    y, z = g * 1, h * 1
    y = y.unsqueeze_(0)
    z.unsqueeze_(0)
    v, w = y[0], z[0]
    v.t_()
    w.t_()
    assert v._base is y and v.stride() == w.stride()
    v.mul_(toolkit.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    w.mul_(torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float64))
    assert_close(y, z)
    y.sum().backward()
    z.sum().backward()
    assert_close(g.grad, h.grad)


def test_inplace_view_refusals():
    g, _ = _grad_pair((2, 3))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        g.t_()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        g[0].unsqueeze_(0)
    with toolkit.no_grad():
        g.t_()
    assert tuple(g.shape) == (3, 2) and g.is_leaf
    x = toolkit.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions"):
        x.t_()
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unsqueeze_(5)


# ---------------------------------------------------------------------------------------------
# as_strided and its relatives
# ---------------------------------------------------------------------------------------------
def test_as_strided_method_view_and_grad():
    g, h = _grad_pair((6,))
    out = g.as_strided((3, 2), (1, 1))
    want = h.as_strided((3, 2), (1, 1))
    assert_close(out, want)
    assert out._base is g
    (out * out).sum().backward()
    (want * want).sum().backward()
    assert_close(g.grad, h.grad)
    x, y = _pair((3, 4))
    assert_close(x[1:].as_strided((2, 2), (1, 4)), y[1:].as_strided((2, 2), (1, 4)))
    assert_close(x.as_strided((2,), (1,), 10), y.as_strided((2,), (1,), 10))


def test_as_strided_errors():
    x, y = _pair((6,))
    for bad, msg in ((((2, 2), (1,)), "mismatch in length of strides and shape"),
                     (((2, 2), (-1, 1)), "Negative strides are not supported"),
                     (((2, 2), (1, 1), -1), "invalid storage offset -1"),
                     (((3, 3), (2, 1)), "requiring a storage size of 56 are out of bounds for storage of size 48")):
        for t in (x, y):
            with pytest.raises(RuntimeError, match=msg):
                t.as_strided(*bad)


def test_as_strided_inplace():
    x, y = _pair((3, 4))
    version = x._version
    assert x.as_strided_((2, 2), (1, 2)) is x
    y.as_strided_((2, 2), (1, 2))
    assert x._version > version and x.stride() == y.stride()
    assert_close(x, y)
    z = toolkit.arange(6.0)
    toolkit.as_strided_(z, (2, 3), (3, 1))
    assert tuple(z.shape) == (2, 3)


def test_scatters_grads_for_both_inputs():
    g, h = _grad_pair((3, 4))
    s, t = _grad_pair((2, 2), 5)
    out = toolkit.as_strided_scatter(g, s, (2, 2), (1, 4), 1)
    assert_close(out, torch.as_strided_scatter(h, t, (2, 2), (1, 4), 1))
    # PyTorch's own derivative of as_strided_scatter gives self the window's gradient (not the rest's), which
    # fails its gradcheck; the gradients here are checked against the composition it stands for.
    want = h.clone()
    want.as_strided((2, 2), (1, 4), 1).copy_(t)
    assert_close(out, want)
    w = np.random.default_rng(2).standard_normal((3, 4))
    (out * toolkit.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    assert_close(g.grad, h.grad)
    assert_close(s.grad, t.grad)
    d, e = _grad_pair((3,), 6)
    g.grad = None
    h.grad = None
    (toolkit.diagonal_scatter(g, d) * toolkit.tensor(w)).sum().backward()
    (torch.diagonal_scatter(h, e) * torch.tensor(w)).sum().backward()
    assert_close(g.grad, h.grad)
    assert_close(d.grad, e.grad)
    with pytest.raises(RuntimeError, match="expected src to have a size equal to the slice of self"):
        toolkit.diagonal_scatter(g, toolkit.ones(2))


def test_slice_inverse_views_self():
    base = toolkit.randn(5, 4)
    part = base[1:4]
    out = toolkit.slice_inverse(part, base, 0, 1, 4)
    assert_close(out, base)
    assert _shares(out, part)
