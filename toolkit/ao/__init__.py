"""``toolkit.ao``: architecture optimization, as ``torch.ao``: its quantization tools and the modules they swap
in (``toolkit.ao.nn``, loaded on first use)."""

import importlib

from . import quantization  # noqa: F401


def __getattr__(name: str):
    if name == "nn":
        return importlib.import_module(f"{__name__}.nn")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
