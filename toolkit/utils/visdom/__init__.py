"""``toolkit.utils.visdom``: the ``SummaryWriter`` logging calls, sent to a visdom server for live plots."""

from .writer import VisdomWriter

__all__ = ["VisdomWriter"]
