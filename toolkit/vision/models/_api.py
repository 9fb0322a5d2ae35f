"""Model builders' shared rules: the ``weights=`` / ``pretrained=`` arguments, and the name registry.

toolkit never downloads: a builder accepts ``weights=None`` (random initialization, as torchvision) and
refuses anything else with an error saying how to load weights the user already has::

    model = toolkit.vision.models.resnet18()
    model.load_state_dict(toolkit.load("resnet18-f37072fd.pth"))

The state-dict keys and shapes are torchvision's, so a file saved from a torchvision model loads with
``strict=True``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from ...nn import Module

__all__ = ["get_model", "get_model_builder", "list_models", "register_model", "resolve_weights"]

_BUILDERS: dict[str, Callable[..., Module]] = {}


def resolve_weights(name: str, weights: Any, kwargs: dict[str, Any]) -> None:
    """Check a builder's ``weights`` (and torchvision's deprecated ``pretrained``) arguments.

    ``pretrained=False`` means ``weights=None`` (with torchvision's deprecation warning); ``weights=None`` is
    the only value accepted, since pretrained weights would have to be downloaded.
    """
    if "pretrained" in kwargs:
        pretrained = kwargs.pop("pretrained")
        warnings.warn("The parameter 'pretrained' is deprecated since 0.13 and may be removed in the future, "
                      "please use 'weights' instead.", UserWarning, stacklevel=3)
        if pretrained:
            weights = "DEFAULT"
    if weights is None:
        return
    raise RuntimeError(
        f"{name}(weights={weights!r}): toolkit does not download pretrained weights. Build the model with "
        f"weights=None and load a state dict file you already have, e.g. saved from torchvision: "
        f"model = {name}(); model.load_state_dict(toolkit.load(path))"
    )


def register_model(fn: Callable[..., Module]) -> Callable[..., Module]:
    """Register a builder under its function name (``get_model("resnet18")``), checking ``weights`` first."""

    @functools.wraps(fn)
    def builder(*args: Any, weights: Any = None, progress: bool = True, **kwargs: Any) -> Module:
        if len(args) > 1:
            raise TypeError(f"{fn.__name__}() takes at most 1 positional argument (the deprecated 'pretrained'), "
                            f"got {len(args)}")
        if args:
            kwargs["pretrained"] = args[0]
        resolve_weights(fn.__name__, weights, kwargs)
        return fn(**kwargs)

    _BUILDERS[fn.__name__] = builder
    return builder


def list_models() -> list[str]:
    """The names of the registered model builders, sorted."""
    return sorted(_BUILDERS)


def get_model_builder(name: str) -> Callable[..., Module]:
    """The builder registered as ``name``."""
    name = name.lower()
    if name not in _BUILDERS:
        raise ValueError(f"Unknown model {name}")
    return _BUILDERS[name]


def get_model(name: str, **config: Any) -> Module:
    """Build the model registered as ``name`` with ``config`` (``weights=None``, ``num_classes=...``)."""
    return get_model_builder(name)(**config)
