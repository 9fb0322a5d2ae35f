"""What the fused conv-bn and linear-bn QAT modules share: the BatchNorm they fold into the weight, whose
statistics training may freeze, and the "approximate" folding PyTorch's eager QAT computes: the weight scaled by
``bn.weight / sqrt(running_var + eps)`` is fake-quantized, the layer runs without bias, the scale is divided back
out, the bias added, and the BatchNorm applied, so its batch statistics stay those of the float layer."""

from __future__ import annotations

import math

from toolkit import nn
from toolkit.nn import init
from toolkit.ops import api


class BnFoldingMixin:
    """State and switches of a layer with a folded BatchNorm ``self.bn`` (``freeze_bn`` keeps its running
    statistics fixed, and ``train()`` then leaves it in eval mode)."""

    def _setup_bn(self, bn_cls, num_features: int, eps: float, momentum: float, freeze_bn: bool, qconfig,
                  bias: bool) -> None:
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = bn_cls(num_features, eps, momentum, True, True)
        self.weight_fake_quant = self.qconfig.weight()
        if bias:
            self.bias = nn.Parameter(api.empty((num_features,)))
        else:
            self.register_parameter("bias", None)
        self.reset_bn_parameters()
        if self.training and not freeze_bn:
            self.update_bn_stats()
        else:
            self.freeze_bn_stats()

    def reset_running_stats(self) -> None:
        self.bn.reset_running_stats()

    def reset_bn_parameters(self) -> None:
        self.bn.reset_running_stats()
        init.uniform_(self.bn.weight)
        init.zeros_(self.bn.bias)
        if self.bias is not None and self.weight.dim() > 2:  # the conv layers also re-draw their bias
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def update_bn_stats(self):
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self):
        self.freeze_bn = True
        self.bn.training = False
        return self

    def train(self, mode: bool = True):
        """Switch mode; a frozen BatchNorm stays in eval mode."""
        self.training = mode
        if not self.freeze_bn:
            for module in self.children():
                module.train(mode)
        return self

    def _folded_forward(self, input, layer):
        """``bn(layer(input, fq(w * s), 0) / s + bias)`` with ``s = bn.weight / sqrt(running_var + eps)``;
        ``layer(input, weight, bias)`` is the conv or linear call."""
        running_std = api.sqrt(self.bn.running_var + self.bn.eps)
        scale_factor = self.bn.weight / running_std
        ndim = self.weight.dim()
        weight_shape = [-1] + [1] * (ndim - 1)
        bias_shape = [1, -1] + [1] * (ndim - 2)
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(weight_shape))
        zero_bias = api.zeros((self.weight.shape[0],), dtype=input.dtype)
        out = layer(input, scaled_weight, zero_bias) / scale_factor.reshape(bias_shape)
        if self.bias is not None:
            out = out + self.bias.reshape(bias_shape)
        return self.bn(out)


def copy_bn_state(dst_bn, bn) -> None:
    """Share ``bn``'s parameters and running statistics with ``dst_bn``."""
    dst_bn.weight = bn.weight
    dst_bn.bias = bn.bias
    dst_bn.running_mean = bn.running_mean
    dst_bn.running_var = bn.running_var
    dst_bn.num_batches_tracked = bn.num_batches_tracked
