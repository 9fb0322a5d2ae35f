"""``toolkit.ao.nn.intrinsic.quantized.dynamic``: ``LinearReLU`` with int8 weights and float activations quantized
per call (``quantized::linear_relu_dynamic``), which ``quantize_dynamic`` gives ``nni.LinearReLU``."""

from toolkit.ao.nn.quantized.dynamic import Linear
from toolkit.ops import quantized_linear as _ql

from ... import LinearReLU as _FusedLinearReLU


class LinearReLU(Linear):
    """``relu(linear(x))`` with float input and output, the activation quantized with a reduced range."""

    _FLOAT_MODULE = _FusedLinearReLU

    def forward(self, x):
        return _ql.linear_relu_dynamic(x, self._packed_params._packed_params, True).to(x.dtype)

    def _get_name(self) -> str:
        return "DynamicQuantizedLinearReLU"


__all__ = ["LinearReLU"]
