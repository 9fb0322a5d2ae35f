"""Matrices built from vectors or read out of matrices, as torch.linalg names them: linalg.vander,
linalg.diagonal.

``linalg.diagonal`` is ``diagonal`` with the last two dims as its defaults (a view); ``linalg.vander``
has increasing powers, ``x^0`` first, as PyTorch's (unlike numpy's default).
"""

from __future__ import annotations

from .._core.meta import TensorMeta
from . import api
from ._linalg_checks import _dtype
from .registry import LINALG, VIEW, op
from .view_parts import diag_view, diagonal_geometry  # view_parts registers the view family in order


def _vander_check(x, N):
    n = x.shape[-1] if len(x.shape) else 1
    cols = n if N is None else N
    if len(x.shape) == 0 or cols <= 1:
        raise RuntimeError("N must be greater than 1.")
    return TensorMeta(tuple(x.shape) + (cols,), _dtype(x), x.device), cols


@op("linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor", kind=LINALG, out=False, namespace="linalg", function="vander",
    method=False, composite=True)
def linalg_vander(x, N=None):
    """Vandermonde matrix of the last dim: ``out[..., i, j] = x[..., i] ** j`` for ``j < N``.

    As PyTorch composes it: ``cumprod`` of a row of ones followed by ``N - 1`` copies of ``x``.
    """
    meta, cols = _vander_check(x, N)
    col = x.unsqueeze(-1)
    powers = api.cat([api.ones_like(col), col.expand(tuple(x.shape) + (cols - 1,))], -1).cumprod(-1)
    return powers.to(meta.dtype)


linalg_vander.meta_rule(lambda x, N=None: _vander_check(x, N)[0])


@linalg_vander.grad
def _(grad, x, N):
    _, cols = _vander_check(x, N)
    lower = api.linalg_vander(x, N=cols - 1) if cols > 2 else api.ones_like(x).unsqueeze(-1)
    k = api.arange(1, cols, dtype=grad.dtype)
    return (grad.narrow(-1, 1, cols - 1) * k * lower).sum(-1)


@linalg_vander.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r(3),), {}
    yield (r((2, 3)),), {"N": 4}
    yield (r(2),), {"N": 2}


@op("linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)", kind=VIEW,
    namespace="linalg", function="diagonal", method=False, grad_fn="DiagonalBackward0")
def linalg_diagonal(A, offset=0, dim1=-2, dim2=-1):
    """The diagonals of a batch of matrices (a view): ``diagonal`` over the last two dims by default."""
    return diag_view(A, offset, dim1, dim2)


@linalg_diagonal.meta_rule
def _(A, offset=0, dim1=-2, dim2=-1):
    return TensorMeta(diagonal_geometry(tuple(A.shape), offset, dim1, dim2)[3], _dtype(A), A.device)


@linalg_diagonal.grad
def _(grad, A_shape, offset, dim1, dim2):
    return api.diagonal_backward(grad, A_shape, offset, dim1, dim2)


@linalg_diagonal.sample_inputs
def _(rng):
    x = rng.standard_normal((2, 3, 4))
    yield (x,), {}
    yield (x,), {"offset": 1}
    yield (x,), {"offset": -1, "dim1": 0, "dim2": 2}
