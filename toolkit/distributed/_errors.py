"""The errors of toolkit.distributed, in their own module so that every other one (groups, works) can import them."""

from __future__ import annotations

__all__ = ["DistBackendError", "DistError"]


class DistError(RuntimeError):
    """Base of the errors raised by toolkit.distributed (as ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """The communication backend failed: a timeout, an aborted group, a rank that left, an MPI error."""


# Printed and pickled under the public name, as torch.distributed.DistBackendError is.
DistError.__module__ = DistBackendError.__module__ = "toolkit.distributed"
