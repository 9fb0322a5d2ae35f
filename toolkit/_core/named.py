"""Named singletons printed as PyTorch prints its own (``torch.strided``, ``torch.per_tensor_affine``): the base of
``toolkit.layout`` and ``toolkit.qscheme``, whose values are compared by identity and pickled by name."""

from __future__ import annotations


class Named:
    """One named value, printed ``toolkit.<name>``; a subclass keeps one object per name and pickles by name
    (its ``__reduce__`` names the module function that finds the object again)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"toolkit.{self.name}"
