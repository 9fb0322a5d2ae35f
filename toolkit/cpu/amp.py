"""``toolkit.cpu.amp``, PyTorch's deprecated ``torch.cpu.amp``: ``autocast`` and ``GradScaler`` warn and forward
to ``toolkit.amp`` with ``device_type="cpu"``."""

from __future__ import annotations

from ..amp._legacy import CpuAutocast as autocast
from ..amp._legacy import CpuGradScaler as GradScaler

__all__ = ["GradScaler", "autocast"]
