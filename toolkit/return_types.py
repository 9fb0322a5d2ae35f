"""Named tuples that ops with several outputs return, as ``torch.return_types`` has them.

``x.max(1)`` returns ``toolkit.return_types.max(values=..., indices=...)``: a
tuple (so ``v, i = x.max(1)`` unpacks) whose fields also read by name.
"""

from __future__ import annotations

from collections import namedtuple


def structseq(name: str, fields: tuple[str, ...]) -> type:
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


max = structseq("max", ("values", "indices"))  # noqa: A001
min = structseq("min", ("values", "indices"))  # noqa: A001
aminmax = structseq("aminmax", ("min", "max"))
sort = structseq("sort", ("values", "indices"))
topk = structseq("topk", ("values", "indices"))
median = structseq("median", ("values", "indices"))
mode = structseq("mode", ("values", "indices"))
kthvalue = structseq("kthvalue", ("values", "indices"))
frexp = structseq("frexp", ("mantissa", "exponent"))
nanmedian = structseq("nanmedian", ("values", "indices"))
cummax = structseq("cummax", ("values", "indices"))
cummin = structseq("cummin", ("values", "indices"))
histogram = structseq("histogram", ("hist", "bin_edges"))
histogramdd = structseq("histogramdd", ("hist", "bin_edges"))

__all__ = ["max", "min", "aminmax", "sort", "topk", "median", "mode", "kthvalue"]
__all__ += ["nanmedian", "cummax", "cummin", "histogram"]
