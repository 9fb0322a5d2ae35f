"""Questions about one tensor's metadata, as ``toolkit`` functions: ``is_nonzero``, ``is_same_size``...

The answers live on the Tensor (its methods say what is known about its
storage, dtype and device); these entries make them the ``torch.*``
functions PyTorch also has, and name them to the tracer as PyTorch's
``aten::`` ops. Each returns a Python value, never a tensor::

    toolkit.is_nonzero(toolkit.tensor([1.0]))  # True
    toolkit.get_device(toolkit.zeros(2))        # -1: the CPU
"""

from __future__ import annotations

import numpy as np

from .._core import names as _names
from .gather_scatter import _rand
from .registry import COMPOSITE, INPLACE, op


def _predicate(schema: str, method: str, doc: str):
    """An op answering ``self.<method>(*rest)``; the Tensor's own method stays its method."""

    def answer(self, *rest):
        return getattr(self, method)(*rest)

    return op(schema, kind=COMPOSITE, composite=True, method=False, differentiable=False, name_rule=_names.KEEP,
              doc=doc)(answer)


def _plain_samples(rng):
    yield (_rand(rng, 2, 3),), {}
    yield (rng.integers(-3, 3, (4,)),), {}
    yield (np.array(1.5),), {}
    yield (rng.integers(0, 3, (2,)).astype(np.uint8),), {}
    yield (np.zeros((0, 2), bool),), {}


is_signed = _predicate("is_signed(Tensor self) -> bool", "is_signed", "Whether the dtype holds negative values.")
is_complex = _predicate("is_complex(Tensor self) -> bool", "is_complex", "Whether the dtype is complex (complex64 or complex128).")
is_inference = _predicate("is_inference(Tensor self) -> bool", "is_inference",
                          "Whether the tensor was made in inference mode.")
is_neg = _predicate("is_neg(Tensor self) -> bool", "is_neg", "Whether the tensor's negation bit is set (never).")
is_conj = _predicate("is_conj(Tensor self) -> bool", "is_conj",
                     "Whether the tensor's conjugation bit is set (never).")
is_distributed = _predicate("is_distributed(Tensor self) -> bool", "is_distributed",
                            "Whether the tensor is a distributed tensor (never).")
get_device = _predicate("get_device(Tensor self) -> int", "get_device",
                        "The CUDA device index of the tensor, or -1 for the CPU.")
for _o in (is_signed, is_complex, is_inference, is_neg, is_conj, is_distributed, get_device):
    _o.sample_inputs(_plain_samples)

is_nonzero = _predicate("is_nonzero(Tensor self) -> bool", "is_nonzero",
                        "The truth of a one-element tensor; an error for any other number of elements.")


@is_nonzero.sample_inputs
def _(rng):
    yield (np.array([0.0]),), {}
    yield (np.array([[2]]),), {}
    yield (np.array(True),), {}
    yield (np.array(np.nan),), {}


is_same_size = _predicate("is_same_size(Tensor self, Tensor other) -> bool", "is_same_size",
                          "Whether both tensors have the same shape.")


@is_same_size.sample_inputs
def _(rng):
    yield (_rand(rng, 2, 3), _rand(rng, 2, 3)), {}
    yield (_rand(rng, 2, 3), _rand(rng, 3, 2)), {}
    yield (_rand(rng), rng.integers(0, 2, ())), {}


# ``toolkit.resize_as_``: PyTorch has it as a function too; the work is ``Tensor.resize_as_``'s.
resize_as_ = op("resize_as_(Tensor(a!) self, Tensor the_template, *, str? memory_format=None) -> Tensor(a!)",
                kind=INPLACE, composite=True, method=False, name_rule=_names.KEEP,
                doc="Resize ``self`` in place to the shape of ``the_template`` (see ``Tensor.resize_``).")(
    lambda self, the_template, memory_format=None: self.resize_as_(the_template))
