"""Automatic mixed precision, as ``torch.amp``: ``autocast`` regions, ``GradScaler``, ``custom_fwd``/``custom_bwd``.

Which ops autocast casts, and to what, is a fact on each op's registry definition (``autocast=`` of ``@op``),
read by the dispatcher; see :mod:`toolkit.amp.autocast_mode` and :mod:`toolkit.dispatch.autocast`.
"""

from __future__ import annotations

import sys

from .. import cuda as _cuda
from . import cuda_amp as _cuda_amp
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

# ``toolkit.cuda.amp`` (``import toolkit.cuda.amp`` too): defined here, above the device runtime it extends.
_cuda.amp = _cuda_amp
sys.modules[f"{_cuda.__name__}.amp"] = _cuda_amp
