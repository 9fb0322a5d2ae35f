"""``toolkit.quantization``: the older name of :mod:`toolkit.ao.quantization`, kept as PyTorch keeps
``torch.quantization``: the same names, and the same submodules (``toolkit.quantization.qconfig``...), importable
by those names too (``from toolkit.quantization.observer import MinMaxObserver``): each is registered in
``sys.modules`` under this module's name, as the same module object as its ``toolkit.ao.quantization`` original."""

import sys

from .ao import quantization as _quantization
from .ao.quantization import *  # noqa: F401, F403
from .ao.quantization import (  # noqa: F401  (fuse_modules and quantize: functions, as torch.quantization's are)
    fake_quantize,
    fuse_modules,
    fuser_method_mappings,
    observer,
    qconfig,
    quant_type,
    quantization_mappings,
    quantize,
    stubs,
    utils,
)
from .ao.quantization.quantization_mappings import (  # noqa: F401  (torch.quantization names these too)
    DEFAULT_MODULE_TO_ACT_POST_PROCESS,
    DEFAULT_QAT_MODULE_MAPPINGS,
)

for _module in (fake_quantize, fuser_method_mappings, observer, qconfig, quant_type, quantization_mappings, stubs,
                utils, sys.modules[f"{_quantization.__name__}.fuse_modules"],
                sys.modules[f"{_quantization.__name__}.quantize"]):
    sys.modules.setdefault(f"{__name__}.{_module.__name__.rpartition('.')[2]}", _module)
del _module


def __getattr__(name: str):
    # the DEFAULT_*_MODULE_MAPPINGS constants, built on first access
    if name in _quantization.quantization_mappings.LAZY_NAMES:
        return getattr(_quantization, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
