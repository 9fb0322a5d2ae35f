"""``toolkit.func``: function transforms over modules, as ``torch.func`` (``functional_call``)."""

from .functional_call import functional_call

__all__ = ["functional_call"]
