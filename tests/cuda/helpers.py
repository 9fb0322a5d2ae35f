"""Shared by the CUDA tests: the skip condition, host/device conversion of samples, CPU-vs-CUDA checks."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit

from ..conftest import assert_close

needs_cuda = pytest.mark.skipif(
    not toolkit.cuda.is_available(),
    reason="needs a GPU, or the simulator process started by tests/cuda/test_in_simulator.py",
)


def to_device(x, device: str):
    """Sample values (numpy arrays for tensors, nested in lists/tuples) as tensors on ``device``."""
    if isinstance(x, np.ndarray):
        return toolkit.tensor(x, device=device)
    if isinstance(x, list):
        return [to_device(e, device) for e in x]
    if isinstance(x, tuple):
        return tuple(to_device(e, device) for e in x)
    return x


def host(x):
    """Results as host numpy arrays (tensors copied back), nested as given."""
    if isinstance(x, toolkit.Tensor):
        assert x.device.type == ("cuda" if x.is_cuda else "cpu")
        return x.detach().cpu().numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(host(e) for e in x) if not hasattr(x, "_fields") else tuple(host(e) for e in x)
    return x


def pair(*arrays) -> tuple:
    """Each numpy array as a CPU tensor and as a CUDA tensor (same values): (cpu list, cuda list)."""
    cpu = [toolkit.tensor(a) for a in arrays]
    return cpu, [t.cuda() for t in cpu]


def same(fn, *arrays, exact: bool = True):
    """``fn`` on CPU and CUDA tensors made from ``arrays`` gives equal results (dtype, shape, values; when not
    ``exact``, as atomics add in any order, to the tolerance rule of tests/conftest.py for a slot that every
    element of the largest input may add into); returns the CUDA result."""
    cpu, dev = pair(*arrays)
    want, got = fn(*cpu), fn(*dev)
    assert got.is_cuda and got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    if exact:
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    else:
        assert_close(got.cpu(), want, accum=sample_accum(arrays))
    return got


def sample_accum(args) -> int:
    """The tolerance rule's accum for an op on ``args`` (numpy arrays, nested in lists/tuples) when its own is not
    known: the size of the largest array, as no output element accumulates more terms than an input has."""
    if isinstance(args, np.ndarray):
        return args.size
    if isinstance(args, (list, tuple)):
        return max((sample_accum(a) for a in args), default=1)
    return 1


def same_error(fn, *arrays) -> None:
    """``fn`` raises the same exception type and message on CUDA tensors as on CPU tensors."""
    cpu, dev = pair(*arrays)
    with pytest.raises(Exception) as want:
        fn(*cpu)
    with pytest.raises(want.type) as got:
        fn(*dev)
    assert str(got.value) == str(want.value)


def compare(a, b, name: str, accum: int = 1) -> None:
    """Host results ``b`` (CUDA) equal ``a`` (CPU), nested as given: same dtypes and shapes, values to the
    tolerance rule of tests/conftest.py for ``accum`` terms per element (see ``sample_accum``)."""
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), name
        for x, y in zip(a, b):
            compare(x, y, name, accum)
        return
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), f"{name}: CUDA gave {type(b)}"
        assert a.dtype == b.dtype and a.shape == b.shape, f"{name}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        assert_close(b, a, accum=accum, msg=name)
    else:
        assert a == b or (a != a and b != b), name


# ----------------------------------------------------------------------------- factors unique only up to sign
def _tol(a: np.ndarray) -> float:
    """The scale of the identity checks below (A = U diag(S) Vh, orthonormal columns, |u . u_cpu| = 1), times
    1e2 or 1e3 there: these check iterative factorizations (Jacobi sweeps) against themselves, not values
    against an oracle, so they keep bounds of their own rather than the tolerance rule."""
    return 1e-5 if a.dtype == np.float32 else 1e-10


def _same_vectors(got: np.ndarray, cpu: np.ndarray, vals: np.ndarray, name: str) -> None:
    """Columns of ``got`` equal the CPU's up to sign where their value is distinct from every other one
    (a repeated value's vectors are unique only up to a rotation, checked by the callers' identities)."""
    tol = _tol(got)
    k = vals.shape[-1]
    for j in range(min(k, got.shape[-1])):
        others = np.delete(vals, j, axis=-1)
        distinct = np.all(np.abs(others - vals[..., j:j + 1]) > 1e-6 * (1 + np.abs(vals[..., j:j + 1])), axis=-1)
        dots = np.abs(np.sum(got[..., :, j] * cpu[..., :, j], axis=-1))
        np.testing.assert_allclose(dots[distinct], 1.0, atol=1e3 * tol, err_msg=f"{name}: vector {j}")


def _orthonormal(q: np.ndarray, name: str) -> None:
    """The columns of ``q`` (..., r, c) are orthonormal."""
    eye = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, eye, atol=1e2 * _tol(q), err_msg=f"{name}: orthonormal")


def _svd_rule(args, kwargs, cpu, got, name):
    """Singular values as on the CPU; ``A = U diag(S) Vh`` with orthonormal U and V; distinct values' vectors
    the CPU's up to sign. ``torch.svd`` gives V, not Vh; without ``compute_uv`` U and V are zeros, compared as
    they are."""
    a = args[0]
    u, s, v = got
    cu, cs, cv = cpu
    compare(cs, s, name, accum=a.shape[-2] * a.shape[-1])  # Jacobi sweeps over the whole matrix
    if name == "svd" and not kwargs.get("compute_uv", args[2] if len(args) > 2 else True):
        compare((cu, cv), (u, v), name)
        return
    if name != "svd":  # Vh -> V
        v, cv = np.swapaxes(v, -1, -2), np.swapaxes(cv, -1, -2)
    for x, y in ((cu, u), (cv, v)):
        assert x.dtype == y.dtype and x.shape == y.shape, f"{name}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
    k = s.shape[-1]
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ np.swapaxes(v[..., :, :k], -1, -2)
    np.testing.assert_allclose(rebuilt, a, atol=1e2 * _tol(a), err_msg=f"{name}: A = U diag(S) Vh")
    _orthonormal(u, name)
    _orthonormal(v, name)
    _same_vectors(u[..., :, :k], cu[..., :, :k], s, name)
    _same_vectors(v[..., :, :k], cv[..., :, :k], s, name)


def _eigh_rule(args, kwargs, cpu, got, name):
    """Eigenvalues as on the CPU; ``A V = V diag(w)`` for the symmetric part of A, orthonormal V; distinct
    eigenvalues' vectors the CPU's up to sign."""
    a = args[0]
    sym = (a + np.swapaxes(a, -1, -2)) / 2
    w, v = got
    compare(cpu[0], w, name, accum=a.shape[-2] * a.shape[-1])  # Jacobi sweeps over the whole matrix
    assert cpu[1].dtype == v.dtype and cpu[1].shape == v.shape, f"{name}: {v.dtype}{v.shape}"
    np.testing.assert_allclose(sym @ v, v * w[..., None, :], atol=1e2 * _tol(a), err_msg=f"{name}: A V = V diag(w)")
    _orthonormal(v, name)
    _same_vectors(v, cpu[1], w, name)


# Ops compared by a rule of their own: their vectors are unique only up to sign (and up to a rotation for
# repeated values), and Jacobi iterations pick other signs than LAPACK, as PyTorch's CPU and CUDA may.
UP_TO_SIGN = {"linalg_svd": _svd_rule, "svd": _svd_rule, "linalg_eigh": _eigh_rule}
