"""Shape ops (new buffers) against PyTorch: values, dtype promotion, autograd and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close

DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_]


def _data(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 10).astype(dtype)


def _pair(a):
    return toolkit.tensor(a), torch.from_numpy(np.array(a, copy=True))


def _both(fn, *arrays):
    """``fn`` applied to toolkit and to torch versions of ``arrays`` (lists of arrays stay lists)."""
    def conv(lib, a):
        if isinstance(a, list):
            return [conv(lib, e) for e in a]
        return toolkit.tensor(a) if lib == "tk" else torch.from_numpy(np.array(a, copy=True))

    return fn(toolkit, *[conv("tk", a) for a in arrays]), fn(torch, *[conv("th", a) for a in arrays])


# (function, input shapes) with a single tensor argument; each is run for every dtype.
UNARY = [
    (lambda m, x: x.repeat(2, 1, 3), (2, 3)),
    (lambda m, x: m.tile(x, (2,)), (2, 3)),
    (lambda m, x: m.repeat_interleave(x, 2, dim=1), (2, 3)),
    (lambda m, x: m.repeat_interleave(x, 3), (2, 3)),
    (lambda m, x: m.repeat_interleave(x, m.tensor([1, 0, 2]), dim=1), (2, 3)),
    (lambda m, x: m.flip(x, (0, -1)), (2, 3)),
    (lambda m, x: m.fliplr(x), (2, 3)),
    (lambda m, x: m.flipud(x), (2, 3)),
    (lambda m, x: m.roll(x, 1), (2, 3)),
    (lambda m, x: m.roll(x, (1, -4), (1, 0)), (2, 3)),
    (lambda m, x: m.tril(x, 1), (3, 4)),
    (lambda m, x: m.triu(x, -1), (2, 3, 4)),
    (lambda m, x: m.diag(x), (4,)),
    (lambda m, x: m.diag(x, -1), (3, 4)),
    (lambda m, x: m.diag_embed(x, 1, 0, 2), (2, 3)),
    (lambda m, x: m.cat([x, x.flip(0)], -1), (2, 3)),
    (lambda m, x: m.stack([x, x], 1), (2, 3)),
    (lambda m, x: m.hstack([x, x]), (2, 3)),
    (lambda m, x: m.vstack([x, x[0]]), (2, 3)),
    (lambda m, x: m.dstack([x, x]), (2, 3)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("k", range(len(UNARY)))
def test_values_and_dtypes_match_torch(k, dtype):
    fn, shape = UNARY[k]
    out, ref = _both(fn, _data(shape, dtype))
    assert_close(out, ref)


@pytest.mark.parametrize("k", range(len(UNARY)))
def test_noncontiguous_inputs(k):
    fn, shape = UNARY[k]
    a = _data(tuple(reversed(shape)))
    tk, th = toolkit.tensor(a), torch.from_numpy(a.copy())
    perm = tuple(reversed(range(len(shape))))
    assert_close(fn(toolkit, tk.permute(perm)), fn(torch, th.permute(perm)))


@pytest.mark.parametrize("k", range(len(UNARY)))
def test_results_are_new_buffers(k):
    fn, shape = UNARY[k]
    x = toolkit.tensor(_data(shape))
    out = fn(toolkit, x)
    assert out._storage is not x._storage
    assert not np.shares_memory(out.numpy(), x.numpy())


@pytest.mark.parametrize("k", range(len(UNARY)))
def test_gradients_match_torch(k):
    fn, shape = UNARY[k]
    a = _data(shape, np.float64)
    tk = toolkit.tensor(a).requires_grad_()
    th = torch.from_numpy(a.copy()).requires_grad_()
    out, ref = fn(toolkit, tk), fn(torch, th)
    g = np.random.default_rng(3).standard_normal(tuple(ref.shape))
    out.backward(toolkit.tensor(g))
    ref.backward(torch.from_numpy(g))
    assert_close(tk.grad, th.grad)


# ---------------------------------------------------------------------------------------------
# cat and stack: promotion, skipped empties, aliases
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d1", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("d2", DTYPES, ids=lambda d: np.dtype(d).name)
def test_cat_and_stack_promote_like_torch(d1, d2):
    a, b = _data((2, 3), d1), _data((2, 3), d2, seed=1)
    for fn in (lambda m, x, y: m.cat([x, y], 1), lambda m, x, y: m.stack([x, y]),
               lambda m, x, y: m.concat([x, y]), lambda m, x, y: m.concatenate([x, y], -1)):
        out, ref = _both(fn, a, b)
        assert out.dtype == getattr(toolkit, str(ref.dtype).replace("torch.", ""))
        assert_close(out, ref)


def test_cat_skips_1d_empty_tensors_like_torch():
    cases = [
        lambda m: m.cat([m.zeros(0), m.ones(2, 3, dtype=m.int32)]),
        lambda m: m.cat([m.zeros(0, dtype=m.float64), m.ones(2, 3, dtype=m.int32)], dim=1),
        lambda m: m.cat([m.ones(2, 3), m.zeros(0, dtype=m.float64)], dim=-1),
        lambda m: m.cat([m.zeros(0, dtype=m.float64), m.zeros(0)]),
        lambda m: m.cat([m.zeros(0, 3), m.ones(2, 3)]),
        lambda m: m.cat((m.ones(1, 2), m.ones(1, 2) * 2)),
    ]
    for fn in cases:
        assert_close(fn(toolkit), fn(torch))


def test_cat_grad_reaches_every_input():
    xs = [toolkit.ones(2, 1, dtype=toolkit.float64, requires_grad=True),
          toolkit.zeros(0, dtype=toolkit.float64, requires_grad=True),
          toolkit.ones(2, 3, dtype=toolkit.float64, requires_grad=True)]
    out = toolkit.cat(xs, 1)
    (out * toolkit.arange(8.0, dtype=toolkit.float64).view(2, 4)).sum().backward()
    assert xs[0].grad.tolist() == [[0.0], [4.0]]
    assert xs[1].grad.shape == (0,)
    assert xs[2].grad.tolist() == [[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]]


def test_cat_backward_keeps_no_reference_to_inputs():
    x = toolkit.ones(2, 2, requires_grad=True)
    y = x * 1
    out = toolkit.cat([y, y])
    y.add_(1)  # cat saves only sizes, so changing an input afterwards is fine
    out.sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_repeat_interleave_forms():
    for fn in (lambda m: m.repeat_interleave(m.tensor([1, 0, 3])),
               lambda m: m.repeat_interleave(m.tensor([2, 2]), output_size=4),
               lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(2),
               lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(m.tensor([1, 2]), dim=0),
               lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(m.tensor(2), dim=1),
               lambda m: m.repeat_interleave(m.tensor(5.0), 3)):
        assert_close(fn(toolkit), fn(torch))


def test_tril_triu_in_place():
    for name in ("tril_", "triu_"):
        a = _data((3, 4))
        tk, th = _pair(a)
        version = tk._version
        assert getattr(tk, name)(1) is tk
        getattr(th, name)(1)
        assert tk._version == version + 1
        assert_close(tk, th)


def test_exposure_matches_torch():
    names = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "repeat", "tile",
             "repeat_interleave", "flip", "fliplr", "flipud", "roll", "tril", "triu", "tril_", "triu_", "diag",
             "diag_embed"]
    for n in names:
        assert hasattr(toolkit, n) == hasattr(torch, n), n
        assert hasattr(toolkit.Tensor, n) == hasattr(torch.Tensor, n), n


def test_double_backward():
    for fn in (lambda m, x: (m.cat([x, x * x]) ** 2).sum(), lambda m, x: (x.repeat(2, 3) ** 3).sum(),
               lambda m, x: (m.diag(x) ** 2).sum() + (m.diag_embed(x) ** 3).sum(),
               lambda m, x: (m.roll(x, 1, 1) * x).pow(2).sum()):
        a = np.linspace(-1, 1, 6).reshape(2, 3)
        tk = toolkit.tensor(a).requires_grad_()
        th = torch.from_numpy(a.copy()).requires_grad_()
        (g_tk,) = toolkit.autograd.grad(fn(toolkit, tk), tk, create_graph=True)
        (g_th,) = torch.autograd.grad(fn(torch, th), th, create_graph=True)
        assert_close(g_tk, g_th)
        (g_tk * g_tk).sum().backward()
        (g_th * g_th).sum().backward()
        assert_close(tk.grad, th.grad)


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------
ERRORS = [
    (lambda m: m.cat([m.zeros(2, 2), m.zeros(3, 3)], 1), RuntimeError,
     r"cat: Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number 1 "
     r"in the list."),
    (lambda m: m.cat([m.zeros(2, 2), m.zeros(3, 3, 1)]), RuntimeError,
     "cat: Tensors must have same number of dimensions: got 2 and 3"),
    (lambda m: m.cat([]), ValueError, "cat\\(\\): expected a non-empty list of Tensors"),
    (lambda m: m.cat([m.zeros(2), m.tensor(1.0)]), RuntimeError,
     r"cat: zero-dimensional tensor \(at position 1\) cannot be concatenated"),
    (lambda m: m.cat([m.zeros(2, 3)], 2), IndexError, "cat: Dimension out of range"),
    (lambda m: m.concat([m.zeros(2, 2), m.zeros(3, 3)], 1), RuntimeError, "concat: Sizes of tensors must match"),
    (lambda m: m.stack([m.zeros(2, 3), m.zeros(2, 4)]), RuntimeError,
     r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[2, 4\] at entry 1"),
    (lambda m: m.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda m: m.stack([m.zeros(2)], 2), IndexError, "stack: Dimension out of range"),
    (lambda m: m.zeros(3, 4).repeat(2), RuntimeError,
     "repeat: Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"),
    (lambda m: m.zeros(3, 4).repeat(-1, 2), RuntimeError,
     r"Trying to create tensor with negative dimension -3: \[-3, 8\]"),
    (lambda m: m.tile(m.zeros(3, 4), (-1,)), RuntimeError, r"negative dimension -4: \[3, -4\]"),
    (lambda m: m.repeat_interleave(m.zeros(3), -1), RuntimeError, "repeat_interleave: Repeats must be non-negative"),
    (lambda m: m.repeat_interleave(m.zeros(3), m.tensor([1, 2]), 0), RuntimeError,
     "repeats must have the same size as input along dim"),
    (lambda m: m.repeat_interleave(m.zeros(3), m.tensor([1, -1, 1]), 0), RuntimeError,
     "repeat_interleave: repeats can not be negative"),
    (lambda m: m.repeat_interleave(m.zeros(3), m.tensor([[1, 2, 3]]), 0), RuntimeError,
     "repeats must be 0-dim or 1-dim tensor"),
    (lambda m: m.repeat_interleave(m.zeros(3), m.tensor([1.0, 2.0, 3.0]), 0), NotImplementedError,
     "not implemented for"),
    (lambda m: m.repeat_interleave(m.zeros(3, 4), 2, output_size=10), RuntimeError,
     "repeat_interleave: Invalid output_size, expected 24 but got 10"),
    (lambda m: m.repeat_interleave(m.tensor([[1, 2]])), RuntimeError, "only accept 1D vector as repeat"),
    (lambda m: m.flip(m.zeros(3, 4), (0, 0)), RuntimeError, "flip: dim 0 appears multiple times in the list of dims"),
    (lambda m: m.flip(m.zeros(3, 4), (2,)), IndexError, "flip: Dimension out of range"),
    (lambda m: m.fliplr(m.zeros(3)), RuntimeError, "fliplr: Input must be >= 2-d."),
    (lambda m: m.flipud(m.tensor(1.0)), RuntimeError, "flipud: Input must be >= 1-d."),
    (lambda m: m.roll(m.zeros(3, 4), (1, 2), (0,)), RuntimeError,
     "roll: shifts and dimensions must align. shifts: 2, dims:1"),
    (lambda m: m.roll(m.zeros(3, 4), (), ()), RuntimeError, "roll: `shifts` required"),
    (lambda m: m.roll(m.tensor(1.0), 1, 0), IndexError, "roll: Dimension specified as 0 but tensor has no dimensions"),
    (lambda m: m.tril(m.zeros(3)), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    (lambda m: m.triu(m.tensor(1.0)), RuntimeError, "triu: input tensor must have at least 2 dimensions"),
    (lambda m: m.diag(m.zeros(2, 2, 2)), RuntimeError, "diag\\(\\): Supports 1D or 2D tensors. Got 3D"),
    (lambda m: m.diag_embed(m.zeros(3, 4), 1, 0, 0), RuntimeError,
     "diag_embed: diagonal dimensions cannot be identical 0, 0"),
    (lambda m: m.diag_embed(m.tensor(1.0)), IndexError, "diag_embed: Dimension out of range"),
    (lambda m: m.hstack([]), RuntimeError, "hstack expects a non-empty TensorList"),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_match_torch(k):
    fn, exc, pattern = ERRORS[k]
    with pytest.raises(exc, match=pattern):
        fn(toolkit)
    with pytest.raises(exc):
        fn(torch)


def test_meta_rules():
    from toolkit._core.meta import TensorMeta
    from toolkit.ops import registry

    a, b = TensorMeta((2, 3), toolkit.int64), TensorMeta((2, 1), toolkit.float16)
    m = registry.get("cat").infer([a, b], 1)
    assert m.shape == (2, 4) and m.dtype is toolkit.float16
    assert registry.get("stack").infer([a, a], -1).shape == (2, 3, 2)
    assert registry.get("repeat").infer(a, (2, 1, 2)).shape == (2, 2, 6)
    assert registry.get("diag_embed").infer(a, 1, 0, 2).shape == (4, 2, 4)
    with pytest.raises(RuntimeError, match="cat: Sizes of tensors must match"):
        registry.get("cat").infer([a, b], 0)
    with pytest.raises(RuntimeError, match="pass output_size"):
        registry.get("repeat_interleave", "self_Tensor").infer(a, TensorMeta((3,), toolkit.int64), 1, None)
    assert registry.get("repeat_interleave", "self_Tensor").infer(a, TensorMeta((3,), toolkit.int64), 1, 7).shape == (
        2, 7)
