"""Saved tensors: what a graph node keeps for backward, with the version check.

A saved tensor remembers its storage's version when saved; unpacking it after
an in-place change raises PyTorch's error instead of computing a wrong gradient.
"""

from __future__ import annotations

from ..tensor import Tensor, _wrap


class SavedTensor:
    __slots__ = ("tensor", "version", "is_output", "output_nr")

    def __init__(self, t: Tensor, is_output: bool = False, output_nr: int = 0):
        if t._extra and t._extra.get("inference"):
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. To work around you can make a clone to get a "
                "normal tensor and use it in autograd."
            )
        self.version = t._storage.version
        self.is_output = is_output
        self.output_nr = output_nr
        # An output is kept as a bare alias so the node does not keep itself alive through it.
        self.tensor = _wrap(t._data, t._storage) if is_output else t

    def unpack(self, node) -> Tensor:
        t = self.tensor
        if t._storage.version != self.version:
            shape = list(t._data.shape)
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace operation: "
                f"[{_type_str(t)} {shape}], which is output {self.output_nr} of {type(node).__name__}, is at version "
                f"{t._storage.version}; expected version {self.version} instead. Hint: the backtrace further above "
                "can show the operation that failed to compute its gradient. The variable in question was changed "
                "in there or anywhere later. Good luck!"
            )
        if self.is_output:
            alias = _wrap(t._data, t._storage)
            alias.grad_fn = node
            alias._requires_grad = True
            alias._output_nr = self.output_nr
            return alias
        return t


_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "int64": "LongTensor",
    "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
}


def _type_str(t: Tensor) -> str:
    prefix = "toolkit.cuda." if t.is_cuda else "toolkit."
    return prefix + _TYPE_NAMES[t.dtype.name]
