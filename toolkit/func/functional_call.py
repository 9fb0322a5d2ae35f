"""``functional_call``: a module run as a function of the parameters and buffers it is given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..nn.modules.module import Module
from ..nn.utils.stateless import _functional_call
from ..tensor import Tensor

__all__ = ["functional_call"]


def functional_call(module: Module, parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced for this call.

    ``parameter_and_buffer_dicts`` is one dict of dotted names to tensors, or several dicts with distinct
    keys. With ``tie_weights`` a tensor given for one of several tied names replaces all of them; with
    ``strict`` every parameter and buffer must be given, and nothing else.

        >>> out = functional_call(model, dict(model.named_parameters()), (x,))
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated_keys = [key for key, n in counts.items() if n > 1]
        if repeated_keys:
            raise ValueError(f"{repeated_keys} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
