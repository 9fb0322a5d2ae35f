"""Named tuples that ops with several outputs return, as ``torch.return_types`` has them.

``x.max(1)`` returns ``toolkit.return_types.max(values=..., indices=...)``: a
tuple (so ``v, i = x.max(1)`` unpacks) whose fields also read by name.
"""

from __future__ import annotations

from collections import namedtuple


def _structseq(name: str, fields: tuple[str, ...]) -> type:
    """A tuple class with named fields that prints one field a line, like PyTorch's structseq."""
    base = namedtuple(name, fields)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"toolkit.return_types.{name}(\n{body})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__,
                               "n_fields": len(fields), "n_sequence_fields": len(fields),
                               "n_unnamed_fields": 0})
    cls.__qualname__ = name
    return cls


max = _structseq("max", ("values", "indices"))  # noqa: A001
min = _structseq("min", ("values", "indices"))  # noqa: A001
aminmax = _structseq("aminmax", ("min", "max"))
sort = _structseq("sort", ("values", "indices"))
topk = _structseq("topk", ("values", "indices"))
median = _structseq("median", ("values", "indices"))
mode = _structseq("mode", ("values", "indices"))
kthvalue = _structseq("kthvalue", ("values", "indices"))

__all__ = ["max", "min", "aminmax", "sort", "topk", "median", "mode", "kthvalue"]
