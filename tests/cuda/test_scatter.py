"""CUDA scatter, indexing and mask ops beyond the registry samples: repeated indices (atomics), strided
inputs, int/bool dtypes, bounds errors, and Python indexing syntax on CUDA tensors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit

from .helpers import needs_cuda, same, same_error

pytestmark = needs_cuda

RNG = np.random.default_rng(1)
F = RNG.standard_normal((4, 5))
I = RNG.integers(-9, 9, (4, 5)).astype(np.int32)
M = RNG.random((4, 5)) < 0.5


DUP = np.array([[0, 0, 2, 0, 0], [1, 1, 1, 1, 3]])  # many elements to one target


def test_scatter_add_repeated_indices_all_dtypes():
    for x in (F, I, F.astype(np.float32), I.astype(np.int8)):
        same(lambda s, i, src: s.t().scatter_add(0, i.t(), src.t()), x, DUP, x.T.copy()[:5, :2].T.copy(),
              exact=x.dtype.kind != "f")
    same(lambda s, i, src: s.scatter_add(-1, i, src), F, DUP[:, :3], F, exact=False)


def test_scatter_overwrite_keeps_last_and_reduce_multiply():
    same(lambda s, i, src: s.scatter(1, i, src), F, DUP, F[:2] * 3)  # last writer wins, as on the CPU
    same(lambda s, i: s.scatter(0, i, -2), I, DUP[:, :4])
    same(lambda s, i, src: s.scatter(1, i, src, reduce="multiply"), F, DUP, F[:2] + 1)  # in index order
    same(lambda s, i: s.scatter(1, i, 3, reduce="add"), I.astype(np.int64), DUP)
    same(lambda s, i, src: s.scatter(0, i, src), M, DUP[:, :3], ~M)


def test_index_add_copy_fill_repeated_and_strided():
    idx = np.array([2, 0, 2, 2])
    same(lambda s, i, src: s.t().index_add(0, i, src.t(), alpha=2), F, idx, RNG.standard_normal((4, 4)), exact=False)
    same(lambda s, i, src: s.t().index_add(-1, i, src), I, idx, I.T[:, :4].copy())
    same(lambda s, i, src: s.index_add(1, i, src), M, idx, M[:, :4])  # bool: any
    same(lambda s, i, src: s.index_copy(1, i, src), F, idx, F[:, 1:])  # repeated: the last wins
    same(lambda s, i, v: s.t().index_fill(0, i, v), I, np.array([-1, 0, -1]), np.array(7, np.int32))
    same(lambda s, i: s.index_fill(-1, i, True), M, np.array([4, -5]))


def test_index_put_accumulate_repeated():
    i0 = np.array([1, 3, 1, 1, 0])
    same(lambda s, i, v: s.index_put((i,), v, accumulate=True), F, i0, F[0], exact=False)
    same(lambda s, i, v: s.index_put((None, i), v, accumulate=True), I.astype(np.int64), i0[:3], I[:, :3].astype(
        np.int64))
    same(lambda s, i, v: s.index_put((i, i), v, accumulate=True), I.astype(np.int16), i0, I[0].astype(np.int16))
    same(lambda s, i, v: s.index_put((i,), v, accumulate=True), M, i0, M[0])


def test_index_advanced_layouts():
    x = RNG.standard_normal((3, 4, 5))
    same(lambda s, a, b: s[a, :, b], x, np.array([[0], [2]]), np.array([4, -1, 0]))  # block first
    same(lambda s, a, b: s.transpose(0, 2)[:, a, b], x, np.array([3, 0], np.int32), np.array([[1], [2]]))
    same(lambda s, m: s[:, m], x, RNG.random((4, 5)) < 0.5)
    same(lambda s, m, a: s[m, a], x, np.array([True, False, True]), np.array([1, 3]))
    same(lambda s, a, v: s.index_put((None, a, a), v), x, np.array([0, 3]), RNG.standard_normal((3, 1)))


def test_masks_and_nonzero():
    same(lambda s, m: s.t().masked_select(m), I, M.T[:, 2:3].copy())
    same(lambda s, m, src: s.masked_scatter(m, src.t()), F[:, :1], M, F)
    same(lambda s, m: s.masked_fill(m, 2.7), I, M[0])
    same(lambda s, m: s.t().masked_fill(m.t(), False), M, M)
    x = F.copy()
    x[1, 2] = np.nan
    x[0] = 0
    same(lambda s: s.t().nonzero(), x)
    same(lambda s: s.argwhere(), I.astype(np.int8) * M)
    same(lambda s: s.nonzero(), np.array(False))
    same_error(lambda s, m: s.masked_scatter(m, s[:1]), F, np.ones((4, 5), bool))


def test_take_and_take_along_dim():
    same(lambda s, i: s.t().take(i), I, np.array([[19, -20], [0, 7]]))
    same(lambda s, i: toolkit.take_along_dim(s.t(), i, -2), F, np.array([[4, -1, 0, -7]]))
    same(lambda s, i: toolkit.take_along_dim(s, i), M, np.array([3, 19]))


@pytest.mark.parametrize("case", ["index", "index_put", "scatter", "scatter_add", "gather_along", "index_add",
                                  "index_copy", "index_fill", "take", "take_along_dim"])
def test_out_of_range_raises_cpu_error(case):
    bad = np.array([0, 5, -7])
    fn = {
        "index": lambda s, i: s[:, i],
        "index_put": lambda s, i: s.index_put((i,), toolkit.zeros((), dtype=s.dtype, device=s.device)),
        "scatter": lambda s, i: s.scatter(1, i.reshape(1, 3), 1.0),
        "scatter_add": lambda s, i: s.scatter_add(0, i.reshape(1, 3), s),
        "gather_along": lambda s, i: toolkit.take_along_dim(s, i),
        "index_add": lambda s, i: s.index_add(0, i, s[:1].expand(3, 5)),
        "index_copy": lambda s, i: s.index_copy(1, i, s[:, :3]),
        "index_fill": lambda s, i: s.index_fill(0, i, 1.0),
        "take": lambda s, i: s.take(i * 5),
        "take_along_dim": lambda s, i: toolkit.take_along_dim(s, i.reshape(1, 3) - 20),
    }[case]
    same_error(fn, F, bad if case != "gather_along" else bad * 5)


def test_errors_match_cpu():
    same_error(lambda s, i: s.index_put((i,), s[0].int()), F, np.array([0]))
    same_error(lambda s, i: s.scatter(0, i, s.int()), F, DUP)
    same_error(lambda s, m: s[m], F, M[:, :4])
    same_error(lambda s, i: s[i], F, np.array([1.0]))
    same_error(lambda s, m: s.masked_fill(m, 1.0), F, I)


def test_python_indexing_syntax_on_cuda_tensors():
    a, b = toolkit.tensor(F), toolkit.tensor(F).cuda()
    m = a > 0
    i = toolkit.tensor([3, 0, 3])
    for x, mm, ii in ((a, m, i), (b, m.cuda(), i.cuda())):
        x[mm] = 0.5
        x[ii, 1:] += 1
        x[[0, 2], [4, 4]] = toolkit.tensor([7.0, 8.0], device=x.device)
        x[ii.cpu()] *= 2  # a CPU index tensor, as PyTorch allows for CUDA tensors
    np.testing.assert_array_equal(b.cpu().numpy(), a.numpy())
    np.testing.assert_array_equal(b[m.cuda()].cpu().numpy(), a[m].numpy())
    np.testing.assert_array_equal(b[[1, 1], None, True].cpu().numpy(), a[[1, 1], None, True].numpy())
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        b[toolkit.tensor([4], device="cuda")]


def test_index_backward_accumulates_on_device():
    x = toolkit.tensor(F).cuda().requires_grad_()
    i = toolkit.tensor([1, 1, 3], device="cuda")
    (x[i] * 2).sum().backward()
    assert x.grad.is_cuda
    want = np.zeros_like(F)
    np.add.at(want, [1, 1, 3], 2.0)
    np.testing.assert_allclose(x.grad.cpu().numpy(), want)
