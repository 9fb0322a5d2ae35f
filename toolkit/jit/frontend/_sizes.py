"""Sizes read while tracing: ``x.size(0)``, ``x.shape[1]`` and ``x.numel()`` become graph values, as in PyTorch.

PyTorch's tracer hands Python code a traced tensor's sizes as 0-dim ``Long`` tensors that the graph derives from
the tensor (``aten::size`` then ``prim::NumToTensor``), so a trace that reshapes by its batch size keeps working
at another batch::

    def f(x):
        return x.view(x.size(0), -1)    # %2 : int = aten::size(%x, %1)
                                        # %3 : Long() = prim::NumToTensor(%2)
                                        # %4 : int = aten::Int(%3)   -> prim::ListConstruct -> aten::view

Arithmetic on such a size (``s * 2``, ``s // heads``) is tensor arithmetic, recorded as any op is. Where an op
takes an ``int`` (or a list of them) and gets such a tensor, binding asks the tracer for the int
(``dispatch.binding.TENSOR_INT_HOOKS``): it answers a ``SizeInt`` that remembers the tensor, and the tracer records
``aten::Int`` of the tensor's value as that argument before the kernel gets a plain int.

Only code that PyTorch runs as Python sees tensors (a program's own code and ``toolkit.nn``); toolkit's machinery
(ops, dispatch, autograd), which PyTorch runs in C++, reads plain ints, and so do the few ``toolkit.nn`` functions
that are native ops in PyTorch (``_NATIVE_IN_TORCH``). ``Tensor.size``, ``Tensor.shape`` and
``Tensor.numel`` are swapped for the recording forms only while a trace that records sizes runs, so eager code
pays nothing for this.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from ..._core.shape import Size, wrap_dim
from ...dispatch import binding
from ...nn.functional import _attention
from ...nn.modules import rnn as _rnn
from ...tensor import Tensor, wrap
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Value
from ._callers import is_machinery_frame

# toolkit.nn functions written in Python that PyTorch runs as one native op, or whose size checks its tracer
# lets pass without a warning (the recurrent modules' input and hidden-size checks): their sizes are plain ints
_NATIVE_IN_TORCH = frozenset({_attention.scaled_dot_product_attention.__code__,
                              _rnn.RNNBase.check_input.__code__, _rnn.RNNBase.check_hidden_size.__code__})


class SizeInt(int):
    """An int that binding made of a traced tensor (``s`` in ``x.view(s, -1)``): ``tensor`` is where it came from.
    The tracer records ``aten::Int`` of that tensor where an op takes it, then passes a plain int on."""

    tensor: Tensor


class TracedSize(Size):
    """``x.size()`` while tracing: a ``Size`` of traced 0-dim tensors, which slicing and ``+`` keep as they are."""

    __slots__ = ()

    def __new__(cls, seq=()):
        return tuple.__new__(cls, seq)

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return TracedSize(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return TracedSize(tuple(self) + tuple(other))


class SizeReads:
    """The tracer's part that records sizes (mixed into ``Tracer``, which provides the values and ``_insert``)."""

    _depth: int
    _size_ints: bool = False  # binding made a SizeInt since the last recorded call

    def reads_sizes_of(self, t: Tensor, caller) -> bool:
        """Whether code in frame ``caller`` reading ``t``'s sizes gets traced tensors: ``t`` is a value of the
        trace, no recorded op is running, and the caller is code PyTorch runs as Python."""
        return (not self._depth and self.lookup(t) is not None and not is_machinery_frame(caller)
                and caller.f_code not in _NATIVE_IN_TORCH)

    def size_tensor(self, t: Tensor, dim: int) -> Tensor:
        """``t.size(dim)`` as PyTorch traces it: ``aten::size`` made a 0-dim ``Long`` tensor."""
        n = self._insert(K.SIZE, [self.tensor_value(t), self.arg_value(dim)])
        n.output().type = T.INT
        return self._number_tensor(n.output(), t._data.shape[wrap_dim(dim, t._data.ndim, "size")])

    def numel_tensor(self, t: Tensor) -> Tensor:
        n = self._insert(K.NUMEL, [self.tensor_value(t)])
        n.output().type = T.INT
        return self._number_tensor(n.output(), t._data.size)

    def _number_tensor(self, v: Value, number: int) -> Tensor:
        out = wrap(np.array(number, dtype=np.int64))
        n = self._insert(K.NUM_TO_TENSOR, [v])
        n.source = None  # as PyTorch's: the line is its aten::size's
        n.output().type = T.TensorType(out.dtype, device=out.device)  # ``Long(device=cpu)``, as PyTorch types it
        self.bind_tensor(out, n.output())
        return out

    def tensor_int(self, t: Tensor) -> int:
        """Binding's hook: the int an op gets for the one-element integer tensor ``t`` (a ``SizeInt`` for a value
        of the trace, outside recorded ops)."""
        if self._depth or self.lookup(t) is None:
            return int(t.item())
        i = SizeInt(int(np.asarray(t._values()).reshape(-1)[0]))
        i.tensor = t
        self._size_ints = True
        return i

    def int_value(self, i: SizeInt, variables: list | None) -> Value:
        """The graph value of an op's int argument bound from a traced tensor: ``aten::Int`` of the tensor."""
        n = self._insert(K.INT, [self.arg_value(i.tensor, variables=variables)])
        n.source = None  # as PyTorch's: the line is the op's
        n.output().type = T.INT
        return n.output()

    def plain_ints(self, bound: list) -> None:
        """Make the ``SizeInt`` arguments of ``bound`` plain ints, in place, before the kernel runs."""
        self._size_ints = False
        for k, a in enumerate(bound):
            if type(a) is SizeInt:
                bound[k] = int(a)
            elif type(a) is tuple and any(type(e) is SizeInt for e in a):
                bound[k] = tuple(int(e) if type(e) is SizeInt else e for e in a)


# -- the recording forms of Tensor.size, .shape and .numel, swapped in while a size-recording trace runs ----------
_ACTIVE: list = []  # the size-recording tracers running, innermost last
_PLAIN = {"size": Tensor.__dict__["size"], "shape": Tensor.__dict__["shape"], "numel": Tensor.__dict__["numel"]}
_plain_size, _plain_shape, _plain_numel = _PLAIN["size"], _PLAIN["shape"].fget, _PLAIN["numel"]


def _tracer_for(t: Tensor, caller) -> SizeReads | None:
    """The tracer that records ``t``'s sizes read in frame ``caller``, or None where they are plain ints."""
    tracer = _ACTIVE[-1] if _ACTIVE else None  # another thread may read sizes while a trace ends
    return tracer if tracer is not None and tracer.reads_sizes_of(t, caller) else None


def _size(self: Tensor, dim=None):
    tracer = _tracer_for(self, sys._getframe(1))
    if tracer is None:
        return _plain_size(self, dim)
    if dim is None:
        return TracedSize(tracer.size_tensor(self, d) for d in range(self._data.ndim))
    return tracer.size_tensor(self, operator.index(dim))


def _shape(self: Tensor):
    tracer = _tracer_for(self, sys._getframe(1))
    if tracer is None:
        return _plain_shape(self)
    return TracedSize(tracer.size_tensor(self, d) for d in range(self._data.ndim))


def _numel(self: Tensor):
    tracer = _tracer_for(self, sys._getframe(1))
    if tracer is None:
        return _plain_numel(self)
    return tracer.numel_tensor(self)


_RECORDING = {"size": _size, "shape": property(_shape, doc=_PLAIN["shape"].__doc__), "numel": _numel}


def start(tracer: SizeReads) -> None:
    """``tracer`` records the sizes read from here on (until ``stop``), inside any trace already running."""
    if not _ACTIVE:
        for name, f in _RECORDING.items():
            setattr(Tensor, name, f)
    _ACTIVE.append(tracer)
    binding.TENSOR_INT_HOOKS.append(tracer.tensor_int)


def stop(tracer: SizeReads) -> None:
    _ACTIVE.remove(tracer)
    binding.TENSOR_INT_HOOKS.remove(tracer.tensor_int)
    if not _ACTIVE:
        for name, f in _PLAIN.items():
            setattr(Tensor, name, f)
