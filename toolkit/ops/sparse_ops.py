"""Ops that exist for sparse tensors only: their definitions, whose kernels live under the sparse dispatch keys.

Each is defined here once, as every op is; its ``cpu`` kernel is what a strided tensor gets, PyTorch's
refusal, and ``toolkit.sparse`` registers the ``"sparse_cpu"`` kernel that computes it
(``@R.get("hspmm").kernel("sparse_cpu")``). Sparse kernels are compositions of registered ops on the
values, so these ops record no derivative of their own (``differentiable=False``): autograd follows the
parts, and the gradient reaching a sparse leaf keeps its pattern::

    toolkit.hspmm(s, d)   # aten::hspmm: a hybrid sparse tensor
"""

from __future__ import annotations

from .linalg import mm as _mm
from .registry import CONVERSION, LINALG, NN, REDUCTION, op, refuses_names
from .sparse_coo import strided_refusal

_TESTED_ELSEWHERE = ("The generated comparisons feed strided tensors, which these ops refuse; tests/sparse checks them on "
                     "sparse tensors against PyTorch.")


def _not_coalescable(*args):
    raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")


_OPTIONS = {"method": False, "function": False, "differentiable": False}
_DEFS = (
    ("hspmm(Tensor mat1, Tensor mat2) -> Tensor", LINALG,
     "Sparse times dense as a hybrid sparse tensor: one sparse dim over the rows with entries."),
    ("_sparse_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", NN,
     "Softmax over the specified entries along ``dim`` (unspecified ones count as ``-inf``)."),
    ("_sparse_log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", NN,
     "Log-softmax over the specified entries along ``dim`` (unspecified ones count as ``-inf``)."),
)
for _schema, _kind, _doc in _DEFS:
    _name = _schema.split("(")[0].split(".")[0]
    op(_schema, kind=_kind, doc=_doc, **_OPTIONS)(strided_refusal(_name)).tested_elsewhere(_TESTED_ELSEWHERE)

# Ops a strided tensor answers with the coalesce refusal, as PyTorch's do.
for _schema, _kind, _doc in (
    ("coalesce(Tensor(a) self) -> Tensor(a)", CONVERSION, "Sorted unique indices, duplicate entries summed."),
    ("_sparse_sum(Tensor self) -> Tensor", REDUCTION, "The sum of every element of a sparse tensor (0-d, dense)."),
    ("_sparse_sum.dim(Tensor self, int[1] dim) -> Tensor", REDUCTION,
     "The sum over ``dim``: sparse while sparse dims remain, dense when all are summed."),
    ("_sparse_sum.dtype(Tensor self, *, ScalarType dtype) -> Tensor", REDUCTION,
     "The sum of every element, computed in ``dtype``."),
    ("_sparse_sum.dim_dtype(Tensor self, int[1] dim, *, ScalarType dtype) -> Tensor", REDUCTION,
     "The sum over ``dim``, computed in ``dtype``."),
):
    op(_schema, kind=_kind, doc=_doc, **_OPTIONS)(_not_coalescable).tested_elsewhere(_TESTED_ELSEWHERE)



def _smm_refusal(*args):
    raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")


op("smm(Tensor self, Tensor mat2) -> Tensor", kind=LINALG, doc="Sparse times dense with a sparse result.",
   **_OPTIONS)(_smm_refusal).tested_elsewhere(_TESTED_ELSEWHERE)


@op("_sparse_mm(Tensor sparse, Tensor dense) -> Tensor", kind=LINALG, method=False, function=False)
def _sparse_mm(sparse, dense):
    """``toolkit.sparse.mm``: a sparse matrix times a dense one (or two sparse ones); two strided matrices
    multiply as ``mm``'s do."""
    return _mm.kernels["cpu"](sparse, dense)


_sparse_mm.meta_rule(lambda sparse, dense: _mm.meta(sparse, dense))


@_sparse_mm.grad
def _(grad, sparse, dense):
    # The strided call's derivative (a sparse one records its kernel's parts instead).
    return grad.mm(dense.t()), sparse.t().mm(grad)


@_sparse_mm.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 4)), rng.standard_normal((4, 2))), {}

# ``to_dense`` of a sparse tensor; a strided tensor's ``to_dense`` is the Tensor method (itself).
op("to_dense(Tensor self, ScalarType? dtype=None, *, bool? masked_grad=None) -> Tensor", kind=CONVERSION,
   doc="The strided tensor with a sparse tensor's elements (duplicates summed).", **_OPTIONS)(
    strided_refusal("to_dense")).tested_elsewhere(_TESTED_ELSEWHERE)

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("_sparse_sum.dim",))
