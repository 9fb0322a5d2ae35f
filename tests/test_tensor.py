"""The Tensor object: construction, numpy bridge, metadata, conversions, version counter."""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest
import torch

import toolkit

from .conftest import assert_close


def test_tensor_infers_dtype_like_torch():
    for data in ([1, 2], [1.0, 2], [True, False], [[1, 2], [3, 4.5]], 3, 2.5, True, [], [[]]):
        assert str(toolkit.tensor(data).dtype).split(".")[1] == str(torch.tensor(data).dtype).split(".")[1], data
    assert toolkit.tensor([1, 2], dtype=toolkit.float64).dtype is toolkit.float64
    with pytest.raises(ValueError):
        toolkit.tensor([[1, 2], [3]])


def test_from_numpy_and_numpy_share_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = toolkit.from_numpy(a)
    a[0, 0] = 100
    assert t[0, 0].item() == 100 if hasattr(t, "__getitem__") else True
    assert t.numpy() is a or np.shares_memory(t.numpy(), a)
    t.add_(1)
    assert a[0, 0] == 101
    assert toolkit.from_numpy(np.zeros(3, np.int16)).dtype is toolkit.int16
    assert toolkit.from_numpy(np.zeros(2, complex)).dtype is toolkit.complex128
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        toolkit.from_numpy(np.zeros(2, np.clongdouble))


def test_tensor_copies_data():
    a = np.ones(3)
    t = toolkit.tensor(a)
    a[0] = 5
    assert t.tolist() == [1.0, 1.0, 1.0]
    assert t.dtype is toolkit.float64


def test_as_tensor_shares_when_possible():
    a = np.ones(3, np.float32)
    assert np.shares_memory(toolkit.as_tensor(a).numpy(), a)
    assert not np.shares_memory(toolkit.as_tensor(a, dtype=toolkit.float64).numpy(), a)


def test_item_tolist_and_python_conversions():
    t = toolkit.tensor([[1.5, 2.0]])
    assert t.tolist() == [[1.5, 2.0]]
    assert toolkit.tensor([3]).item() == 3 and isinstance(toolkit.tensor([3]).item(), int)
    assert float(toolkit.tensor(2.5)) == 2.5 and int(toolkit.tensor(7)) == 7
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        t.item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(toolkit.ones(2))
    assert len(toolkit.zeros(4, 2)) == 4
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(toolkit.tensor(1.0))


def test_metadata():
    t = toolkit.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.size(-1) == 4 and t.dim() == 3 and t.ndim == 3
    assert t.numel() == 24 and t.stride() == (12, 4, 1) and t.element_size() == 4
    assert t.is_contiguous() and not t.transpose(0, 2).is_contiguous()
    assert t.transpose(0, 2).stride() == (1, 4, 12)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.size(3)


def test_to_and_type_conversions():
    t = toolkit.tensor([1.7, -2.2])
    assert t.to(toolkit.int64).tolist() == [1, -2]
    assert t.to("cpu") is t
    assert t.to(toolkit.float64).dtype is toolkit.float64
    assert t.to("cpu", toolkit.double).dtype is toolkit.float64
    assert t.double().dtype is toolkit.float64 and t.long().dtype is toolkit.int64 and t.bool().dtype is toolkit.bool
    assert t.type() == "torch.FloatTensor"
    assert t.type(toolkit.DoubleTensor).dtype is toolkit.float64
    assert isinstance(t, toolkit.FloatTensor) and not isinstance(t, toolkit.DoubleTensor)
    assert t.type("torch.LongTensor").dtype is toolkit.int64
    assert toolkit.FloatTensor(2, 3).shape == (2, 3)


def test_to_is_differentiable():
    x = toolkit.tensor([1.0, 2.0], requires_grad=True)
    y = (x.to(toolkit.float64) * 3).sum()
    y.backward()
    assert x.grad.dtype is toolkit.float32
    assert x.grad.tolist() == [3.0, 3.0]


def test_version_counter_shared_by_views():
    x = toolkit.zeros(2, 3)
    v = x.t()
    assert x._version == 0
    x.add_(1)
    assert x._version == 1 and v._version == 1
    v.mul_(2)
    assert x._version == 2
    assert x.tolist() == [[2.0] * 3] * 2


def test_only_float_tensors_require_grad():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        toolkit.tensor([1, 2]).requires_grad_()


def test_pickle_and_deepcopy_round_trip():
    t = toolkit.tensor([[1.0, 2.0]], requires_grad=True)
    u = pickle.loads(pickle.dumps(t))
    assert_close(u.detach(), t.detach()) and u.requires_grad
    d = copy.deepcopy(t)
    assert d.requires_grad and not np.shares_memory(d.detach().numpy(), t.detach().numpy())


def test_numpy_refuses_tensors_requiring_grad():
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        toolkit.ones(2, requires_grad=True).numpy()


def test_numpy_interop_operators():
    t = toolkit.ones(3)
    r = np.ones(3, np.float32) + t
    assert isinstance(r, toolkit.Tensor)
    assert np.asarray(t).dtype == np.float32


@pytest.mark.parametrize("data", [
    np.int16(1), np.float64(1.5), np.float32(2.5), np.uint8(3), np.bool_(True), np.float16(1.0),
    [np.int16(1), np.int16(2)], [np.int16(1), 2], [2, np.int16(1)], [np.int16(1), np.int32(2)],
    [np.float64(1.5), 2.0], [np.float32(1.5), 2.0], [np.int16(1), 2.5], [np.float64(1.5), np.int16(1)],
    [[np.int16(1)], [np.int64(2)]], [True, np.int16(2)], [np.int8(1), np.uint8(1)], [np.float16(1.0), 1.0],
    [], [[], []], [1, 2.0], True, 3,
])
def test_tensor_dtype_inference_numpy_scalars(data):
    """numpy scalars keep their dtype and a sequence promotes its items' dtypes, as in torch."""
    for fn_t, fn_k in ((torch.tensor, toolkit.tensor), (torch.as_tensor, toolkit.as_tensor)):
        expected = fn_t(data)
        got = fn_k(data)
        assert str(got.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
        assert got.tolist() == expected.tolist()


def test_tensor_where_method_matches_torch():
    """``x.where(cond, y)`` is ``where(cond, x, y)``: scalars, broadcasting, promotion, keywords and gradients."""
    r = np.random.default_rng(0)
    xa, ya, ca = r.standard_normal((3, 4)), r.standard_normal((4,)), r.uniform(size=(3, 4)) > 0.5
    for other in (ya, 2, 2.5):
        tk_o = toolkit.tensor(other) if isinstance(other, np.ndarray) else other
        th_o = torch.tensor(other) if isinstance(other, np.ndarray) else other
        x, tx = toolkit.tensor(xa, requires_grad=True), torch.tensor(xa, requires_grad=True)
        out, exp = x.where(toolkit.tensor(ca), tk_o), tx.where(torch.tensor(ca), th_o)
        assert_close(out, exp)
        out.sum().backward()
        exp.sum().backward()
        assert_close(x.grad, tx.grad)
    i32 = toolkit.tensor([1, 2, 3], dtype=toolkit.int32)
    c = toolkit.tensor([True, False, True])
    got = i32.where(condition=c, other=2.5)
    exp = torch.tensor([1, 2, 3], dtype=torch.int32).where(condition=torch.tensor([True, False, True]), other=2.5)
    assert_close(got, exp)
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        i32.where(toolkit.tensor([1, 0, 1]), 0)
    with pytest.raises(TypeError):
        i32.where(c)


@pytest.mark.parametrize("data,dtype", [
    ([2**63], None), (2**63, None), ([-(2**63) - 1], None), ([2**64], None), ([[1], [2**63]], None),
    ([True, 2**63], None), (10**400, None), ([2**63], "int32"), ([1.5, 2**63], "int64"),
    ([2**40], "int32"), ([2**31], "int32"), ([300], "uint8"), ([-256], "uint8"), ([-129], "int8"), ([2**15], "int16"),
    ([-1], "uint8"), ([-255], "uint8"), ([-(2**63)], None), ([2**63], "float32"), ([2**63], "float64"),
    ([1.5, 2**63], None), ([2**63], "bool"), ([True, 300], "uint8"),
])
def test_tensor_integer_overflow_like_torch(data, dtype):
    """Python ints beyond 64 bits are PyTorch's ``ValueError: Overflow when unpacking long long``; ints beyond a
    narrower dtype its ``RuntimeError: value cannot be converted...``; unsigned dtypes wrap negatives down to
    ``-max``; float and bool dtypes take any int."""
    def make(m):
        return m.tensor(data, dtype=getattr(m, dtype) if dtype else None)

    try:
        want = make(torch)
    except (ValueError, RuntimeError) as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            make(toolkit)
        return
    assert_close(make(toolkit), want)


def test_as_tensor_overflow_like_torch():
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        toolkit.as_tensor([2**63])


SIZE_DIMS = {
    "0-dim int64": lambda lib: lib.tensor(1), "0-dim int32 negative": lambda lib: lib.tensor(-1, dtype=lib.int32),
    "1-d int": lambda lib: lib.tensor([1]), "0-dim float": lambda lib: lib.tensor(1.0),
    "0-dim bool": lambda lib: lib.tensor(True), "float": lambda lib: 1.0, "bool": lambda lib: True,
    "numpy int64": lambda lib: np.int64(1), "numpy int32": lambda lib: np.int32(-2), "numpy bool": lambda lib: np.bool_(1),
    "numpy float": lambda lib: np.float32(1), "str": lambda lib: "a",
}


@pytest.mark.parametrize("name", list(SIZE_DIMS))
def test_size_takes_the_dims_torch_takes(name):
    """``x.size(d)`` reads a 0-dim integer tensor or a numpy integer as PyTorch does (``__index__``) and gives
    PyTorch's TypeError for anything else."""
    x, tx = toolkit.ones(2, 3), torch.ones(2, 3)
    try:
        expected = tx.size(SIZE_DIMS[name](torch))
    except TypeError as e:
        with pytest.raises(TypeError, match=re.escape(str(e).replace("torch.", "toolkit."))):
            x.size(SIZE_DIMS[name](toolkit))
    else:
        assert x.size(SIZE_DIMS[name](toolkit)) == expected
