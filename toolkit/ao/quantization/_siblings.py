"""Names a module shares with a sibling that imports it, as PyTorch's single-file modules offer them
(``fake_quantize.FixedQParamsFakeQuantize``, ``observer.HistogramObserver``): the module's ``__getattr__`` imports
the sibling on first use, so neither module imports the other at load time."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def sibling_getattr(module_name: str, table: dict[str, tuple[str, ...]]) -> Callable[[str], object]:
    """A module-level ``__getattr__`` for ``module_name`` that finds each name of ``table`` (sibling module ->
    names) in its sibling::

        __getattr__ = sibling_getattr(__name__, {"fixed_qparams": ("FixedQParamsFakeQuantize",)})
    """
    package = module_name.rpartition(".")[0]
    owner = {name: sibling for sibling, names in table.items() for name in names}

    def __getattr__(name: str):
        if name not in owner:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{owner[name]}"), name)

    return __getattr__
