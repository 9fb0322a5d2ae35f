"""Saving and restoring what a model's observers have seen, apart from its weights: calibrate once, keep the
observer statistics, and load them into a freshly prepared copy later (``torch.ao.quantization``'s
``get_observer_state_dict``/``load_observer_state_dict``)::

    stats = get_observer_state_dict(prepared)
    load_observer_state_dict(other_prepared, stats)
"""

from __future__ import annotations

from collections import OrderedDict

from ...nn import Module
from .fake_quantize import FakeQuantizeBase
from .observer import ObserverBase

__all__ = ["get_observer_state_dict", "load_observer_state_dict"]


def get_observer_state_dict(mod: Module) -> OrderedDict:
    """The entries of ``mod.state_dict()`` that belong to observers (keys with ``activation_post_process``),
    with the state dict's version metadata."""
    state = mod.state_dict()
    observed = OrderedDict((k, v) for k, v in state.items() if "activation_post_process" in k)
    observed._metadata = state._metadata
    return observed


def load_observer_state_dict(mod: Module, obs_dict) -> None:
    """Load observer statistics saved by :func:`get_observer_state_dict` into ``mod``'s observers and fake
    quantizers (per-channel buffers take the saved shapes). Raises when an observer's entry is missing from
    ``obs_dict`` or ``obs_dict`` names an observer entry ``mod`` does not have."""
    missing_keys: list[str] = []
    unexpected_keys: list[str] = []
    for name, module in mod.named_modules():
        if isinstance(module, (ObserverBase, FakeQuantizeBase)):
            module._load_from_state_dict(obs_dict, name + ".", {}, False, missing_keys, unexpected_keys, [])
    for key in missing_keys:
        if "observer" in key or "activation_post_process" in key:
            raise Exception(f"Missing keys for observer {key} in state_dict")  # noqa: TRY002 - PyTorch's type
    for key in unexpected_keys:
        if "observer" in key or "activation_post_process" in key:
            raise Exception(f"Unexpected keys for observer {key} in state_dict")  # noqa: TRY002 - PyTorch's type
