"""``torch.lu`` and ``Tensor.lu``: the deprecated LU entry points, over ``linalg.lu_factor_ex``.

PyTorch writes ``torch.lu`` in Python (``torch/functional.py``) on top of
``aten::_lu_with_info``, which is ``lu_factor_ex`` that only checks its
arguments (a singular matrix reports itself in ``info``, it does not raise).
Both are compositions here, so autograd comes from ``lu_factor_ex``.
"""

from __future__ import annotations

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from ..return_types import structseq
from . import api
from .lu import linalg_lu_factor_ex
from .registry import LINALG, op

_LU_WITH_INFO = structseq("_lu_with_info", ("LU", "pivots", "info"))


@op("_lu_with_info(Tensor self, bool pivot=True, bool check_errors=True) -> (Tensor LU, Tensor pivots, "
    "Tensor info)", kind=LINALG, out=False, autocast="fp32", method=False, composite=True)
def _lu_with_info(self, pivot=True, check_errors=True):
    """``linalg.lu_factor_ex(self, pivot=pivot)``: packed LU, 1-based int32 pivots and int32 ``info``."""
    LU, pivots, info = api.linalg_lu_factor_ex(self, pivot=pivot, check_errors=False)
    return _LU_WITH_INFO(LU, pivots, info)


_lu_with_info.return_type = _LU_WITH_INFO


def _factor_meta(self, pivot):
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("linalg.lu_factor: The input tensor A must have at least 2 dimensions.")
    batch, k = shape[:-2], min(shape[-2:])
    return (TensorMeta(shape, self.dtype, self.device), TensorMeta(batch + (k,), _dt.int32, self.device),
            TensorMeta(batch, _dt.int32, self.device))


@_lu_with_info.meta_rule
def _(self, pivot=True, check_errors=True):
    return _factor_meta(self, pivot)


@op("lu(Tensor self, bool pivot=True, bool get_infos=False) -> Tensor[]", kind=LINALG, out="any", composite=True)
def lu(self, pivot=True, get_infos=False):
    """The LU factorization of ``self`` (a matrix or a batch): ``(LU, pivots)``, with ``infos`` too when
    ``get_infos`` (then the result is the ``_lu_with_info`` named tuple, as PyTorch returns).

    >>> LU, pivots = toolkit.lu(toolkit.tensor([[1.0, 2.0], [3.0, 4.0]]))
    """
    result = _lu_with_info(self, pivot=pivot, check_errors=not get_infos)
    if get_infos:
        return result
    return result[0], result[1]


@lu.meta_rule
def _(self, pivot=True, get_infos=False):
    metas = _factor_meta(self, pivot)
    return list(metas if get_infos else metas[:2])


# The same derivative as ``lu_factor_ex`` (through ``LU``; pivots and info are integers).
_lu_with_info.grad(linalg_lu_factor_ex.derivative)
lu.grad(linalg_lu_factor_ex.derivative)


def _samples(rng):
    yield (rng.standard_normal((3, 3)),), {}
    yield (rng.standard_normal((2, 3, 3)),), {}


_lu_with_info.sample_inputs(_samples)
lu.sample_inputs(_samples)
