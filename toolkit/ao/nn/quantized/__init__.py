"""``toolkit.ao.nn.quantized``: static int8 modules, quint8 activations in and out, as ``torch.ao.nn.quantized``
(``convert`` swaps them in through their ``from_float``): ``Linear``, ``Conv2d``, ``ReLU6``, ``Quantize``,
``DeQuantize``, ``FloatFunctional``/``FXFloatFunctional``/``QFunctional``. ``dynamic`` (int8 weights, float
activations) loads on first use::

    qfc = toolkit.ao.nn.quantized.Linear.from_float(observed_fc)
    qfc(toolkit.quantize_per_tensor(x, 0.05, 64, toolkit.quint8))   # quint8 out, qfc.scale / qfc.zero_point
"""

import importlib

from .modules import *  # noqa: F401, F403
from .modules import __all__  # noqa: F401


def __getattr__(name: str):
    if name == "dynamic":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
