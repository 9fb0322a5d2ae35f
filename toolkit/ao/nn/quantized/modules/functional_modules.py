"""Modules that stand for tensor arithmetic so quantization can observe and replace it, as
``torch.ao.nn.quantized``'s: ``FloatFunctional`` (float ops followed by its ``activation_post_process``, an
``Identity`` until prepare puts an observer there), ``FXFloatFunctional`` (the same without it, FX inserts its
own) and ``QFunctional`` (the quantized ops with the observed output ``scale``/``zero_point``)::

    ff = FloatFunctional(); ff.add(a, b)              # a + b, observed
    qf = QFunctional.from_float(observed_ff)          # QFunctional(scale=..., zero_point=...)
    qf.add(qa, qb)                                    # quantized::add(qa, qb, scale, zero_point)
"""

from __future__ import annotations

from ..... import nn
from .....ops import api
from .....ops import quantized_elementwise as _qe
from .....tensor import Tensor
from .utils import OutputQParamsModule

__all__ = ["FloatFunctional", "FXFloatFunctional", "QFunctional"]


def _no_forward(self, x):
    name = "Functional" if isinstance(self, QFunctional) else "FloatFunctional"  # PyTorch's words for each
    raise RuntimeError(f"{name} is not intended to use the 'forward'. Please use the underlying operation")


class FXFloatFunctional(nn.Module):
    """Float ``add``, ``add_scalar``, ``mul``, ``mul_scalar``, ``cat``, ``add_relu`` and ``matmul`` as methods."""

    forward = _no_forward

    def _post(self, r: Tensor) -> Tensor:
        return r

    def add(self, x: Tensor, y: Tensor) -> Tensor:
        return self._post(api.add(x, y))

    def add_scalar(self, x: Tensor, y: float) -> Tensor:
        return api.add(x, y)

    def mul(self, x: Tensor, y: Tensor) -> Tensor:
        return self._post(api.mul(x, y))

    def mul_scalar(self, x: Tensor, y: float) -> Tensor:
        return api.mul(x, y)

    def cat(self, x: list[Tensor], dim: int = 0) -> Tensor:
        return self._post(api.cat(x, dim=dim))

    def add_relu(self, x: Tensor, y: Tensor) -> Tensor:
        return self._post(api.relu(api.add(x, y)))

    def matmul(self, x: Tensor, y: Tensor) -> Tensor:
        return self._post(api.matmul(x, y))


class FloatFunctional(FXFloatFunctional):
    """``FXFloatFunctional``'s ops, each result (but the scalar ops', whose quantized twins need no observed
    parameters) passed through ``activation_post_process``."""

    def __init__(self) -> None:
        super().__init__()
        self.activation_post_process = nn.Identity()

    def _post(self, r: Tensor) -> Tensor:
        return self.activation_post_process(r)


class QFunctional(OutputQParamsModule):
    """The quantized ops ``add``, ``mul``, ``cat``, ``add_relu`` and ``matmul``, their outputs requantized to this
    module's ``scale``/``zero_point`` (in the state dict as tensors, as PyTorch keeps them), and ``add_scalar`` and
    ``mul_scalar``, whose output parameters follow from the input's."""

    forward = _no_forward

    def __init__(self) -> None:
        super().__init__()
        self.scale = 1.0
        self.zero_point = 0
        self.activation_post_process = nn.Identity()

    def _get_name(self) -> str:
        return "QFunctional"

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def add(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(_qe.add(x, y, self.scale, self.zero_point))

    def mul(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(_qe.mul(x, y, self.scale, self.zero_point))

    def cat(self, x: list[Tensor], dim: int = 0) -> Tensor:
        return self.activation_post_process(_qe.cat(x, dim, self.scale, self.zero_point))

    def add_relu(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(_qe.add_relu(x, y, self.scale, self.zero_point))

    # The scalar ops take their output parameters from the input's and matmul from this module's, none of them
    # passing through activation_post_process (as in PyTorch).
    def add_scalar(self, x: Tensor, y: float) -> Tensor:
        return _qe.add_scalar(x, y)

    def mul_scalar(self, x: Tensor, y: float) -> Tensor:
        return _qe.mul_scalar(x, y)

    def matmul(self, x: Tensor, y: Tensor) -> Tensor:
        return _qe.matmul(x, y, self.scale, self.zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant: bool = False) -> QFunctional:
        """A ``QFunctional`` with the output parameters ``mod.activation_post_process`` observed."""
        if type(mod) is not FloatFunctional:
            raise AssertionError("QFunctional.from_float expects an instance of FloatFunctional, got "
                                 f"{type(mod).__name__}")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new_mod = cls()
        new_mod.scale = float(scale)
        new_mod.zero_point = int(zero_point)
        return new_mod
