"""Indexing ops beyond the registry's generated tests: aten-only forms, in-place variants, dtypes, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import toolkit
from toolkit._core.meta import TensorMeta
from toolkit.ops import api, registry

from ..conftest import assert_close

aten = torch.ops.aten


def _pair(a: np.ndarray):
    return toolkit.tensor(a), torch.from_numpy(a.copy())


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_index_with_none_entries_and_dtypes_matches_aten():
    x, t = _pair(_rand(3, 4, 5))
    cases = [
        [None, np.array([3, 0, 3])],
        [np.array([1, 2]), None, np.array([4, 0])],
        [None, None, np.array([[1], [2]], dtype=np.int32)],
        [np.array([True, False, True]), np.array([0, 3])],
        [np.array([1, 0, 1], dtype=np.uint8)],
    ]
    for idx in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch deprecates uint8 masks
            expected = aten.index(t, [None if i is None else torch.from_numpy(i) for i in idx])
        out = api.index(x, [None if i is None else toolkit.tensor(i) for i in idx])
        assert_close(out, expected)
        assert not np.shares_memory(out.numpy(), x.numpy())
    whole = api.index(x, [None])  # PyTorch's CPU kernel asserts here; a copy is the natural answer
    assert_close(whole, t) and not np.shares_memory(whole.numpy(), x.numpy())


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_with_none_entries_matches_aten(accumulate):
    x, t = _pair(_rand(3, 4))
    idx = [None, np.array([1, 3, 1])] if accumulate else [None, np.array([1, 3])]
    v = _rand(3, len(idx[1]), seed=1)
    expected = aten.index_put(t, [None, torch.from_numpy(idx[1])], torch.from_numpy(v), accumulate)
    out = api.index_put(x, [None, toolkit.tensor(idx[1])], toolkit.tensor(v), accumulate)
    assert_close(out, expected)


def test_index_put_inplace_and_integer_dtypes():
    for dtype in (np.int64, np.int32, np.bool_, np.float32):
        a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
        x, t = _pair(a)
        v = np.array([1, 0, 1, 1]).astype(dtype)
        version = x._version
        out = x.index_put_((toolkit.tensor(np.array([2, 0])),), toolkit.tensor(v))
        t.index_put_((torch.tensor([2, 0]),), torch.from_numpy(v))
        assert out is x and x._version > version
        assert_close(x, t)


def test_index_put_accumulate_sums_repeats():
    x = toolkit.zeros(4)
    x.index_put_([toolkit.tensor([0, 0, 2, 0])], toolkit.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
    assert x.tolist() == [7.0, 0.0, 3.0, 0.0]


def test_index_put_errors():
    x = toolkit.zeros(3, 4)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match, got Float for "
                                           "the destination and Long for the source."):
        x.index_put((toolkit.tensor([0]),), toolkit.tensor([1]))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x.index_put((toolkit.tensor([3]),), toolkit.tensor(1.0))
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x.index_put((toolkit.tensor([0.0]),), toolkit.tensor(1.0))


def test_index_errors():
    x = toolkit.zeros(3, 4)
    with pytest.raises(IndexError, match="at least one index must be provided"):
        api.index(x, [])
    with pytest.raises(IndexError, match=r"too many indices for tensor of dimension 2 \(got 3\)"):
        api.index(x, [None, None, toolkit.tensor([0])])
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 3"):
        api.index(x, [toolkit.tensor([7])])
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        api.index(x, [toolkit.tensor([1], dtype=toolkit.int16)])


def test_slice_and_select_are_views_with_pytorch_errors():
    x = toolkit.tensor(_rand(3, 4))
    s = api.slice(x, 1, 1, 100, 2)
    assert s._base is x and s.shape == (3, 2)
    assert_close(s, aten.slice(torch.from_numpy(x.numpy().copy()), 1, 1, 100, 2))
    assert api.slice(x, 0, 2, 1).shape == (0, 4)
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        api.slice(x, 0, 0, 2, 0)
    sel = x.select(1, -1)
    assert sel._base is x and sel.shape == (3,)
    with pytest.raises(IndexError, match=r"select\(\): index 5 out of range for tensor of size \[3, 4\] at dimension 0"):
        x.select(0, 5)
    with pytest.raises(IndexError, match=r"select\(\) cannot be applied to a 0-dim tensor."):
        toolkit.tensor(1.0).select(0, 0)


def test_slice_and_select_meta_rules_need_no_data():
    m = TensorMeta((5, 4), toolkit.float32)
    assert registry.get("slice").infer(m, 0, 1, None, 2).shape == (2, 4)
    assert registry.get("select").infer(m, 1, 3).shape == (5,)
    with pytest.raises(IndexError, match="select"):
        registry.get("select").infer(m, 1, 4)


def test_index_meta_rule_on_metadata_only():
    self_m = TensorMeta((3, 4, 5), toolkit.float32)
    idx = TensorMeta((2, 1), toolkit.int64)
    assert registry.get("index").infer(self_m, [None, idx, TensorMeta((3,), toolkit.int64)]).shape == (3, 2, 3)
    assert registry.get("index").infer(self_m, [idx, None, idx]).shape == (2, 1, 4)
    mask = TensorMeta((3, 4), toolkit.bool)
    assert registry.get("index").infer(self_m, [mask]).shape == (None, 5)  # data-dependent size


@pytest.mark.parametrize("name,args", [
    ("scatter_", (1, np.array([[0, 2]]), _rand(1, 2))),
    ("scatter_", (1, np.array([[0, 2]]), 3.0)),
    ("scatter_add_", (1, np.array([[0, 0]]), _rand(1, 2))),
    ("index_add_", (0, np.array([2, 0, 2]), _rand(3, 4))),
    ("index_copy_", (1, np.array([3, 1]), _rand(3, 2))),
    ("index_fill_", (1, np.array([3, 1]), -2.0)),
    ("masked_fill_", (np.array([True, False, False, True]), 9.0)),
    ("masked_scatter_", (np.array([[True], [False], [True]]), _rand(8))),
])
def test_inplace_variants_match_torch(name, args):
    x, t = _pair(_rand(3, 4))
    tk_args = [toolkit.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    th_args = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    version = x._version
    assert getattr(x, name)(*tk_args) is x
    getattr(t, name)(*th_args)
    assert x._version > version
    assert_close(x, t)


def test_scatter_reduce_and_integer_dtypes():
    a = np.arange(12).reshape(3, 4)
    x, t = _pair(a)
    idx = np.array([[0, 0, 3]])
    for reduce in ("add", "multiply"):
        assert_close(x.scatter(1, toolkit.tensor(idx), 2, reduce=reduce),
                     t.scatter(1, torch.from_numpy(idx), 2, reduce=reduce))
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply."):
        x.scatter(1, toolkit.tensor(idx), 2, reduce="max")
    assert_close(x.gather(0, toolkit.tensor(np.array([[2, 0, 1, 1]]))), t.gather(0, torch.tensor([[2, 0, 1, 1]])))
    assert_close(x.index_select(1, toolkit.tensor([3, 3])), t.index_select(1, torch.tensor([3, 3])))
    assert_close(x.take(toolkit.tensor([[11, -1]])), t.take(torch.tensor([[11, -1]])))
    b = np.array([[True, False], [False, False]])
    xb, tb = _pair(b)
    assert_close(xb.masked_fill(toolkit.tensor(b), False), tb.masked_fill(torch.from_numpy(b), False))
    assert_close(toolkit.masked_select(xb, toolkit.tensor(~b)), torch.masked_select(tb, torch.from_numpy(~b)))


@pytest.mark.parametrize("call,exc,match", [
    (lambda x: x.gather(1, toolkit.tensor([[0, 7]])), RuntimeError, "index 7 is out of bounds for dimension 1 with size 4"),
    (lambda x: x.gather(1, toolkit.tensor([0, 1])), RuntimeError,
     "Index tensor must have the same number of dimensions as input tensor"),
    (lambda x: x.gather(1, toolkit.tensor([[0.0]])), RuntimeError, r"gather\(\): Expected dtype int32/int64 for index"),
    (lambda x: x.scatter(1, toolkit.tensor([[0, 1]]), toolkit.ones(1, 1)), RuntimeError,
     r"Expected index \[1, 2\] to be no larger than self \[3, 4\] apart from dimension 1 and to be no larger size "
     r"than src \[1, 1\]"),
    (lambda x: x.scatter(1, toolkit.tensor([[0, 1]]), toolkit.ones(1, 2, dtype=toolkit.float64)), RuntimeError,
     r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
    (lambda x: x.index_select(0, toolkit.tensor([0, 5])), IndexError, "index out of range in self"),
    (lambda x: x.index_select(0, toolkit.tensor([[0]])), IndexError, "Index is supposed to be a vector"),
    (lambda x: x.index_add(0, toolkit.tensor([0, 1]), toolkit.ones(3, 4)), RuntimeError,
     r"Number of indices \(2\) should be equal to source.size\(dim\): \(3\), for dim: 0"),
    (lambda x: x.index_add(0, toolkit.tensor([0, 5]), toolkit.ones(2, 4)), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x: x.masked_fill(toolkit.ones(3, 4), 1.0), RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype float"),
    (lambda x: x.masked_fill(toolkit.ones(3, 4, dtype=toolkit.bool), toolkit.tensor([1.0])), RuntimeError,
     "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension"),
    (lambda x: x.masked_select(toolkit.ones(3, 4)), RuntimeError, "masked_select: expected BoolTensor for mask"),
    (lambda x: x.masked_scatter(toolkit.ones(3, 4, dtype=toolkit.bool), toolkit.ones(5)), RuntimeError,
     "Number of elements of source < number of ones in mask"),
    (lambda x: x.take(toolkit.tensor([0, 20])), IndexError,
     "out of range: tried to access index 20 on a tensor of 12 elements."),
    (lambda x: x.index_fill(0, toolkit.tensor([0]), toolkit.tensor([1.0])), RuntimeError,
     "index_fill_ only supports a 0-dimensional value tensor"),
])
def test_errors_match_torch(call, exc, match):
    x = toolkit.zeros(3, 4)
    with pytest.raises(exc, match=match):
        call(x)
    th = torch.zeros(3, 4)

    def to_torch(v):
        return torch.from_numpy(v.numpy().copy()) if isinstance(v, toolkit.Tensor) else v

    class Shim:  # replays the same call on torch tensors
        def __getattr__(self, name):
            return lambda *a, **k: getattr(th, name)(*[to_torch(e) for e in a], **k)

    with pytest.raises(exc, match=match):
        call(Shim())


def test_masked_fill_broadcasts_out_of_place_only():
    x, t = _pair(_rand(3, 4))
    m = np.ones((2, 3, 4), bool)
    assert_close(x.masked_fill(toolkit.tensor(m), 1.0), t.masked_fill(torch.from_numpy(m), 1.0))
    with pytest.raises(RuntimeError):
        x.masked_fill_(toolkit.tensor(m), 1.0)


def test_masked_fill_tensor_value_gets_gradient():
    a, m = _rand(3, 4), _rand(3, 4, seed=1) > 0
    v = toolkit.tensor(2.0, dtype=toolkit.float64, requires_grad=True)
    tv = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    toolkit.tensor(a).masked_fill(toolkit.tensor(m), v).sum().backward()
    torch.from_numpy(a).masked_fill(torch.from_numpy(m), tv).sum().backward()
    assert_close(v.grad, tv.grad)


def test_nonzero_as_tuple_and_argwhere():
    a = np.array([[0, 1.5, 0], [2, 0, 3]])
    x, t = _pair(a)
    assert_close(x.nonzero(), t.nonzero())
    assert_close(toolkit.nonzero(x), torch.nonzero(t))
    assert_close(toolkit.nonzero(x, as_tuple=True), torch.nonzero(t, as_tuple=True))
    assert_close(x.nonzero(as_tuple=True), t.nonzero(as_tuple=True))
    assert_close(toolkit.nonzero(toolkit.tensor(3.0), as_tuple=True), torch.nonzero(torch.tensor(3.0), as_tuple=True))
    assert_close(toolkit.argwhere(x), torch.argwhere(t))
    assert_close(x[x.nonzero(as_tuple=True)], t[t.nonzero(as_tuple=True)])


def test_take_along_dim_matches_torch():
    x, t = _pair(_rand(3, 4))
    for idx, dim in ((np.array([[0], [3], [-1]]), 1), (np.array([[1, 2, 0, 0]]), 0), (np.array([[5, 0]]), None)):
        assert_close(toolkit.take_along_dim(x, toolkit.tensor(idx), dim), torch.take_along_dim(t, torch.from_numpy(idx), dim))


def test_gather_scatter_gradients_with_repeats_match_torch():
    a, src = _rand(3, 4), _rand(2, 3, seed=1)
    idx = np.array([[0, 0, 3], [1, 1, 1]])
    x, xs = toolkit.tensor(a, requires_grad=True), toolkit.tensor(src, requires_grad=True)
    t, ts = torch.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(src.copy()).requires_grad_()
    w = toolkit.tensor(_rand(3, 4, seed=2))
    (x.scatter_add(1, toolkit.tensor(idx), xs) * w).sum().backward()
    (t.scatter_add(1, torch.from_numpy(idx), ts) * torch.from_numpy(w.numpy())).sum().backward()
    assert_close(x.grad, t.grad)
    assert_close(xs.grad, ts.grad)
    big = toolkit.tensor(_rand(2, 4, seed=3), requires_grad=True)  # src larger than index: PyTorch's backward fails
    toolkit.zeros(3, 4, dtype=toolkit.float64).scatter_add(1, toolkit.tensor(idx), big).sum().backward()
    assert big.grad.tolist() == [[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0]]
    g = toolkit.tensor(a, requires_grad=True)
    g.gather(1, toolkit.tensor(idx)).sum().backward()
    assert g.grad.numpy().tolist()[0] == [2.0, 0.0, 0.0, 1.0]
