"""Saved tensors: what a graph node keeps for backward, with the version check.

A saved tensor remembers its storage's version when saved; unpacking it after
an in-place change raises PyTorch's error instead of computing a wrong gradient.
This is the one place tensors are saved, so the default hooks of
``saved_tensors_hooks`` pack them here (then, as in PyTorch, no version check).
"""

from __future__ import annotations

from .._core.legacy_names import legacy_type_name
from ..tensor import Tensor, wrap
from .naming import short_name
from .saved_hooks import HOOKS, PackedTensor

INFERENCE_SAVE_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `toolkit.no_grad()` instead of `toolkit.inference_mode()`."
)


def check_not_inference(t: Tensor) -> None:
    if t._extra and t._extra.get("inference"):
        raise RuntimeError(INFERENCE_SAVE_MESSAGE)


class SavedTensor:
    """One tensor a node needs for backward, and the version it must still be at."""

    __slots__ = ("tensor", "version", "is_output", "output_nr", "packed")

    def __init__(self, t: Tensor, is_output: bool = False, output_nr: int = 0):
        check_not_inference(t)
        self.version = t._storage.version
        self.is_output = is_output
        self.output_nr = output_nr
        if HOOKS.stack:
            self.tensor = None
            self.packed = PackedTensor(t, is_output, output_nr)
            return
        # An output is kept as a bare alias so the node does not keep itself alive through it.
        self.tensor = wrap(t._data, t._storage) if is_output else t

    def unpack(self, node) -> Tensor:
        t = self.tensor
        if t is None:
            return self.packed.unpack(node, self.is_output)
        if t._storage.version != self.version:
            raise RuntimeError(self._modified_message(node))
        if self.is_output:
            alias = wrap(t._data, t._storage)
            alias.grad_fn = node
            alias._requires_grad = True
            alias._output_nr = self.output_nr
            return alias
        return t

    def _modified_message(self, node) -> str:
        t = self.tensor
        what = f"[{legacy_type_name(t)} {list(t._data.shape)}]"
        if self.is_output:
            what += f", which is output {self.output_nr} of {short_name(node)},"
        elif t.grad_fn is not None:
            what += f", which is output {t._output_nr} of {short_name(t.grad_fn)},"
        return (
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{what} is at version {t._storage.version}; expected version {self.version} instead. Hint: enable "
            "anomaly detection to find the operation that failed to compute its gradient, with "
            "toolkit.autograd.set_detect_anomaly(True, check_nan=False)."
        )
