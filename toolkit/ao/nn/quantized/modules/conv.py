"""The static quantized 2-d convolution, as ``torch.ao.nn.quantized.Conv2d``: quint8 (N, C, H, W) in, quint8 out,
an int8 weight packed once with the geometry (``quantized::conv2d_prepack``), the output's ``scale`` and
``zero_point`` from the observer of the float convolution's output::

    qconv = Conv2d.from_float(observed_conv)   # QuantizedConv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), ...)
    qconv(qx)

Its state dict is PyTorch's: ``weight`` (qint8), ``bias`` (float or None), ``scale``, ``zero_point``.
"""

from __future__ import annotations

from typing import ClassVar

from ..... import factories, nn
from ....._core import dtypes as _dt
from .....nn.utils.fusion import fuse_conv_bn_weights
from .....ops import api
from .....ops import quantized_conv as _qc
from .....tensor import Tensor
from ...intrinsic import ConvAdd2d, ConvAddReLU2d, ConvReLU2d
from ...intrinsic.qat import ConvBn2d
from .utils import WeightedQuantizedModule, quantize_weight

__all__ = ["Conv2d"]

_SUPPORTED_PADDING = {"zeros", "reflect"}


def _pair(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _reverse_repeat_padding(padding) -> list:
    return [p for p in reversed(padding) for _ in range(2)]


class Conv2d(WeightedQuantizedModule):
    """2-d convolution of a quint8 input with an int8 weight and float bias, requantized to this module's
    ``scale``/``zero_point``; ``padding_mode`` ``"zeros"`` (padding stands for 0.0) or ``"reflect"``."""

    _FLOAT_MODULE: ClassVar[type] = nn.Conv2d
    _NNIQAT_CONV_BN_MODULE: ClassVar[type | None] = ConvBn2d
    _NNI_CONV_RELU_MODULE: ClassVar[type | None] = ConvReLU2d
    _NNI_CONV_ADD_MODULE: ClassVar[type | None] = ConvAdd2d
    _NNI_CONV_ADD_RELU_MODULE: ClassVar[type | None] = ConvAddReLU2d

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__()
        if out_channels <= 0:
            raise ValueError(f"out_channels must be greater than 0, got {out_channels}")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _SUPPORTED_PADDING:
            raise ValueError(f"'padding_mode' {padding_mode} is not supported by quantized convolution")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.transposed, self.output_padding, self.groups = False, (0, 0), groups
        self.padding_mode = padding_mode
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        qweight = api._make_per_tensor_quantized_tensor(factories.zeros(*shape, dtype=_dt.int8), 1.0, 0)
        self.set_weight_bias(qweight, factories.zeros(out_channels) if bias else None)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self) -> str:
        return "QuantizedConv2d"

    def extra_repr(self) -> str:
        s = ("{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}, scale={scale}, "
             "zero_point={zero_point}")
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias() is None:
            s += ", bias=False"
        return s.format(**self.__dict__)

    def set_weight_bias(self, w: Tensor, b: Tensor | None) -> None:
        padding = self.padding if self.padding_mode == "zeros" else (0, 0)
        self._packed_params = _qc.conv2d_prepack(w, b, list(self.stride), list(padding), list(self.dilation),
                                                 self.groups)

    def _weight_bias(self) -> tuple[Tensor, Tensor | None]:
        return self._packed_params.unpack()

    def weight(self) -> Tensor:
        """The qint8 weight (out_channels, in_channels / groups, kh, kw)."""
        return self._weight_bias()[0]

    def bias(self) -> Tensor | None:
        """The float bias, or None."""
        return self._weight_bias()[1]

    def forward(self, input: Tensor) -> Tensor:
        if len(input.shape) != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        if self.padding_mode != "zeros":
            input = nn.functional.pad(input, _reverse_repeat_padding(self.padding), mode=self.padding_mode)
        return _qc.conv2d(input, self._packed_params, self.scale, self.zero_point)

    # -- state dict, pickling and copies: the unpacked weight and bias, packed again on load --------------
    def _save_weights(self, destination, prefix) -> None:
        destination[prefix + "weight"], destination[prefix + "bias"] = self._weight_bias()

    def _load_weights(self, state_dict, prefix, local_metadata) -> None:
        self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))

    def __getstate__(self):
        w, b = self._weight_bias()
        return (self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding, self.dilation,
                self.transposed, self.output_padding, self.groups, self.padding_mode, w, b, self.scale,
                self.zero_point, self.training)

    def __setstate__(self, state) -> None:
        nn.Module.__init__(self)
        (self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding, self.dilation,
         self.transposed, self.output_padding, self.groups, self.padding_mode) = state[:10]
        self.set_weight_bias(state[10], state[11])
        self.scale, self.zero_point, self.training = state[12], state[13], state[14]

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        new.__setstate__(self.__getstate__())
        return new

    def __copy__(self):
        return self.__deepcopy__({})

    # -- conversion ---------------------------------------------------------------------------------
    @classmethod
    def get_qconv(cls, mod, activation_post_process, weight_post_process=None) -> Conv2d:
        """The quantized twin of float convolution ``mod``: its weight observed and quantized, the output's
        parameters from ``activation_post_process`` (none for a float activation)."""
        if weight_post_process is None:
            weight_post_process = mod.qconfig.weight()
        weight_post_process(mod.weight)
        if weight_post_process.dtype is not _dt.qint8:
            raise AssertionError(f"Weight observer must have a dtype of qint8, got {weight_post_process.dtype}")
        qweight = quantize_weight(mod.weight.float(), weight_post_process)
        qconv = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding, mod.dilation,
                    mod.groups, mod.bias is not None, mod.padding_mode)
        qconv.set_weight_bias(qweight, mod.bias)
        if activation_post_process is None or activation_post_process.dtype is _dt.float32:
            return qconv
        act_scale, act_zp = activation_post_process.calculate_qparams()
        qconv.scale = float(act_scale)
        qconv.zero_point = int(act_zp)
        return qconv

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False) -> Conv2d:
        """The quantized twin of an observed float ``nn.Conv2d`` (or a QAT/fused one), reading ``mod.qconfig``
        and ``mod.activation_post_process`` as PyTorch does."""
        if hasattr(mod, "weight_fake_quant"):
            if type(mod) is cls._NNIQAT_CONV_BN_MODULE:
                mod.weight, mod.bias = fuse_conv_bn_weights(mod.weight, mod.bias, mod.bn.running_mean,
                                                            mod.bn.running_var, mod.bn.eps, mod.bn.weight,
                                                            mod.bn.bias)
            if not hasattr(mod, "activation_post_process"):
                raise AssertionError("Input QAT module must have observer attached")
            return cls.get_qconv(mod, mod.activation_post_process, mod.weight_fake_quant)
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f"nnq.{cls.__name__}.from_float only works for {cls._FLOAT_MODULE.__name__} but "
                                 f"got: {type(mod).__name__}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined.")
        activation_post_process = getattr(mod, "activation_post_process", None)
        if type(mod) in (cls._NNI_CONV_RELU_MODULE, cls._NNI_CONV_ADD_MODULE, cls._NNI_CONV_ADD_RELU_MODULE):
            mod = mod[0]
        return cls.get_qconv(mod, activation_post_process, mod.qconfig.weight())

    @classmethod
    def from_reference(cls, ref_qconv, output_scale, output_zero_point) -> Conv2d:
        """A quantized convolution from a reference one (its quantized weight and float bias)."""
        qconv = cls(ref_qconv.in_channels, ref_qconv.out_channels, ref_qconv.kernel_size, ref_qconv.stride,
                    ref_qconv.padding, ref_qconv.dilation, ref_qconv.groups, ref_qconv.bias is not None,
                    ref_qconv.padding_mode)
        qconv.set_weight_bias(ref_qconv.get_quantized_weight(), ref_qconv.bias)
        qconv.scale = float(output_scale)
        qconv.zero_point = int(output_zero_point)
        return qconv
