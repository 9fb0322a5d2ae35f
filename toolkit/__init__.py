"""toolkit: a notebook-first, PyTorch-shaped tensor, autograd and JIT library on numpy and numba.

``import toolkit`` compiles nothing: numba kernels compile on first use and
are cached on disk.
"""

from __future__ import annotations

import operator as _operator

from . import autograd, cuda, linalg, random
from . import dispatch as _dispatch  # plugs itself in below: ops reach it through ops.runtime
from . import ops as _ops  # registers every op
from ._core import dtypes as _dtypes
from ._core.device import device
from ._core.dtypes import (
    bool,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
)
from ._core.shape import Size
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .dlpack import from_dlpack
from .factories import as_tensor, asarray, from_numpy, scalar_tensor, tensor
from .indexing import nonzero  # with as_tuple, which the registry's nonzero op has not
from .ops import api as _api
from .printing import set_printoptions
from .random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from .tensor import Tensor

globals().update(_api.exported(None))  # toolkit.add, toolkit.relu...: every op the registry exports here

from ._legacy import CPU_TYPES as _LEGACY_TYPES  # noqa: E402

globals().update(_LEGACY_TYPES)

from . import _C, jit, nn, optim, profiler, utils, vision  # noqa: E402
from .serialization import *  # noqa: E402, F403


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(t: Tensor) -> int:
    return t.numel()


def is_floating_point(t: Tensor) -> bool:
    return t.is_floating_point()


def can_cast(from_, to) -> bool:
    return _dtypes.can_cast(from_, to)


def broadcast_shapes(*shapes) -> Size:
    """The shape ``broadcast_tensors`` gives tensors of these shapes, without making any (an int is a 1-D shape)."""
    # ``int``, ``max`` and ``any`` are toolkit's own names in this module: none of Python's builtins of them here
    given = [tuple(s) if hasattr(s, "__iter__") else (_operator.index(s),) for s in shapes]
    result = [1] * sorted([0] + [len(s) for s in given])[-1]
    for i, s in enumerate(given):
        for k in range(1, len(s) + 1):
            x, r = s[-k], result[-k]
            if x == r or x == 1:
                continue
            if r != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {x} at {-k}! Mismatching argument "
                                   f"at index {i} had {s}; but expected shape should be broadcastable to {result}")
            result[-k] = x
    return Size(result)


def result_type(tensor1, tensor2) -> dtype:
    """The dtype an elementwise op on these two operands produces."""
    dims, zeros, scalars = [], [], []
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            (zeros if x.ndim == 0 else dims).append(x.dtype)
        else:
            scalars.append(x)
    return _dtypes.result_type_from(dims, zeros, scalars)


__version__ = "0.1.0"
