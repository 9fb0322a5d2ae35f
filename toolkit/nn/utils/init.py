"""``skip_init``: build a module without spending time (or random numbers) on initialising its parameters."""

from __future__ import annotations

import inspect

import toolkit as api

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type[Module], *args, **kwargs) -> Module:
    """An instance of ``module_cls(*args, **kwargs)`` whose parameters hold unspecified values.

    The module must accept a ``device`` argument, as in PyTorch. The global random generator is left as it
    was, so the draws after ``skip_init`` are the same as if the module had not been built.
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    state = api.get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        api.set_rng_state(state)
