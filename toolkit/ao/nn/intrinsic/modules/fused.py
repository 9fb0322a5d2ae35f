"""Fused sequences as ``torch.ao.nn.intrinsic`` defines them: ``Sequential`` subclasses (conv-relu, conv-bn,
conv-bn-relu, linear-relu, linear-bn, bn-relu, ...) that compute exactly what their parts compute and mark the
sequence as one unit for quantization: ``prepare`` observes only the fused output and ``convert`` swaps the whole
sequence for one quantized module. Each checks its parts' types as PyTorch does::

    ConvReLU2d(nn.Conv2d(1, 4, 3), nn.ReLU())     # ok
    ConvReLU2d(nn.Conv1d(1, 4, 3), nn.ReLU())     # AssertionError: Incorrect types for input modules: ...
"""

from __future__ import annotations

from toolkit import nn
from toolkit.nn.utils.parametrize import type_before_parametrizations


class _FusedModule(nn.Sequential):
    """The base that marks a fused sequence (``isinstance(m, _FusedModule)`` is how quantization finds them)."""


def _fused(name: str, parts: tuple, doc: str, exact: bool = False) -> type:
    """A ``_FusedModule`` subclass whose constructor takes one module of each type in ``parts``, in order."""

    def __init__(self, *mods):
        kinds = [type(m) if exact else type_before_parametrizations(m) for m in mods]
        if len(mods) != len(parts) or any(k is not p for k, p in zip(kinds, parts)):
            raise AssertionError("Incorrect types for input modules: " + " and ".join(k.__name__ for k in kinds))
        nn.Sequential.__init__(self, *mods)

    return type(name, (_FusedModule,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


def _doc(parts: str) -> str:
    return f"A sequential container which calls the {parts} modules; quantization replaces it with one fused module."


ConvReLU1d = _fused("ConvReLU1d", (nn.Conv1d, nn.ReLU), _doc("Conv1d and ReLU"))
ConvReLU2d = _fused("ConvReLU2d", (nn.Conv2d, nn.ReLU), _doc("Conv2d and ReLU"))
ConvReLU3d = _fused("ConvReLU3d", (nn.Conv3d, nn.ReLU), _doc("Conv3d and ReLU"))
LinearReLU = _fused("LinearReLU", (nn.Linear, nn.ReLU), _doc("Linear and ReLU"))
ConvBn1d = _fused("ConvBn1d", (nn.Conv1d, nn.BatchNorm1d), _doc("Conv1d and BatchNorm1d"))
ConvBn2d = _fused("ConvBn2d", (nn.Conv2d, nn.BatchNorm2d), _doc("Conv2d and BatchNorm2d"))
ConvBn3d = _fused("ConvBn3d", (nn.Conv3d, nn.BatchNorm3d), _doc("Conv3d and BatchNorm3d"))
ConvBnReLU1d = _fused("ConvBnReLU1d", (nn.Conv1d, nn.BatchNorm1d, nn.ReLU), _doc("Conv1d, BatchNorm1d and ReLU"))
ConvBnReLU2d = _fused("ConvBnReLU2d", (nn.Conv2d, nn.BatchNorm2d, nn.ReLU), _doc("Conv2d, BatchNorm2d and ReLU"))
ConvBnReLU3d = _fused("ConvBnReLU3d", (nn.Conv3d, nn.BatchNorm3d, nn.ReLU), _doc("Conv3d, BatchNorm3d and ReLU"))
BNReLU2d = _fused("BNReLU2d", (nn.BatchNorm2d, nn.ReLU), _doc("BatchNorm2d and ReLU"))
BNReLU3d = _fused("BNReLU3d", (nn.BatchNorm3d, nn.ReLU), _doc("BatchNorm3d and ReLU"))
LinearBn1d = _fused("LinearBn1d", (nn.Linear, nn.BatchNorm1d), _doc("Linear and BatchNorm1d"))
LinearLeakyReLU = _fused("LinearLeakyReLU", (nn.Linear, nn.LeakyReLU), _doc("Linear and LeakyReLU"), exact=True)
LinearTanh = _fused("LinearTanh", (nn.Linear, nn.Tanh), _doc("Linear and Tanh"), exact=True)


class ConvAdd2d(_FusedModule):
    """A Conv2d whose output is added to a second input (``add`` is the adding module)."""

    def __init__(self, conv, add):
        super().__init__(conv)
        self.add = add

    def forward(self, x1, x2):
        return self.add(self[0](x1), x2)


class ConvAddReLU2d(_FusedModule):
    """A Conv2d whose output is added to a second input, then ReLU."""

    def __init__(self, conv, add, relu):
        super().__init__(conv)
        self.add = add
        self.relu = relu

    def forward(self, x1, x2):
        return self.relu(self.add(self[0](x1), x2))


__all__ = ["BNReLU2d", "BNReLU3d", "ConvAdd2d", "ConvAddReLU2d", "ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d",
           "ConvBnReLU2d", "ConvBnReLU3d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearBn1d", "LinearLeakyReLU",
           "LinearReLU", "LinearTanh"]
