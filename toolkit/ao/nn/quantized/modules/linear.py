"""The static quantized linear layer, as ``torch.ao.nn.quantized.Linear``: quint8 in, quint8 out, with an int8
weight packed once (``quantized::linear_prepack``) and the output's ``scale``/``zero_point`` from the observer
that watched the float layer's output::

    fc = nn.Linear(4, 3); fc.qconfig = qconfig; fc.activation_post_process = qconfig.activation()
    fc.activation_post_process(fc(calibration_batch))         # prepare and calibrate fill the observer
    qfc = Linear.from_float(fc)   # QuantizedLinear(in_features=4, out_features=3, scale=..., zero_point=..., ...)
    qfc(toolkit.quantize_per_tensor(x, 0.05, 64, toolkit.quint8))

The state dict is PyTorch's (version 3): ``scale``, ``zero_point``, ``_packed_params.dtype`` and
``_packed_params._packed_params`` (the ``(weight, bias)`` pair), so a PyTorch model's state dict, its tensors
carried over, loads as it is.
"""

from __future__ import annotations

from ..... import factories, nn
from ....._core import dtypes as _dt
from .....nn.utils.fusion import fuse_linear_bn_weights
from .....nn.utils.parametrize import type_before_parametrizations
from .....ops import api
from .....ops import quantized_linear as _ql
from .....tensor import Tensor
from ....quantization import _qtypes
from ...intrinsic import LinearReLU
from ...intrinsic.qat import LinearBn1d
from .utils import WeightedQuantizedModule, hide_packed_params_repr, quantize_weight

__all__ = ["LinearPackedParams", "Linear"]


class LinearPackedParams(nn.Module):
    """The packed int8 weight and float bias of a quantized linear layer (``_packed_params``, the packed object
    the ops read); in the state dict as ``dtype`` and ``_packed_params`` (the unpacked ``(weight, bias)``)."""

    _version = 3

    def __init__(self, dtype=_qtypes.qint8) -> None:
        super().__init__()
        self.dtype = dtype
        self.set_weight_bias(api._make_per_tensor_quantized_tensor(factories.zeros(1, 1, dtype=_dt.int8), 1.0, 0),
                             None)

    def set_weight_bias(self, weight: Tensor, bias: Tensor | None) -> None:
        if self.dtype is not _qtypes.qint8:
            raise RuntimeError("Unsupported dtype on quantized linear: toolkit packs qint8 weights only")
        self._packed_params = _ql.linear_prepack(weight, bias)

    def _weight_bias(self) -> tuple[Tensor, Tensor | None]:
        return _ql.linear_unpack(self._packed_params)

    def forward(self, x: Tensor) -> Tensor:
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            self.dtype = _qtypes.qint8
        else:
            self.dtype = state_dict.pop(prefix + "dtype")
        if version is None or version < 3:
            self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        else:
            self.set_weight_bias(*state_dict.pop(prefix + "_packed_params"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __repr__(self) -> str:
        return repr(self._weight_bias())


class Linear(WeightedQuantizedModule):
    """``y = x W^T + b`` on quantized tensors: a quint8 input (..., in_features), an int8 ``W``, a float ``b``,
    and a quint8 output with this module's ``scale`` and ``zero_point``."""

    _version = 3
    _FLOAT_MODULE = (nn.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear)

    def __init__(self, in_features: int, out_features: int, bias_: bool = True, dtype=_qtypes.qint8) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bias = factories.zeros(out_features) if bias_ else None
        if dtype is _dt.float16:
            raise NotImplementedError("toolkit's quantized Linear stores int8 weights only, not float16")
        if dtype is not _qtypes.qint8:
            raise RuntimeError("Unsupported dtype specified for quantized Linear!")
        qweight = api._make_per_tensor_quantized_tensor(factories.zeros(out_features, in_features, dtype=_dt.int8),
                                                        1.0, 0)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(qweight, bias)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self) -> str:
        return "QuantizedLinear"

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
                f"zero_point={self.zero_point}, qscheme={self.weight().qscheme()}")

    def __repr__(self) -> str:
        return hide_packed_params_repr(self, LinearPackedParams)

    def forward(self, x: Tensor) -> Tensor:
        return _ql.linear(x, self._packed_params._packed_params, self.scale, self.zero_point)

    def _load_weights(self, state_dict, prefix, local_metadata) -> None:
        """A version-1 state dict keeps ``weight``/``bias`` here: hand them to ``_packed_params``."""
        version = local_metadata.get("version", None)
        if version is None or version == 1:
            state_dict[prefix + "_packed_params.weight"] = state_dict.pop(prefix + "weight")
            state_dict[prefix + "_packed_params.bias"] = state_dict.pop(prefix + "bias")

    def _weight_bias(self) -> tuple[Tensor, Tensor | None]:
        return self._packed_params._weight_bias()

    def weight(self) -> Tensor:
        """The qint8 weight (out_features, in_features)."""
        return self._weight_bias()[0]

    def bias(self) -> Tensor | None:
        """The float bias, or None."""
        return self._weight_bias()[1]

    def set_weight_bias(self, w: Tensor, b: Tensor | None) -> None:
        self._packed_params.set_weight_bias(w, b)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> Linear:
        """The quantized twin of an observed float ``nn.Linear`` (or a QAT/fused one): its weight observed by
        ``mod.qconfig.weight()`` (or its ``weight_fake_quant``) and quantized, its output's parameters from
        ``mod.activation_post_process``."""
        if hasattr(mod, "weight_fake_quant"):
            if type_before_parametrizations(mod) is LinearBn1d:
                mod.weight, mod.bias = fuse_linear_bn_weights(mod.weight, mod.bias, mod.bn.running_mean,
                                                              mod.bn.running_var, mod.bn.eps, mod.bn.weight,
                                                              mod.bn.bias)
            weight_post_process = mod.weight_fake_quant
            activation_post_process = mod.activation_post_process
        else:
            float_modules = cls._FLOAT_MODULE if isinstance(cls._FLOAT_MODULE, (tuple, list)) else [cls._FLOAT_MODULE]
            if type_before_parametrizations(mod) not in float_modules:
                names = ", ".join(m.__name__ for m in float_modules)
                raise AssertionError(f"nnq.{cls.__name__}.from_float only works for {names}, but got: {type(mod)}")
            if not hasattr(mod, "qconfig"):
                raise AssertionError("Input float module must have qconfig defined")
            activation_post_process = mod.activation_post_process
            if type_before_parametrizations(mod) is LinearReLU:
                mod = mod[0]
            weight_post_process = mod.qconfig.weight()
        if not use_precomputed_fake_quant:
            weight_post_process(mod.weight)
        dtype = weight_post_process.dtype
        act_scale, act_zp = activation_post_process.calculate_qparams()
        if dtype is not _qtypes.qint8:
            raise AssertionError(f"Weight observer must have dtype toolkit.qint8, got {dtype}")
        qweight = quantize_weight(mod.weight.float(), weight_post_process)
        qlinear = cls(mod.in_features, mod.out_features, dtype=dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        qlinear.scale = float(act_scale)
        qlinear.zero_point = int(act_zp)
        return qlinear

    @classmethod
    def from_reference(cls, ref_qlinear, output_scale, output_zero_point) -> Linear:
        """A quantized linear layer from a reference one (its quantized weight and float bias)."""
        qlinear = cls(ref_qlinear.in_features, ref_qlinear.out_features)
        qlinear.set_weight_bias(ref_qlinear.get_quantized_weight(), ref_qlinear.bias)
        qlinear.scale = float(output_scale)
        qlinear.zero_point = int(output_zero_point)
        return qlinear
