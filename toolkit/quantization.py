"""``toolkit.quantization``: the older name of :mod:`toolkit.ao.quantization`, kept as PyTorch keeps
``torch.quantization``: the same names, and the same submodules (``toolkit.quantization.qconfig``...)."""

from .ao.quantization import *  # noqa: F401, F403
from .ao.quantization import (  # noqa: F401
    fake_quantize,
    fuser_method_mappings,
    observer,
    qconfig,
    quantization_mappings,
    stubs,
)
from .ao.quantization import fuse_modules, quantize  # noqa: F401  (functions, as torch.quantization's names are)
