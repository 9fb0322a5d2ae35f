"""CUDA shape ops beyond the registry samples: strided inputs, negative dims, int/bool dtypes, errors, autograd."""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit.ops import api

from .helpers import needs_cuda, pair, same, same_error

pytestmark = needs_cuda

RNG = np.random.default_rng(0)
F = RNG.standard_normal((4, 6)).astype(np.float32)
I = RNG.integers(-5, 5, (4, 6)).astype(np.int32)
B = RNG.random((4, 6)) < 0.5


def test_cat_strided_mixed_dtypes_and_negative_dim():
    same(lambda a, b: toolkit.cat([a.t(), b.t()[:, ::2]], dim=-1), F, I)  # float32 + int32 -> float32
    same(lambda a, b: toolkit.cat([a, b], -2), I, B)  # int32 + bool -> int32
    same(lambda a, b: toolkit.concat([a[::2], b[1:3]]), B, B)
    same(lambda a: toolkit.concatenate([toolkit.zeros(0, dtype=a.dtype, device=a.device), a[:, 1]]), F)


def test_stack_family_strided():
    same(lambda a, b: toolkit.stack([a.t(), b.t()], -1), F, I)
    same(lambda a: toolkit.hstack([a[:, ::2], a[:, 1::2]]), B)
    same(lambda a: toolkit.vstack([a[0], a[1:, :].t().t()]), I)
    same(lambda a: toolkit.dstack([a, a.flip(0)]), F)


def test_flip_roll_strided():
    same(lambda a: a.t().flip([-1, 0]), F)
    same(lambda a: a[:, ::2].fliplr(), I)
    same(lambda a: a.t().flipud(), B)
    same(lambda a: a.t().roll((-7, 2), (0, -1)), I)
    same(lambda a: a[1:].roll(5), F)  # flattened


def test_repeat_tile_interleave():
    same(lambda a: a.t().repeat(2, 1, 3), B)
    same(lambda a: a[:, ::3].tile((2,)), I)
    same(lambda a: a.t().repeat_interleave(2, dim=-2), F)
    same(lambda a, r: a.t().repeat_interleave(r, dim=1), I, np.array([0, 3, 1, 2], np.int32))
    same(lambda a, r: a.repeat_interleave(r), B[:2, :2], np.array([2]))
    same(lambda r: toolkit.repeat_interleave(r), np.array([3, 0, 2], np.int32))


def test_repeat_interleave_errors():
    same_error(lambda a, r: a.repeat_interleave(r, dim=0), F, np.array([1, -1, 2, 0]))
    same_error(lambda a, r: a.repeat_interleave(r, dim=0, output_size=3), F, np.array([1, 1, 2, 0]))
    same_error(lambda a, r: a.repeat_interleave(r, dim=0), F, np.array([1.0, 2.0, 1.0, 1.0]))
    same_error(lambda a, r: a.repeat_interleave(r, dim=0), F, np.array([1, 2]))


def test_triangles_batched_strided():
    x = RNG.integers(0, 9, (2, 4, 5))
    same(lambda a: a.transpose(0, 2).tril(1), x)
    same(lambda a: a[:, ::2].triu(-1), x > 4)
    same_error(lambda a: a.tril(), F[0])


def test_inplace_triangle_on_view():
    cpu, dev = pair(F)
    for t in cpu + dev:
        t[1:].triu_(1)
    np.testing.assert_array_equal(dev[0].cpu().numpy(), cpu[0].numpy())


def test_diagonals():
    same(lambda a: toolkit.diag(a.t(), -2), I)
    same(lambda a: toolkit.diag(a[0, ::2], 1), B)
    same(lambda a: toolkit.diag_embed(a.t(), -1, 0, -1), F)
    same(lambda g: api.diagonal_backward(g.t(), [4, 3, 6], 1, -1, 0), RNG.standard_normal((3, 3)))


def test_unfold_backward_overlapping_windows():
    g = RNG.standard_normal((4, 3, 3))
    same(lambda a: api.unfold_backward(a, [4, 5], 1, 3, 1), g)  # windows overlap: sums
    same(lambda a: api.unfold_backward(a.transpose(0, 1), [8, 3], 0, 3, 3), g[:3, :2])


def test_select_and_slice_scatter():
    src = RNG.standard_normal((6, 2))
    same(lambda a, s: toolkit.slice_scatter(a.t(), s, -1, 0, None, 2), F, src)
    same(lambda a, s: toolkit.select_scatter(a, s[:4, 1], -1, -2), F.astype(np.float64), src)
    same_error(lambda a, s: toolkit.slice_scatter(a, s, 0, 0, 4, 2), F, src)


def test_view_dtype_shares_device_memory():
    x = toolkit.tensor(F).cuda()
    v = x.view(toolkit.int32)
    assert v.is_cuda and v.dtype == toolkit.int32
    np.testing.assert_array_equal(v.cpu().numpy(), F.view(np.int32))
    np.testing.assert_array_equal(x[1:].view(toolkit.int16)[:, 3:7].cpu().numpy(), F[1:].view(np.int16)[:, 3:7])
    x.view(toolkit.int32)[0, 0] = 0  # writes through to x
    assert x[0, 0].item() == 0.0
    same_error(lambda a: a.t().view(toolkit.int16), F)


def test_shape_errors_match_cpu():
    same_error(lambda a, b: toolkit.cat([a, b.t()]), F, F)
    same_error(lambda a: a.flip(0, -2), F)
    same_error(lambda a: a.repeat(2), F)
    same_error(lambda a: toolkit.stack([a, a[1:]]), F)


def test_cat_of_cuda_tensors_backward():
    a = toolkit.tensor(F).cuda().requires_grad_()
    b = toolkit.tensor(F[:, :2]).cuda().requires_grad_()
    y = toolkit.cat([a, b], 1).flip(0).roll(1, 1) * toolkit.arange(8.0, device="cuda")
    y.sum().backward()
    assert a.grad.is_cuda
    ac = toolkit.tensor(F).requires_grad_()
    bc = toolkit.tensor(F[:, :2]).requires_grad_()
    (toolkit.cat([ac, bc], 1).flip(0).roll(1, 1) * toolkit.arange(8.0)).sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), ac.grad.numpy())
    np.testing.assert_allclose(b.grad.cpu().numpy(), bc.grad.numpy())
