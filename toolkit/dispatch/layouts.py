"""Calls with a sparse tensor argument: the op's kernel for that layout's dispatch key, or PyTorch's refusal.

A sparse layout is a kernel key beside the device, as in PyTorch's dispatcher: a sparse COO tensor on the
CPU selects ``op.kernels["sparse_cpu"]``, a CSR one ``op.kernels["sparse_csr_cpu"]``. The strided paths
send a call here when their one scan of the tensor arguments meets a sparse tensor (``SparseCall``). A
sparse kernel takes the bound arguments as they are (sparse tensors included) and returns finished tensors,
sparse or strided; it computes new values with registered ops, so autograd, the tracer and the profiler
follow its parts, while the profiler and the tracer see the call itself under the op's name::

    toolkit.mm(s, d)   # aten::mm with a SparseCPU argument: mm's "sparse_cpu" kernel
    toolkit.exp(s)     # NotImplementedError: Could not run 'aten::exp' with arguments from the 'SparseCPU' ...
"""

from __future__ import annotations

from ..ops import registry as R
from ..ops.registry import OpDef
from ..ops.sparse_coo import backend_refusal
from ..tensor import Tensor

# PyTorch's names of the backends the sparse dispatch keys stand for, as its errors print them.
BACKENDS = {"sparse_cpu": "SparseCPU", "sparse_csr_cpu": "SparseCsrCPU", "quantized_cpu": "QuantizedCPU",
            "cpu": "CPU"}


def unsupported(op: OpDef, key: str) -> NotImplementedError:
    """PyTorch's error for an op without a kernel for a dispatch key."""
    return backend_refusal(op.qualified_name + (f".{op.overload}" if op.overload else ""), BACKENDS.get(key, key))


def sparse_key(op: OpDef, bound: list) -> str | None:
    """The dispatch key of the first sparse tensor among the call's tensor arguments (None: all strided)."""
    for i in op.tensor_args:
        v = bound[i]
        if isinstance(v, Tensor):
            if v._sparse_key is not None:
                return v._sparse_key
        elif isinstance(v, (list, tuple)):
            for e in v:
                if isinstance(e, Tensor) and e._sparse_key is not None:
                    return e._sparse_key
    return None


def run_sparse(op: OpDef, bound: list):
    """Run ``op`` on arguments of which at least one is sparse."""
    key = sparse_key(op, bound)
    kernel = op.kernels.get(key)
    if kernel is None:
        raise unsupported(op, key)
    if op.kind is R.INPLACE and op.inplace_of is not None:
        return _inplace(op, kernel, bound)
    return kernel(*bound)


def _inplace(op: OpDef, kernel, bound: list):
    """``self.op_(...)`` through the functional op's sparse kernel (the two share their kernels): the result
    replaces a sparse ``self``'s entries, or is copied into a strided ``self`` (``dense.add_(sparse)``)."""
    self_t = bound[0]
    out = kernel(*bound)
    if tuple(out.shape) != tuple(self_t.shape):
        raise RuntimeError(f"{op.name}: output with shape {list(self_t.shape)} doesn't match the broadcast shape "
                           f"{list(out.shape)}")
    if self_t._sparse_key is None:
        return self_t.copy_(out)
    if out._sparse_key != self_t._sparse_key:
        raise RuntimeError(f"{op.name}: the result of a sparse tensor's in-place op must stay sparse")
    self_t._assign_sparse(out)
    return self_t
