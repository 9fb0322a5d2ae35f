"""``toolkit.ao.nn``: the modules quantization swaps in, as ``torch.ao.nn`` names them: ``quantized`` (int8
modules), ``quantized.dynamic`` (int8 weights, float activations), ``intrinsic`` (fused sequences such as
conv-bn-relu) and ``qat`` (modules that fake-quantize while they train). Each subpackage loads on first use."""

import importlib

_SUBPACKAGES = frozenset({"quantized", "intrinsic", "qat"})


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
