"""What the dynamic recurrent modules keep per layer and direction: the int8 weights prepacked with their float
biases (``linear_prepack``), two per cell (input-hidden and hidden-hidden), and the weight quantization that
``from_float`` runs, as ``torch.ao.nn.quantized.dynamic`` lays them out.

A multi-layer module holds one ``CellParamsDynamic`` per layer and direction, each in a ``PackedParameter``
submodule, so its state dict has PyTorch's keys (``_all_weight_values.0.param``)::

    params = CellParamsDynamic(linear_prepack(w_ih, b_ih), linear_prepack(w_hh, b_hh), b_ih, b_hh)
    linear_dynamic(x, params.packed_ih, params.reduce_range)   # x @ W_ih.T + b_ih, x quantized on the fly
"""

from __future__ import annotations

from ....._core import dtypes as _dt
from .....nn import Module
from .....ops import quantized_linear as _ql
from .....tensor import Tensor
from ....quantization import _qtypes
from ....quantization.qconfig import default_dynamic_qconfig
from ..modules.utils import quantize_weight as _static_quantize_weight

__all__ = ["CellParamsDynamic", "PackedParameter", "pack_weight_bias", "quantize_weight", "unpack",
           "weight_observer_factory"]


def weight_observer_factory(mod: Module, unsupported: type[Exception], message: str):
    """The weight observer factory ``from_float`` uses: ``mod.qconfig.weight``, else
    ``default_dynamic_qconfig``'s; checks ``mod`` has a qconfig and that the observer's dtype is one the dynamic
    modules store (``unsupported(message.format(dtype))`` otherwise)."""
    if not hasattr(mod, "qconfig"):
        raise AssertionError("Input float module must have qconfig defined")
    qconfig = mod.qconfig
    if qconfig is None or qconfig.weight is None:
        qconfig = default_dynamic_qconfig
    factory = qconfig.weight
    dtype = factory().dtype
    if dtype is _dt.float16:
        raise NotImplementedError(f"{type(mod).__name__}: toolkit's dynamic quantized modules store int8 weights "
                                  "only, not float16 (use a qconfig whose weight observer has dtype=qint8)")
    if dtype is not _qtypes.qint8:
        raise unsupported(message.format(dtype))
    return factory


def quantize_weight(weight: Tensor, factory) -> Tensor:
    """``weight`` observed by a fresh observer from ``factory`` and quantized with the parameters it chose
    (per tensor or per channel, clamped to its range), as PyTorch's dynamic modules call ``_quantize_weight``."""
    observer = factory()
    observer(weight)
    return _static_quantize_weight(weight.float(), observer)


def unpack(packed) -> tuple[Tensor, Tensor | None]:
    """The int8 weight and float bias (or None) ``packed`` was made from."""
    return _ql.linear_unpack(packed)


def pack_weight_bias(qweight: Tensor, bias: Tensor | None, dtype=_qtypes.qint8):
    """``linear_prepack(qweight, bias)``: the packed form every dynamic gate product reads."""
    if dtype is not _qtypes.qint8:
        raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
    return _ql.linear_prepack(qweight, bias)


class CellParamsDynamic:
    """One recurrent cell's packed weights (input-hidden, hidden-hidden) with their biases: the two gate
    products of a step, each a dynamic int8 linear. ``reduce_range`` quantizes the activations to 7 bits, as
    PyTorch's x86 kernels do for RNNs (their 16-bit accumulation cannot overflow then)."""

    __slots__ = ("packed_ih", "packed_hh", "b_ih", "b_hh", "reduce_range")

    def __init__(self, packed_ih, packed_hh, b_ih: Tensor | None, b_hh: Tensor | None, reduce_range: bool = True):
        self.packed_ih, self.packed_hh = packed_ih, packed_hh
        self.b_ih, self.b_hh = b_ih, b_hh
        self.reduce_range = reduce_range

    def __getstate__(self):
        """PyTorch's layout of a dynamic cell's state: ``(kind, biases, [], [reduce_range], packed weights)``."""
        return (("quantized_dynamic", [self.b_ih, self.b_hh], [], [int(self.reduce_range)],
                 [self.packed_ih, self.packed_hh]), "CellParamsBase")

    def __setstate__(self, state) -> None:
        _, (b_ih, b_hh), _, (reduce_range,), (packed_ih, packed_hh) = state[0]
        self.__init__(packed_ih, packed_hh, b_ih, b_hh, bool(reduce_range))

    def __repr__(self) -> str:
        return f"CellParamsDynamic(reduce_range={self.reduce_range})"


class PackedParameter(Module):
    """A holder that puts one ``CellParamsDynamic`` in the state dict under ``<prefix>param``."""

    def __init__(self, param) -> None:
        super().__init__()
        self.param = param

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "param"] = self.param

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        self.param = state_dict[prefix + "param"]
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)
