"""``DeviceType``: where a profiled event ran.

Its own module because both the events and the text table that summarizes them compare against it,
and the events import the table.
"""

from __future__ import annotations

import enum


class DeviceType(enum.Enum):
    """Where an event ran (PyTorch's ``torch.autograd.DeviceType``)."""

    CPU = 0
    CUDA = 1
