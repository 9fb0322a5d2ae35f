"""``toolkit.layout`` and its values (``toolkit.strided``...): how a tensor's elements are laid out in memory.

Every toolkit tensor is strided (a numpy array over its storage); the sparse and blocked layouts exist as names so
code that passes or compares them (``t.layout == toolkit.strided``, ``zeros(..., layout=toolkit.strided)``) runs::

    toolkit.zeros(2).layout        # toolkit.strided
"""

from __future__ import annotations

from .named import Named


class layout(Named):  # noqa: N801  (PyTorch's name)
    """One memory layout, printed as PyTorch prints it (``toolkit.strided``); one object per layout."""

    __slots__ = ()

    def __reduce__(self):
        return (_by_name, (self.name,))


layout.__module__ = "toolkit"

strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")
_mkldnn = layout("_mkldnn")

_NAMES = {lay.name: lay for lay in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged,
                                    _mkldnn)}


def _by_name(name: str) -> layout:
    return _NAMES[name]
