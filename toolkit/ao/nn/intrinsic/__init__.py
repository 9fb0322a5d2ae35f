"""``toolkit.ao.nn.intrinsic``: fused module sequences (conv-bn-relu, linear-relu, ...) that quantization treats as
one unit, as ``torch.ao.nn.intrinsic`` defines them; ``qat`` holds their quantization-aware-training versions."""

import importlib

from .modules import *  # noqa: F401, F403
from .modules import __all__, _FusedModule  # noqa: F401


def __getattr__(name: str):
    if name in ("qat", "quantized"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
