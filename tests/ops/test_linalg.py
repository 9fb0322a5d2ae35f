"""Linear algebra against PyTorch: products, einsum, norms, inverse/det/solve, cholesky, qr, svd, eigh."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops import registry

from ..conftest import assert_close, to_torch


def _pair(shape, rng, dtype=np.float32, requires_grad=False):
    a = rng.standard_normal(shape).astype(dtype)
    t = toolkit.tensor(a, requires_grad=requires_grad)
    return t, to_torch(t, requires_grad)


def _spd(n, rng, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# ---------------------------------------------------------------------------------------------
# products
# ---------------------------------------------------------------------------------------------
MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
                 ((3,), (5, 3, 2)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)),
                 ((0, 3), (3, 2)), ((2, 0), (0, 3))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_cases_values_and_grads(sa, sb, rng):
    a, ta = _pair(sa, rng, np.float64, True)
    b, tb = _pair(sb, rng, np.float64, True)
    out, expected = a @ b, ta @ tb
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_close(a.grad, ta.grad)
    assert_close(b.grad, tb.grad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_matmul_dtypes(dtype, rng):
    a = (rng.standard_normal((4, 3)) * 3).astype(dtype)
    b = (rng.standard_normal((3, 2)) * 3).astype(dtype)
    assert_close(toolkit.matmul(toolkit.tensor(a), toolkit.tensor(b)), torch.matmul(torch.tensor(a), torch.tensor(b)))
    assert_close(toolkit.mm(toolkit.tensor(a), toolkit.tensor(b)), torch.mm(torch.tensor(a), torch.tensor(b)))


def test_matmul_non_contiguous_and_rmatmul(rng):
    a, ta = _pair((4, 3), rng)
    b, tb = _pair((2, 4), rng)
    assert_close(a.mT @ b.mT, ta.mT @ tb.mT)
    assert_close(np.ones((2, 4), np.float32) @ a, torch.from_numpy(np.ones((2, 4), np.float32)) @ ta)


@pytest.mark.parametrize("fn,sa,sb,msg", [
    ("matmul", (2, 3), (4, 5), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ("matmul", (3,), (4,), r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
    ("matmul", (2, 3), (4,), r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"),
    ("matmul", (6, 2, 3), (5, 3, 5), r"The size of tensor a \(6\) must match the size of tensor b \(5\)"),
    ("matmul", (6, 2, 3), (6, 4, 5), r"batch2 tensor to be: \[6, 3\] but got: \[6, 4\]"),
    ("matmul", (), (3,), r"both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    ("mm", (3,), (3, 2), "self must be a matrix"),
    ("bmm", (2, 2, 3), (2, 4, 5), r"batch2 tensor to be: \[2, 3\] but got: \[2, 4\]"),
    ("bmm", (2, 3), (2, 3, 1), "batch1 must be a 3D tensor"),
    ("dot", (2, 3), (3,), "1D tensors expected, but got 2D and 1D tensors"),
    ("mv", (2, 3), (3, 1), "vector \\+ matrix @ vector expected, got 1, 2, 2"),
    ("outer", (2, 3), (3,), "outer: Expected 1-D argument self, but got 2-D"),
])
def test_product_errors_match_torch(fn, sa, sb, msg):
    args = [np.ones(sa, np.float32), np.ones(sb, np.float32)]
    with pytest.raises(RuntimeError, match=msg):
        getattr(torch, fn)(*map(torch.from_numpy, args))
    with pytest.raises(RuntimeError, match=msg):
        getattr(toolkit, fn)(*map(toolkit.tensor, args))


def test_dtype_mismatch_errors():
    f, d = toolkit.ones(2, 3), toolkit.ones(3, 4, dtype=toolkit.float64)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"):
        toolkit.mm(f, d)
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype, but found Float and Double"):
        toolkit.dot(toolkit.ones(3), toolkit.ones(3, dtype=toolkit.float64))
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        toolkit.mm(toolkit.ones(2, 2, dtype=toolkit.bool), toolkit.ones(2, 2, dtype=toolkit.bool))


def test_dot_mv_outer_ger(rng):
    x, tx = _pair(4, rng)
    y, ty = _pair(4, rng)
    m, tm = _pair((3, 4), rng)
    assert_close(toolkit.dot(x, y), torch.dot(tx, ty))
    assert_close(x.dot(y), tx.dot(ty))
    assert_close(toolkit.vdot(x, y), torch.vdot(tx, ty))
    assert_close(toolkit.mv(m, x), torch.mv(tm, tx))
    assert_close(toolkit.outer(x, y), torch.outer(tx, ty))
    assert_close(toolkit.ger(x, y), torch.ger(tx, ty))
    ints = toolkit.arange(3)
    assert_close(toolkit.outer(ints, x), torch.outer(torch.arange(3), tx))  # promotes like PyTorch


@pytest.mark.parametrize("fn,shapes", [
    ("addmm", [(4,), (2, 3), (3, 4)]), ("baddbmm", [(2, 1, 4), (2, 2, 3), (2, 3, 4)]),
    ("addmv", [(2,), (2, 3), (3,)]),
])
@pytest.mark.parametrize("kw", [{}, {"beta": 0.5, "alpha": -2.0}, {"beta": 0}])
def test_add_products(fn, shapes, kw, rng):
    pairs = [_pair(s, rng, np.float64, True) for s in shapes]
    out = getattr(toolkit, fn)(*[p[0] for p in pairs], **kw)
    expected = getattr(torch, fn)(*[p[1] for p in pairs], **kw)
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    for a, ta in pairs:
        assert_close(a.grad, ta.grad)


def test_addmm_inplace_and_errors(rng):
    s, ts = _pair((2, 4), rng)
    a, ta = _pair((2, 3), rng)
    b, tb = _pair((3, 4), rng)
    s.addmm_(a, b, alpha=2.0)
    ts.addmm_(ta, tb, alpha=2.0)
    assert_close(s, ts)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match the existing size \(3\)"):
        toolkit.addmm(toolkit.ones(3), a, b)
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got Double and Float"):
        toolkit.addmm(toolkit.ones(2, 4, dtype=toolkit.float64), a, b)


# ---------------------------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------------------------
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("i,i->", [(3,), (3,)]), ("i,j->ij", [(3,), (2,)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]), ("i...->...", [(2, 3, 2)]), ("...i,...i", [(2, 1, 3), (4, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 4)]), ("i,ij->j", [(1,), (3, 2)]), ("iij->j", [(2, 2, 3)]),
    ("Ab,bC->AC", [(2, 3), (3, 2)]), (" ij , jk -> ik ", [(2, 3), (3, 2)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_values_and_grads(eq, shapes, rng):
    pairs = [_pair(s, rng, np.float64, True) for s in shapes]
    out = toolkit.einsum(eq, *[p[0] for p in pairs])
    expected = torch.einsum(eq, *[p[1] for p in pairs])
    assert_close(out, expected)
    assert_close(toolkit.einsum(eq, [p[0] for p in pairs]), expected)
    w = rng.standard_normal(tuple(expected.shape))
    (out * toolkit.tensor(w)).sum().backward()
    (expected * torch.from_numpy(w)).sum().backward()
    for a, ta in pairs:
        assert_close(a.grad, ta.grad)


def test_einsum_result_owns_memory_and_ints(rng):
    a = toolkit.tensor(rng.standard_normal((2, 3)))
    t = toolkit.einsum("ij->ji", a)
    assert not np.shares_memory(t.numpy(), a.numpy())
    i = toolkit.arange(6).reshape(2, 3)
    assert_close(toolkit.einsum("ij,kj->ik", i, i), torch.einsum("ij,kj->ik", torch.arange(6).reshape(2, 3),
                                                                 torch.arange(6).reshape(2, 3)))


@pytest.mark.parametrize("eq,shapes,msg", [
    ("ij,jk", [(2, 3), (4, 5)], "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
    ("ij,jk", [(2, 3)], "fewer operands were provided than specified in the equation"),
    ("ijk", [(2, 3)], r"the number of subscripts in the equation \(3\) does not match the number of dimensions \(2\)"),
    ("ij->ik", [(2, 3)], "output subscript k does not appear in the equation for any input operand"),
])
def test_einsum_errors(eq, shapes, msg):
    with pytest.raises(RuntimeError, match=msg):
        torch.einsum(eq, *[torch.ones(s) for s in shapes])
    with pytest.raises(RuntimeError, match=msg):
        toolkit.einsum(eq, *[toolkit.ones(s) for s in shapes])


def test_einsum_double_backward(rng):
    a = toolkit.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = toolkit.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda x, y: toolkit.einsum("ij,jj,kj->ik", x, y, x), (a, b))


# ---------------------------------------------------------------------------------------------
# norms
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args,kw", [
    ((), {}), ((3,), {}), ((math.inf,), {"dim": 1}), ((-math.inf,), {"dim": (0, 1), "keepdim": True}),
    ((0,), {"dim": -1}), ((1,), {}), ((0.5,), {"dim": 0}), ((2,), {"dtype": toolkit.float64}),
])
def test_vector_norm(args, kw, rng):
    x, tx = _pair((3, 4), rng, np.float64, True)
    out = toolkit.linalg.vector_norm(x, *args, **kw)
    expected = torch.linalg.vector_norm(tx, *args, **to_torch(kw))
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((2, 0), True)])
def test_matrix_norm(ord, dim, keepdim, rng):
    x, tx = _pair((3, 4, 2), rng, np.float64, True)
    out = toolkit.linalg.matrix_norm(x, ord, dim, keepdim)
    expected = torch.linalg.matrix_norm(tx, ord, dim, keepdim)
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad)


@pytest.mark.parametrize("shape,args,kw", [
    ((3, 4), (), {}), ((2, 3, 4), (), {}), ((4,), (3,), {}), ((3, 4), (2,), {}), ((3, 4), ("nuc",), {}),
    ((3, 4), (math.inf,), {"dim": 0}), ((2, 3, 4), (None, (0, 2)), {"keepdim": True}), ((3, 4), ("fro",), {}),
])
def test_norm(shape, args, kw, rng):
    x, tx = _pair(shape, rng)
    assert_close(toolkit.linalg.norm(x, *args, **kw), torch.linalg.norm(tx, *args, **kw), accum=x.numel())


@pytest.mark.parametrize("fn,args,kw,msg", [
    ("norm", [(3, 3, 3)], {"ord": 2}, "If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    ("matrix_norm", [(3, 3)], {"ord": 3}, "linalg.matrix_norm: Order 3 not supported."),
    ("matrix_norm", [(3,)], {}, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    ("norm", [(3, 3)], {"dim": (0, 1, 2)}, r"If dim is specified, it must be of length 1 or 2. Got \[0, 1, 2\]"),
    ("vector_norm", [(0, 3)], {"ord": math.inf}, "cannot compute the inf norm on an empty tensor"),
])
def test_norm_errors(fn, args, kw, msg):
    with pytest.raises(RuntimeError, match=msg):
        getattr(torch.linalg, fn)(*[torch.ones(s) for s in args], **kw)
    with pytest.raises(RuntimeError, match=msg):
        getattr(toolkit.linalg, fn)(*[toolkit.ones(s) for s in args], **kw)


def test_norm_int_input_error():
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"):
        toolkit.linalg.vector_norm(toolkit.arange(3))


# ---------------------------------------------------------------------------------------------
# inverse, det, solve
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["linalg.inv", "inverse", "linalg.det", "det", "linalg.slogdet", "slogdet", "logdet"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_square_functions(name, dtype, rng):
    a = _spd(3, rng, (2,)).astype(dtype)
    x, tx = toolkit.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    mod, _, fn = name.rpartition(".")
    out = getattr(toolkit.linalg if mod else toolkit, fn)(x)
    expected = getattr(torch.linalg if mod else torch, fn)(tx)
    assert_close(out, expected, accum=3)
    if isinstance(expected, tuple):
        assert out.logabsdet is out[1] and type(out).__name__ == type(expected).__name__
        out, expected = out.logabsdet, expected.logabsdet
    out.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad, accum=3)


def test_inverse_method_and_errors():
    assert_close(toolkit.eye(2).inverse(), torch.eye(2).inverse())
    with pytest.raises(toolkit.linalg.LinAlgError, match="linalg.inv: The diagonal element 2 is zero"):
        toolkit.linalg.inv(toolkit.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 1 is zero"):
        toolkit.linalg.inv(toolkit.stack([toolkit.eye(2), toolkit.zeros(2, 2)]))
    with pytest.raises(RuntimeError, match="linalg.inv: Expected a floating point or complex tensor as input. Got Long"):
        toolkit.inverse(toolkit.ones(2, 2, dtype=toolkit.int64))
    with pytest.raises(RuntimeError, match="linalg.det: A must be batches of square matrices, but they are 2 by 3"):
        toolkit.det(toolkit.ones(2, 3))
    assert issubclass(toolkit.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("sa,sb,left", [((3, 3), (3,), True), ((3, 3), (3, 2), True), ((2, 3, 3), (3, 2), True),
                                        ((2, 3, 3), (2, 3), True), ((3, 3), (4, 3, 1), True), ((3, 3), (2, 3), False)])
def test_solve(sa, sb, left, rng):
    a = rng.standard_normal(sa) + 3 * np.eye(sa[-1])
    A, tA = toolkit.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    B, tB = _pair(sb, rng, np.float64, True)
    out, expected = toolkit.linalg.solve(A, B, left=left), torch.linalg.solve(tA, tB, left=left)
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_close(A.grad, tA.grad)
    assert_close(B.grad, tB.grad)


def test_solve_errors():
    with pytest.raises(toolkit.linalg.LinAlgError, match="linalg.solve: The solver failed because the input matrix is singular."):
        toolkit.linalg.solve(toolkit.ones(2, 2), toolkit.ones(2))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(2x2 and 3x1\)"):
        toolkit.linalg.solve(toolkit.eye(2), toolkit.ones(3))
    with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype, but found A of type Float and B"):
        toolkit.linalg.solve(toolkit.eye(2), toolkit.ones(2, dtype=toolkit.float64))


# ---------------------------------------------------------------------------------------------
# cholesky, qr, svd, eigh
# ---------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("fn", ["linalg.cholesky", "cholesky"])
def test_cholesky(fn, upper, rng):
    a = _spd(3, rng, (2,))
    x, tx = toolkit.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    mod, _, name = fn.rpartition(".")
    expected = getattr(torch.linalg if mod else torch, name)(tx, upper=upper)
    out = getattr(toolkit.linalg if mod else toolkit, name)(x, upper=upper)
    assert_close(out, expected)
    w = rng.standard_normal(a.shape)
    (out * toolkit.tensor(w)).sum().backward()
    (expected * torch.from_numpy(w)).sum().backward()
    assert_close(x.grad, tx.grad)


def test_cholesky_not_positive_definite():
    bad = [[1.0, 2.0], [2.0, 1.0]]
    msg = ("linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
           r"\(the leading minor of order 2 is not positive-definite\).")
    with pytest.raises(toolkit.linalg.LinAlgError, match=msg):
        toolkit.linalg.cholesky(toolkit.tensor(bad))
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The factorization could not be completed"):
        toolkit.linalg.cholesky(toolkit.stack([toolkit.eye(2), toolkit.tensor(bad)]))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 4, 2), (2, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode, rng):
    x, tx = _pair(shape, rng, np.float64, True)
    out, expected = toolkit.linalg.qr(x, mode=mode), torch.linalg.qr(tx, mode=mode)
    assert type(out).__name__ == "linalg_qr" and out._fields == ("Q", "R")
    assert_close(out, expected)
    if mode == "r" or (mode == "complete" and shape[-2] > shape[-1]):
        return
    w = [rng.standard_normal(tuple(e.shape)) for e in expected]
    sum((o * toolkit.tensor(v)).sum() for o, v in zip(out, w)).backward()
    sum((e * torch.from_numpy(v)).sum() for e, v in zip(expected, w)).backward()
    assert_close(x.grad, tx.grad)


def test_qr_backward_errors(rng):
    x = toolkit.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q, which is not computed when mode='r'"):
        toolkit.linalg.qr(x, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        toolkit.linalg.qr(x, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'bad'"):
        toolkit.linalg.qr(x, mode="bad")


@pytest.mark.parametrize("shape,full", [((4, 3), False), ((3, 3), True), ((2, 4, 2), False), ((3, 4), True)])
def test_linalg_svd(shape, full, rng):
    x, tx = _pair(shape, rng, np.float64, True)
    U, S, Vh = toolkit.linalg.svd(x, full_matrices=full)
    tU, tS, tVh = torch.linalg.svd(tx, full_matrices=full)
    assert [tuple(t.shape) for t in (U, S, Vh)] == [tuple(t.shape) for t in (tU, tS, tVh)]
    assert_close(S, tS)
    k = S.shape[-1]
    assert_close((U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], tx.detach())
    # sign-invariant loss: |U|, |Vh| and S
    loss = U.narrow(-1, 0, k).abs().sum() + S.sum() + Vh.narrow(-2, 0, k).abs().sum()
    tloss = tU[..., :k].abs().sum() + tS.sum() + tVh[..., :k, :].abs().sum()
    loss.backward()
    tloss.backward()
    assert_close(x.grad, tx.grad)


def test_svd_legacy_and_svdvals(rng):
    x, tx = _pair((4, 3), rng, np.float64)
    out, expected = toolkit.svd(x), torch.svd(tx)
    assert out._fields == ("U", "S", "V")
    assert_close(out.S, expected.S)
    assert_close(out.V.abs(), expected.V.abs())
    assert [tuple(t.shape) for t in toolkit.svd(x, some=False)] == [(4, 4), (3,), (3, 3)]
    no_uv = toolkit.svd(x, compute_uv=False)
    assert_close(no_uv.U, torch.svd(tx, compute_uv=False).U)
    assert_close(toolkit.linalg.svdvals(x), torch.linalg.svdvals(tx))
    assert toolkit.linalg.svd(x.float()).S.dtype is toolkit.float32


def test_eigh(rng):
    a = _spd(3, rng, (2,))
    x, tx = toolkit.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    L, V = toolkit.linalg.eigh(x)
    tL, tV = torch.linalg.eigh(tx)
    assert_close(L, tL)
    assert_close(V.abs(), tV.abs())
    assert_close(toolkit.linalg.eigvalsh(x), torch.linalg.eigvalsh(tx))
    (L.sum() + V.abs().sum()).backward()
    (tL.sum() + tV.abs().sum()).backward()
    assert_close(x.grad, tx.grad)
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        toolkit.linalg.eigh(x, UPLO="X")


@pytest.mark.parametrize("fn", ["qr", "svd", "eigh", "cholesky", "inv", "det", "solve"])
def test_decompositions_keep_float32_and_reject_ints(fn, rng):
    a = _spd(2, rng).astype(np.float32)
    args = (toolkit.tensor(a),) + ((toolkit.ones(2),) if fn == "solve" else ())
    out = getattr(toolkit.linalg, fn)(*args)
    for t in out if isinstance(out, tuple) else (out,):
        assert t.dtype is toolkit.float32
    ints = (toolkit.ones(2, 2, dtype=toolkit.int64),) + ((toolkit.ones(2, dtype=toolkit.int64),) if fn == "solve" else ())
    with pytest.raises(RuntimeError, match=f"linalg.{fn}: Expected a floating point or complex tensor as input. Got Long"):
        getattr(toolkit.linalg, fn)(*ints)


def test_linalg_namespace_lists_registry_ops():
    names = {o.function for o in registry.all_ops() if o.namespace == "linalg"}
    assert {"norm", "vector_norm", "matrix_norm", "inv", "det", "slogdet", "solve", "cholesky", "qr", "svd",
            "svdvals", "eigh", "eigvalsh"} <= names
    for n in names:
        assert callable(getattr(toolkit.linalg, n))


def test_multi_dot_and_vecdot(rng):
    a, ta = _pair(3, rng)
    b, tb = _pair((3, 4), rng)
    c, tc = _pair(4, rng)
    assert_close(toolkit.linalg.multi_dot([a, b, c]), torch.linalg.multi_dot([ta, tb, tc]), accum=3 * 4)
    assert_close(toolkit.linalg.vecdot(b, b), torch.linalg.vecdot(tb, tb), accum=4)


# ---------------------------------------------------------------------------------------------
# solves, LU, pseudo-inverses and the _ex variants
# ---------------------------------------------------------------------------------------------
def _both(a, requires_grad=False):
    return toolkit.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


def test_triangular_solves_and_old_api(rng):
    a = np.tril(rng.standard_normal((2, 3, 3))) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    (ta, xa), (tb, xb) = _both(a, True), _both(b, True)
    out = toolkit.linalg.solve_triangular(ta, tb, upper=False)
    expected = torch.linalg.solve_triangular(xa, xb, upper=False)
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_close(ta.grad, xa.grad)
    assert_close(tb.grad, xb.grad)
    sol, coef = toolkit.triangular_solve(tb, ta, upper=False, transpose=True)
    esol, ecoef = torch.triangular_solve(xb, xa, upper=False, transpose=True)
    assert_close(sol, esol)
    assert_close(coef, ecoef)
    assert type(toolkit.triangular_solve(tb, ta)).__name__ == "triangular_solve"


def test_cholesky_solve_and_inverse(rng):
    low = np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    b = rng.standard_normal((2, 3, 2))
    (tl, xl), (tb, xb) = _both(low), _both(b)
    assert_close(tb.cholesky_solve(tl), xb.cholesky_solve(xl))
    assert_close(toolkit.cholesky_solve(tb, tl.mT, upper=True), torch.cholesky_solve(xb, xl.mT, upper=True))
    assert_close(tl.cholesky_inverse(), xl.cholesky_inverse())
    assert_close(toolkit.cholesky_inverse(tl.mT, upper=True), torch.cholesky_inverse(xl.mT, upper=True))


def test_lu_family(rng):
    a = rng.standard_normal((2, 4, 4))
    ta, xa = _both(a)
    LU, piv = toolkit.linalg.lu_factor(ta)
    eLU, epiv = torch.linalg.lu_factor(xa)
    assert_close(LU, eLU)
    assert_close(piv, epiv)
    for shape in ((4, 3), (3, 4)):
        r = rng.standard_normal(shape)
        assert_close(toolkit.linalg.lu(toolkit.tensor(r)), torch.linalg.lu(torch.tensor(r)))
        assert_close(toolkit.lu_unpack(*toolkit.linalg.lu_factor(toolkit.tensor(r))),
                     torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(r))))
    _, _, info = toolkit.linalg.lu_factor_ex(toolkit.zeros(2, 3, 3))
    assert info.tolist() == torch.linalg.lu_factor_ex(torch.zeros(2, 3, 3)).info.tolist()
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        toolkit.linalg.lu_factor(toolkit.zeros(3, 3))
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        toolkit.linalg.lu_factor(ta, pivot=False)
    b = rng.standard_normal((4, 2))
    tb, xb = _both(b)
    assert_close(toolkit.linalg.lu_solve(LU, piv, tb, adjoint=True), torch.linalg.lu_solve(eLU, epiv, xb, adjoint=True))
    assert_close(tb.lu_solve(LU, piv), xb.lu_solve(eLU, epiv))


def test_lu_grads(rng):
    a = rng.standard_normal((3, 3))
    ta, xa = _both(a, True)
    out = sum(t.sum() for t in toolkit.linalg.lu(ta)[1:])
    expected = sum(t.sum() for t in torch.linalg.lu(xa)[1:])
    out.backward()
    expected.backward()
    assert_close(ta.grad, xa.grad)


def test_ex_variants(rng):
    a = _spd(3, rng, (2,))
    ta, xa = _both(a)
    assert_close(toolkit.linalg.inv_ex(ta), torch.linalg.inv_ex(xa))
    assert_close(toolkit.linalg.cholesky_ex(ta, upper=True), torch.linalg.cholesky_ex(xa, upper=True))
    b = rng.standard_normal((3, 1))
    assert_close(toolkit.linalg.solve_ex(ta, toolkit.tensor(b)), torch.linalg.solve_ex(xa, torch.tensor(b)))
    bad = -np.eye(3)
    assert toolkit.linalg.cholesky_ex(toolkit.tensor(bad)).info.item() == torch.linalg.cholesky_ex(
        torch.tensor(bad)).info.item()
    assert toolkit.linalg.inv_ex(toolkit.zeros(2, 2)).info.item() == torch.linalg.inv_ex(torch.zeros(2, 2)).info.item()
    with pytest.raises(RuntimeError, match="linalg.inv_ex"):
        toolkit.linalg.inv_ex(toolkit.zeros(2, 2), check_errors=True)


@pytest.mark.parametrize("kw", [{}, {"atol": 1e-3}, {"rtol": 0.5}, {"hermitian": True}])
def test_pinv_matrix_rank_cond(kw, rng):
    a = rng.standard_normal((2, 4, 2)) @ rng.standard_normal((2, 2, 4))
    if kw.get("hermitian"):
        a = a @ np.swapaxes(a, -1, -2)
    ta, xa = _both(a)
    assert_close(toolkit.linalg.pinv(ta, **kw), torch.linalg.pinv(xa, **kw), atol=1e-8, rtol=1e-6)
    assert_close(toolkit.linalg.matrix_rank(ta, **kw), torch.linalg.matrix_rank(xa, **kw))
    sq = rng.standard_normal((3, 3)) + 2 * np.eye(3)
    for p in (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"):
        assert_close(toolkit.linalg.cond(toolkit.tensor(sq), p), torch.linalg.cond(torch.tensor(sq), p))
    assert_close(toolkit.tensor(sq).pinverse(), torch.tensor(sq).pinverse())
    with pytest.raises(RuntimeError, match="expected a tensor with 2 or more dimensions of float"):
        toolkit.linalg.pinv(toolkit.ones(2, 2, dtype=toolkit.int64))


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_drivers(driver, rng):
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    (ta, xa), (tb, xb) = _both(a, True), _both(b, True)
    out = toolkit.linalg.lstsq(ta, tb, driver=driver)
    expected = torch.linalg.lstsq(xa, xb, driver=driver)
    assert_close(out, expected)
    out.solution.sum().backward()
    expected.solution.sum().backward()
    assert_close(ta.grad, xa.grad)
    assert_close(tb.grad, xb.grad)
    with pytest.raises(RuntimeError, match="parameter `driver` should be one of"):
        toolkit.linalg.lstsq(ta, tb, driver="foo")


def test_vander_diagonal_tensorinv_tensorsolve(rng):
    x = rng.standard_normal((2, 3))
    assert_close(toolkit.linalg.vander(toolkit.tensor(x), N=4), torch.linalg.vander(torch.tensor(x), N=4))
    assert_close(toolkit.linalg.vander(toolkit.arange(3)), torch.linalg.vander(torch.arange(3)))
    t = toolkit.tensor(rng.standard_normal((2, 3, 4)))
    d = toolkit.linalg.diagonal(t, offset=1)
    assert_close(d, torch.linalg.diagonal(torch.tensor(t.numpy()), offset=1))
    d.mul_(0)
    assert t[:, 0, 1].abs().sum().item() == 0  # a view
    a = (rng.standard_normal((6, 6)) + 3 * np.eye(6)).reshape(2, 3, 6)
    assert_close(toolkit.linalg.tensorinv(toolkit.tensor(a)), torch.linalg.tensorinv(torch.tensor(a)))
    b = rng.standard_normal((2, 3))
    assert_close(toolkit.linalg.tensorsolve(toolkit.tensor(a), toolkit.tensor(b)),
                 torch.linalg.tensorsolve(torch.tensor(a), torch.tensor(b)))
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind'"):
        toolkit.linalg.tensorinv(toolkit.tensor(a), ind=0)


def test_householder_product_from_geqrf(rng):
    a = torch.tensor(rng.standard_normal((2, 4, 3)))
    qr, tau = torch.geqrf(a)
    out = toolkit.linalg.householder_product(toolkit.tensor(qr.numpy()), toolkit.tensor(tau.numpy()))
    assert_close(out, torch.linalg.householder_product(qr, tau))
    assert_close(toolkit.tensor(qr.numpy()).orgqr(toolkit.tensor(tau.numpy())), qr.orgqr(tau))


def test_ldl_factor_and_solve(rng):
    a = rng.standard_normal((2, 4, 4))
    a = a + np.swapaxes(a, -1, -2)
    ta, xa = _both(a)
    LD, piv = toolkit.linalg.ldl_factor(ta)
    eLD, epiv = torch.linalg.ldl_factor(xa)
    assert_close(LD, eLD)
    assert_close(piv, epiv)
    b = rng.standard_normal((4, 2))
    assert_close(toolkit.linalg.ldl_solve(LD, piv, toolkit.tensor(b)), torch.linalg.ldl_solve(eLD, epiv, torch.tensor(b)))
    assert toolkit.linalg.ldl_factor_ex(toolkit.zeros(2, 2)).info.item() == 1


def test_new_linalg_ops_reject_integers():
    ints = toolkit.ones(3, 3, dtype=toolkit.int64)
    for fn in (toolkit.linalg.matrix_exp, toolkit.linalg.inv_ex, toolkit.linalg.cholesky_ex, toolkit.linalg.lu_factor,
               toolkit.linalg.ldl_factor, toolkit.linalg.cond, toolkit.linalg.matrix_rank):
        with pytest.raises((RuntimeError, NotImplementedError)):
            fn(ints)


def test_old_solve_apis_warn_as_torch(rng):
    a = toolkit.tensor(np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3))
    b = toolkit.tensor(rng.standard_normal((3, 2)))
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        toolkit.triangular_solve(b, a, upper=False)
    LU, piv = toolkit.linalg.lu_factor(a)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        toolkit.lu_solve(b, LU, piv)
