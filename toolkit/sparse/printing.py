"""How a sparse COO tensor prints: its indices, values, size and nnz, laid out as PyTorch lays them out."""

from __future__ import annotations

_INDICES = "tensor(indices="
_VALUES = "       values="


def sparse_repr(t) -> str:
    """``tensor(indices=tensor([[...]]), values=tensor([...]), size=(3, 3), nnz=2, layout=toolkit.sparse_coo)``."""
    ind = repr(t._indices()).replace(", dtype=toolkit.int64", "")
    values = t._sp_values.detach()
    vals = repr(values)
    suffix = f"size={tuple(t.shape)}, nnz={t._nnz()}"
    dtype_note = f", dtype={t.dtype}"
    if dtype_note in vals:
        vals = vals.replace(dtype_note, "")
        suffix += dtype_note
    if values.numel() == 0 and "size=" not in vals:
        vals = vals[:-1] + f", size={tuple(values.shape)})"
    suffix += ", layout=toolkit.sparse_coo"
    if t.requires_grad and t.grad_fn is None:
        suffix += ", requires_grad=True"
    if t.grad_fn is not None:
        suffix += f", grad_fn=<{type(t.grad_fn).__name__}>"
    return (_INDICES + ind.replace("\n", "\n" + " " * len(_INDICES)) + ",\n" + _VALUES
            + vals.replace("\n", "\n" + " " * len(_VALUES)) + ",\n       " + suffix + ")")
