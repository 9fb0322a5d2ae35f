"""The modules at a quantized region's edges, as ``torch.ao.nn.quantized.Quantize``/``DeQuantize`` (what
``QuantStub``/``DeQuantStub`` convert to): float in, quantized out with the observed ``scale``/``zero_point``
(kept as buffers, so they are in the state dict), and back::

    q = Quantize(0.05, 64, toolkit.quint8)(x)      # toolkit.quantize_per_tensor(x, 0.05, 64, toolkit.quint8)
    DeQuantize()(q)                                # q.dequantize()
"""

from __future__ import annotations

from ..... import factories, nn
from ....._core import dtypes as _dt
from .....ops import api
from .....tensor import Tensor

__all__ = ["Quantize", "DeQuantize"]


class Quantize(nn.Module):
    """Quantize a float tensor per tensor with this module's ``scale`` and ``zero_point`` buffers."""

    def __init__(self, scale: float, zero_point: int, dtype, factory_kwargs=None) -> None:
        super().__init__()
        factory_kwargs = dict(factory_kwargs or {})
        self.register_buffer("scale", factories.tensor([scale], **factory_kwargs))
        self.register_buffer("zero_point", factories.tensor(
            [zero_point], dtype=_dt.int64, **{k: v for k, v in factory_kwargs.items() if k != "dtype"}))
        self.dtype = dtype

    def forward(self, X: Tensor) -> Tensor:
        return api.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant: bool = False) -> Quantize:
        """A ``Quantize`` with the parameters ``mod.activation_post_process`` observed."""
        if not hasattr(mod, "activation_post_process"):
            raise AssertionError(f"Module {type(mod).__name__} must have activation_post_process attribute")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(scale.float().item(), zero_point.long().item(), mod.activation_post_process.dtype)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """The real numbers a quantized tensor stands for, as float32."""

    def forward(self, Xq: Tensor) -> Tensor:
        return Xq.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant: bool = False) -> DeQuantize:
        return DeQuantize()
