"""Ready-made parametrizations: ``orthogonal``, ``weight_norm`` and ``spectral_norm`` (the modern forms).

Each registers a parametrization module with :func:`parametrize.register_parametrization`, so the tensor
lives in ``module.parametrizations.<name>`` (``original``, or ``original0`` / ``original1`` for weight norm's
magnitude and direction) and is recomputed on every access.

    >>> m = orthogonal(nn.Linear(5, 3))
    >>> Q = m.weight                      # Q @ Q.T == I
"""

from __future__ import annotations

from enum import Enum, auto

import numpy as np

import toolkit as api

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from .. import functional as F
from ..modules.conv import _ConvTransposeNd
from ..modules.module import Module
from . import parametrize
from ._module_hooks import add_raw_hook

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _eps(dtype) -> float:
    return float(np.finfo(api.empty(0, dtype=dtype).numpy().dtype).eps)


def _adjoint(x: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions."""
    return x.mT.conj() if x.is_complex() else x.mT


def _is_orthogonal(Q: Tensor, eps=None) -> bool:
    n, k = Q.size(-2), Q.size(-1)
    Id = api.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * _eps(Q.dtype)
    return api.allclose(_adjoint(Q) @ Q, Id, atol=eps)


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A's QR decomposition with the signs fixed so that diag(R) is positive."""
    Q, R = api.linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _geqrf(Q: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's ``geqrf`` of each matrix: R above the diagonal, the Householder vectors below, and ``tau``."""
    a = Q.detach().cpu().numpy().copy()
    a = a.reshape(-1, *a.shape[-2:])
    m, n = a.shape[-2:]
    taus = np.zeros((a.shape[0], min(m, n)), dtype=a.dtype)
    for b in range(a.shape[0]):
        A = a[b]
        for j in range(min(m, n)):
            alpha = A[j, j]
            xnorm = np.linalg.norm(A[j + 1:, j])
            if xnorm == 0:
                continue
            beta = -np.copysign(np.hypot(alpha, xnorm), alpha)
            taus[b, j] = (beta - alpha) / beta
            A[j + 1:, j] /= alpha - beta
            A[j, j] = beta
            v = np.concatenate([[1.0], A[j + 1:, j]]).astype(A.dtype)
            A[j:, j + 1:] -= taus[b, j] * np.outer(v, v @ A[j:, j + 1:])
    shape = tuple(Q.shape)
    out = api.tensor(a.reshape(shape), dtype=Q.dtype, device=Q.device)
    return out, api.tensor(taus.reshape(*shape[:-2], min(m, n)), dtype=Q.dtype, device=Q.device)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps an unconstrained matrix to an orthogonal one (matrix exponential, Cayley map or Householder)."""

    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == _OrthMaps.matrix_exp or self.orthogonal_map == _OrthMaps.cayley:
            X = X.tril()
            if n != k:
                X = api.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - _adjoint(X)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = api.matrix_exp(A)
            else:
                Id = api.eye(n, dtype=A.dtype, device=A.device)
                Q = api.linalg.solve(api.add(Id, A, alpha=-0.5), api.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = api.linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map == _OrthMaps.cayley or self.orthogonal_map == _OrthMaps.matrix_exp:
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                A, tau = _geqrf(Q)
                diag = A.diagonal(dim1=-2, dim2=-1)
                diag.sign_()
                diag[tau == 0.0] *= -1
                return A.mT if transpose else A
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:
                N = api.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(api.cat([Q, N], dim=-1))
            self.base = Q
            neg_Id = api.zeros_like(Q_init)
            neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_Id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal (or unitary)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """``(g, v) -> g * v / ||v||``; ``right_inverse`` splits a weight into its norm and itself."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / api.norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return api.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrise ``module.<name>`` by its magnitude (``original0``) and direction (``original1``).

    State dicts saved by the hook form (``<name>_g`` / ``<name>_v``) load into it.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs) -> None:
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    add_raw_hook(module._load_state_dict_pre_hooks, _weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """``W -> W / sigma(W)``, sigma from the power iteration kept in the buffers ``_u`` and ``_v``."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            with no_grad():
                u = weight_mat.new_empty(h).normal_(0, 1)
                v = weight_mat.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        """Update ``_u`` and ``_v`` in place (they are the state the next call continues from)."""
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(api.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(api.mv(_adjoint(weight_mat), self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = api.vdot(u, api.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm, re-estimated by power iteration on every access in
    training mode."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
