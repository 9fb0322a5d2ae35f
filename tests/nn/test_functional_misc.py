"""F.normalize, F.one_hot, F.unfold / F.fold, pixel and channel shuffles and F.embedding_bag against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close


def _pair(shape, seed=0):
    x = np.random.default_rng(seed).uniform(-1, 1, shape)
    return toolkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


def _check(fn, tfn, shape):
    a, b = _pair(shape)
    out, tout = fn(a), tfn(b)
    assert_close(out, tout)
    g = np.random.default_rng(9).uniform(-1, 1, tuple(tout.shape))
    out.backward(toolkit.tensor(g))
    tout.backward(torch.tensor(g))
    assert_close(a.grad, b.grad)


def _errors_match(fn, tfn):
    with pytest.raises(Exception) as expected:
        tfn()
    with pytest.raises(type(expected.value)) as got:
        fn()
    assert str(got.value).split("\n")[0].replace("toolkit.tensor", "torch") == str(expected.value).split("\n")[0]


# ----------------------------------------------------------------------------- normalize
@pytest.mark.parametrize("kwargs", [{}, {"p": 1.0, "dim": 0}, {"p": 3, "dim": -1, "eps": 0.5}])
def test_normalize_matches_torch(kwargs):
    _check(lambda x: F.normalize(x, **kwargs), lambda x: TF.normalize(x, **kwargs), (3, 4, 2))


def test_normalize_out():
    x = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    out = toolkit.empty(3, 4, dtype=toolkit.float64)
    res = F.normalize(toolkit.tensor(x), out=out)
    assert res is out
    assert_close(out, TF.normalize(torch.tensor(x)))


# ----------------------------------------------------------------------------- one_hot
@pytest.mark.parametrize("labels,num_classes", [([0, 2, 1], -1), ([[0, 3], [1, 1]], 5), (2, 4)])
def test_one_hot_matches_torch(labels, num_classes):
    out = F.one_hot(toolkit.tensor(labels), num_classes)
    assert out.dtype is toolkit.int64
    assert_close(out, TF.one_hot(torch.tensor(labels), num_classes))


@pytest.mark.parametrize("labels,num_classes,dtype", [([1, -1], -1, "int64"), ([1, 3], 3, "int64"),
                                                      ([1, 2], 3, "int32"), ([], -1, "int64"), ([1], -2, "int64")])
def test_one_hot_errors_match_torch(labels, num_classes, dtype):
    x = np.array(labels, dtype=dtype)
    _errors_match(lambda: F.one_hot(toolkit.tensor(x), num_classes),
                  lambda: TF.one_hot(torch.tensor(x), num_classes))


# ----------------------------------------------------------------------------- unfold / fold
UNFOLD = [((2, 3, 5, 6), {"kernel_size": 2}),
          ((1, 2, 6, 5), {"kernel_size": (3, 2), "dilation": (1, 2), "padding": 1, "stride": (2, 1)}),
          ((3, 5, 5), {"kernel_size": 3, "padding": (0, 1), "stride": 2})]


@pytest.mark.parametrize("shape,kwargs", UNFOLD)
def test_unfold_matches_torch(shape, kwargs):
    _check(lambda x: F.unfold(x, **kwargs), lambda x: TF.unfold(x, **kwargs), shape)


@pytest.mark.parametrize("shape,kwargs", UNFOLD)
def test_fold_matches_torch(shape, kwargs):
    cols = TF.unfold(torch.zeros(shape), **kwargs).shape
    size = shape[-2:]
    _check(lambda x: F.fold(x, size, **kwargs), lambda x: TF.fold(x, size, **kwargs), tuple(cols))


def test_fold_unfold_second_derivative():
    x = toolkit.tensor(np.random.default_rng(0).uniform(-1, 1, (1, 2, 4, 4)), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda a: F.unfold(a, 2, padding=1, stride=2) ** 2, (x,))
    c = toolkit.tensor(np.random.default_rng(1).uniform(-1, 1, (1, 8, 9)), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda a: F.fold(a, (4, 4), 2, padding=1, stride=2) ** 2, (c,))


@pytest.mark.parametrize("call", [
    lambda F_, m: F_.unfold(m.zeros(1, 2, 3, 3), 4),
    lambda F_, m: F_.unfold(m.zeros(2, 3), 2),
    lambda F_, m: F_.unfold(m.zeros(1, 2, 3, 3), 2, stride=0),
    lambda F_, m: F_.fold(m.zeros(1, 8, 5), (4, 4), 2),
    lambda F_, m: F_.fold(m.zeros(1, 7, 9), (4, 4), 2),
])
def test_fold_unfold_errors_match_torch(call):
    _errors_match(lambda: call(F, toolkit), lambda: call(TF, torch))


# ----------------------------------------------------------------------------- shuffles
@pytest.mark.parametrize("name,shape,arg", [("pixel_shuffle", (2, 8, 2, 3), 2), ("pixel_shuffle", (9, 1, 2), 3),
                                            ("pixel_unshuffle", (1, 2, 4, 6), 2),
                                            ("channel_shuffle", (2, 6, 3), 3), ("channel_shuffle", (1, 4, 2, 2), 2)])
def test_shuffles_match_torch(name, shape, arg):
    _check(lambda x: getattr(F, name)(x, arg), lambda x: getattr(TF, name)(x, arg), shape)


def test_native_channel_shuffle_forward():
    """PyTorch gives aten::native_channel_shuffle no derivative; ours shares channel_shuffle's."""
    x = np.random.default_rng(0).uniform(-1, 1, (1, 4, 2))
    assert_close(F.native_channel_shuffle(toolkit.tensor(x), 2), TF.native_channel_shuffle(torch.tensor(x), 2))


def test_shuffle_functions_in_torch_namespace():
    x = np.random.default_rng(0).uniform(-1, 1, (1, 4, 2, 2))
    for name, arg in (("pixel_shuffle", 2), ("pixel_unshuffle", 2), ("channel_shuffle", 2),
                      ("native_channel_shuffle", 2)):
        assert_close(getattr(toolkit, name)(toolkit.tensor(x), arg), getattr(torch, name)(torch.tensor(x), arg))


@pytest.mark.parametrize("call", [
    lambda F_, m: F_.pixel_shuffle(m.zeros(1, 3, 2, 2), 2),
    lambda F_, m: F_.pixel_shuffle(m.zeros(4, 2), 2),
    lambda F_, m: F_.pixel_unshuffle(m.zeros(1, 1, 3, 4), 2),
    lambda F_, m: F_.channel_shuffle(m.zeros(1, 5, 2), 2),
])
def test_shuffle_errors_match_torch(call):
    _errors_match(lambda: call(F, toolkit), lambda: call(TF, torch))


# ----------------------------------------------------------------------------- embedding_bag
IDX = [1, 2, 4, 4, 3, 0, 5]
OFFSETS = [0, 2, 2, 5]
BAGS = [
    {"mode": "sum"}, {"mode": "mean"}, {"mode": "max"},
    {"mode": "sum", "per_sample_weights": True}, {"mode": "mean", "include_last_offset": True},
    {"mode": "sum", "padding_idx": 4}, {"mode": "mean", "padding_idx": -2}, {"mode": "max", "padding_idx": 4},
    # PyTorch's CPU backward divides the index sorted right after a repeated one by the repeat count too
    # (index 5 after 4, 4 in IDX); with the repeat sorted last both agree on 1 / frequency.
    {"mode": "sum", "scale_grad_by_freq": True, "indices": [1, 2, 5, 5, 3, 0, 4]},
    {"mode": "mean", "scale_grad_by_freq": True, "padding_idx": 1, "indices": [1, 2, 5, 5, 3, 0, 4]},
]


@pytest.mark.parametrize("kwargs", BAGS)
def test_embedding_bag_matches_torch(kwargs):
    kwargs = dict(kwargs)
    idx = kwargs.pop("indices", IDX)
    w, tw = _pair((6, 3))
    psw = tpsw = None
    if kwargs.pop("per_sample_weights", False):
        psw, tpsw = _pair((len(IDX),), 3)
    out = F.embedding_bag(toolkit.tensor(idx), w, toolkit.tensor(OFFSETS), per_sample_weights=psw, **kwargs)
    tout = TF.embedding_bag(torch.tensor(idx), tw, torch.tensor(OFFSETS), per_sample_weights=tpsw, **kwargs)
    assert_close(out, tout)
    g = np.random.default_rng(9).uniform(-1, 1, tuple(tout.shape))
    out.backward(toolkit.tensor(g))
    tout.backward(torch.tensor(g))
    assert_close(w.grad, tw.grad)
    if psw is not None:
        assert_close(psw.grad, tpsw.grad)


def test_embedding_bag_2d_input_and_torch_function():
    w = np.random.default_rng(0).uniform(-1, 1, (5, 3))
    idx = [[1, 2], [0, 4], [3, 3]]
    assert_close(F.embedding_bag(toolkit.tensor(idx), toolkit.tensor(w), mode="max"),
                 TF.embedding_bag(torch.tensor(idx), torch.tensor(w), mode="max"))
    got = toolkit.embedding_bag(toolkit.tensor(w), toolkit.tensor(IDX[:5]), toolkit.tensor([0, 2]), False, 1)
    expected = torch.embedding_bag(torch.tensor(w), torch.tensor(IDX[:5]), torch.tensor([0, 2]), False, 1)
    for a, b in zip(got, expected):
        assert_close(a, b)


@pytest.mark.parametrize("call", [
    lambda F_, m: F_.embedding_bag(m.tensor([[1, 2]]), m.zeros(5, 3), m.tensor([0])),
    lambda F_, m: F_.embedding_bag(m.tensor([1, 2]), m.zeros(5, 3)),
    lambda F_, m: F_.embedding_bag(m.tensor([1, 2]), m.zeros(5, 3), m.tensor([0]), mode="foo"),
    lambda F_, m: F_.embedding_bag(m.tensor([1, 2]), m.zeros(5, 3), m.tensor([0]), mode="max",
                                   scale_grad_by_freq=True),
    lambda F_, m: F_.embedding_bag(m.tensor([1, 2]), m.zeros(5, 3), m.tensor([0]), mode="mean",
                                   per_sample_weights=m.ones(2)),
    lambda F_, m: F_.embedding_bag(m.tensor([1, 2]), m.zeros(5), m.tensor([0])),
    lambda F_, m: F_.embedding_bag(m.tensor([1, 2]), m.zeros(5, 3), m.tensor([1])),
    lambda F_, m: F_.embedding_bag(m.tensor([1, 2]), m.zeros(5, 3), m.tensor([0, 3])),
])
def test_embedding_bag_errors_match_torch(call):
    _errors_match(lambda: call(F, toolkit), lambda: call(TF, torch))
