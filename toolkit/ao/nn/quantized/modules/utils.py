"""What the static quantized modules share, as ``torch.ao.nn.quantized.modules.utils``: the base of modules with a
packed weight, the weight's quantization from its observer (clamped to the observer's integer range), and the
repr that hides a packed-parameters child::

    qweight = quantize_weight(mod.weight.float(), mod.qconfig.weight())   # after the observer has seen it
"""

from __future__ import annotations

import collections.abc
import itertools

from ..... import factories
from .....nn.modules.module import Module, _addindent
from .....ops import api as _q
from ....quantization import _qtypes

__all__ = ["WeightedQuantizedModule"]


class OutputQParamsModule(Module):
    """A module whose output ``scale``/``zero_point`` are plain numbers on it, kept in its state dict as tensors
    after its own weights (``_save_weights``/``_load_weights``), as PyTorch's quantized modules keep them."""

    def _save_weights(self, destination, prefix: str) -> None:
        pass

    def _load_weights(self, state_dict, prefix: str, local_metadata) -> None:
        pass

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        self._save_weights(destination, prefix)
        destination[prefix + "scale"] = factories.tensor(self.scale)
        destination[prefix + "zero_point"] = factories.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        self._load_weights(state_dict, prefix, local_metadata)
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)


class WeightedQuantizedModule(OutputQParamsModule):
    """A quantized module with a packed weight, made from an observed float module (``from_float``) or from a
    reference quantized module (``from_reference``)."""

    @classmethod
    def from_reference(cls, ref_module, output_scale, output_zero_point):
        raise NotImplementedError


def _weight_observer(observer):
    return getattr(observer, "activation_post_process", observer)


def _clamp_weights(qweight, observer, scale, zp):
    """The weight's integers clamped to the observer's ``quant_min..quant_max`` where that is narrower than the
    dtype's range (a 7-bit or 4-bit weight observer)."""
    observer = _weight_observer(observer)
    lo, hi = _qtypes.int_range(qweight.dtype)
    if observer.quant_min <= lo and observer.quant_max >= hi:
        return qweight
    ints = qweight.int_repr().clamp(observer.quant_min, observer.quant_max)
    if observer.qscheme in _qtypes.PER_TENSOR:
        return _q._make_per_tensor_quantized_tensor(ints, scale.item(), zp.item())
    return _q._make_per_channel_quantized_tensor(ints, scale, zp, observer.ch_axis)


def quantize_weight(float_wt, observer):
    """``float_wt`` quantized to qint8 with ``observer``'s parameters (per tensor or per channel), PyTorch's
    ``_quantize_weight``."""
    scale, zp = observer.calculate_qparams()
    if observer.qscheme in _qtypes.PER_TENSOR:
        qweight = _q.quantize_per_tensor(float_wt, float(scale), int(zp), _qtypes.qint8)
    elif observer.qscheme in (_qtypes.per_channel_affine, _qtypes.per_channel_symmetric):
        qweight = _q.quantize_per_channel(float_wt, scale.double(), zp.long(), observer.ch_axis, _qtypes.qint8)
    else:
        raise ValueError(f"Unexpected qscheme {observer.qscheme}")
    return _clamp_weights(qweight, observer, scale, zp)


def _ntuple_from_first(n: int):
    """A parser making an ``n``-tuple of the first element of a (nested) sequence."""

    def parse(x):
        while isinstance(x, collections.abc.Sequence):
            if len(x) == n:
                break
            x = x[0]
        return tuple(itertools.repeat(x, n))

    return parse


def hide_packed_params_repr(module: Module, params: type) -> str:
    """``module``'s repr without its children of type ``params`` (the packed weight), as PyTorch prints it."""
    extra = module.extra_repr()
    extra_lines = extra.split("\n") if extra else []
    child_lines = [f"({key}): " + _addindent(repr(child), 2) for key, child in module._modules.items()
                   if not isinstance(child, params)]
    lines = extra_lines + child_lines
    main = module._get_name() + "("
    if lines:
        if len(extra_lines) == 1 and not child_lines:
            main += extra_lines[0]
        else:
            main += "\n  " + "\n  ".join(lines) + "\n"
    return main + ")"


_pair_from_first = _ntuple_from_first(2)
