"""The registry's generated samples as named-tensor tests use them: those whose first argument is a floating
tensor with dims, so it can be given a name per dim."""

from __future__ import annotations

import warnings

import numpy as np

import toolkit


def tensors(a):
    """A sample argument with its arrays (also those in a list, as ``index``'s indices) as toolkit tensors."""
    if isinstance(a, np.ndarray):
        return toolkit.from_numpy(a.copy())
    if isinstance(a, (list, tuple)) and any(isinstance(e, np.ndarray) for e in a):
        return type(a)(tensors(e) for e in a)
    return a


def named(a: np.ndarray):
    """``a`` as a tensor with every dim named (``d0``, ``d1``...)."""
    return tensors(a).refine_names(*(f"d{i}" for i in range(a.ndim)))


def float_first_samples(op, limit: int = 3) -> list:
    """The op's first ``limit`` samples whose first argument is a floating array with dims; none where the
    samples need a device or an optional library this machine lacks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            samples = list(op.samples(np.random.default_rng(0)))[:limit]
        except Exception:
            return []
    return [(args, kw) for args, kw in samples
            if args and isinstance(args[0], np.ndarray) and args[0].ndim and args[0].dtype.kind == "f"]
