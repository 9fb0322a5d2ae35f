"""``toolkit.quantization``: the older name of :mod:`toolkit.ao.quantization`, kept as PyTorch keeps
``torch.quantization``."""

from .ao.quantization import *  # noqa: F401, F403
from .ao.quantization import (  # noqa: F401
    fake_quantize,
    observer,
)
