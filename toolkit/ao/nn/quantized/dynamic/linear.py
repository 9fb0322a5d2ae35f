"""The dynamically quantized linear layer, as ``torch.ao.nn.quantized.dynamic.Linear``: an int8 weight packed
with its float bias; each call quantizes the float input from its own min and max (7-bit, as PyTorch's x86
engine does for this module) and returns float32::

    fc = nn.Linear(20, 30)
    fc.qconfig = default_dynamic_qconfig
    qfc = Linear.from_float(fc)
    qfc(x)              # x (..., 20) float32 -> (..., 30) float32
    qfc.weight()        # the qint8 weight; qfc.bias() the float bias
"""

from __future__ import annotations

from ..... import nn
from ....._core import dtypes as _dt
from .....ops import quantized_linear as _ql
from .....tensor import Tensor
from ....quantization import _qtypes
from ... import intrinsic as nni
from ..modules import linear as nnq
from ..modules.linear import LinearPackedParams
from ._packed import quantize_weight, weight_observer_factory

__all__ = ["Linear", "LinearPackedParams"]


class Linear(nnq.Linear):
    """``y = x W^T + b`` with an int8 ``W``: float input quantized on the fly, float output. The static
    ``Linear``'s weight, state dict and repr (as PyTorch's dynamic Linear subclasses it); ``scale``/``zero_point``
    (1.0, 0) are kept only for that state dict's layout, and ``version`` says whether the input is quantized to
    7 bits (version 4 on, PyTorch's x86 rule)."""

    _version = 4

    def __init__(self, in_features: int, out_features: int, bias_: bool = True, dtype=_qtypes.qint8) -> None:
        if dtype is _dt.float16:
            raise NotImplementedError("toolkit's dynamic quantized Linear stores int8 weights only, not float16")
        super().__init__(in_features, out_features, bias_, dtype=dtype)
        self.version = 4

    def _get_name(self) -> str:
        return "DynamicQuantizedLinear"

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}")

    def forward(self, x: Tensor) -> Tensor:
        reduce_range = self.version is not None and self.version >= 4
        return _ql.linear_dynamic(x, self._packed_params._packed_params, reduce_range)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        self.version = local_metadata.get("version", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> Linear:
        """The dynamic twin of a float ``nn.Linear`` carrying a ``qconfig``: its weight observed by a fresh
        ``qconfig.weight()`` and quantized (per tensor or per channel), packed with its float bias."""
        float_modules = [nn.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear, nni.LinearReLU]
        if type(mod) not in float_modules:
            raise AssertionError("nn.quantized.dynamic.Linear.from_float only works for one of"
                                 f"{[m.__name__ for m in float_modules]}, got {type(mod)}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if type(mod) is nni.LinearReLU:
            mod = mod[0]  # the linear: its qconfig and weight (a fused subclass adds the ReLU)
        factory = weight_observer_factory(
            mod, AssertionError, "The only supported dtypes for dynamic quantized linear are qint8 and float16, "
            "got: {}")
        qlinear = cls(mod.in_features, mod.out_features, dtype=_qtypes.qint8)
        qlinear.set_weight_bias(quantize_weight(mod.weight, factory), mod.bias)
        return qlinear
