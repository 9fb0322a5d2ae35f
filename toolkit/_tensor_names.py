"""The Tensor's named-dimension API (``names``, ``rename``, ``refine_names``, ``align_to``), as PyTorch's.

Names are metadata: renaming gives a view sharing storage and autograd history; the rules that name op outputs
live with each op (``OpDef.name_rule``) and ``toolkit.dispatch.names``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._core import names as _n


class TensorNames:
    """Mixin of ``Tensor``: named dimensions."""

    __slots__ = ()

    @property
    def names(self) -> tuple:
        """A name (str) or None per dimension: ``('N', 'C', None)``."""
        return _n.full_names(self)

    @names.setter
    def names(self, names) -> None:
        _n.set_names(self, _n.check_names(names, self.ndim))

    def has_names(self) -> bool:
        return _n.names_of(self) is not None

    def _alias(self):
        with _n.names_off():
            return self.view(self.shape)

    def rename(self, *names, **rename_map):
        """A view with new names: positional names (``'...'`` keeps the names it covers), or ``old=new`` pairs;
        ``rename(None)`` drops them."""
        out = self._alias()
        out.names = _renamed(self, names, rename_map)
        return out

    def rename_(self, *names, **rename_map):
        self.names = _renamed(self, names, rename_map)
        return self

    def refine_names(self, *names):
        """A view whose unnamed dims take the given names (named dims must keep theirs)."""
        out = self._alias()
        out.names = _n.refine(self.names, _flat(names))
        return out

    def align_to(self, *names):
        """A view with dims permuted to ``names`` order, and a size-one dim for each name the tensor lacks."""
        order, new = _n.align_order(self.names, _flat(names))
        with _n.names_off():
            out = self.permute([i for i in order if i is not None])
            for pos, i in enumerate(order):
                if i is None:
                    out = out.unsqueeze(pos)
        out.names = new
        return out

    def align_as(self, other):
        return self.align_to(*other.names)


def _flat(names: Sequence) -> tuple:
    return tuple(names[0]) if len(names) == 1 and isinstance(names[0], (list, tuple)) else tuple(names)


def _renamed(t, names: tuple, rename_map: dict):
    if names and rename_map:
        raise RuntimeError("rename: only one of positional and keyword arguments may be given")
    if rename_map:
        current = list(t.names)
        for old, new in rename_map.items():
            current[_n.dim_of(_n.names_of(t), t.ndim, old)] = new
        return current
    if names == (None,) or not names:
        return None
    return _n.expand_ellipsis(_flat(names), t.names, "rename")
