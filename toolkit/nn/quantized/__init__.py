"""``toolkit.nn.quantized``: the old name of ``toolkit.ao.nn.quantized``, as ``torch.nn.quantized`` is of
``torch.ao.nn.quantized``; the same classes (``toolkit.nn.quantized.Linear is toolkit.ao.nn.quantized.Linear``)."""

import importlib

from ...ao.nn.quantized import *  # noqa: F401, F403
from ...ao.nn.quantized import __all__  # noqa: F401


def __getattr__(name: str):
    if name == "dynamic":
        return importlib.import_module("toolkit.ao.nn.quantized.dynamic")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
