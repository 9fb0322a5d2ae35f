"""Shared test helpers: conversions between toolkit, PyTorch (the oracle) and numpy, and the tolerance rule.

Tolerance rule, for every comparison of a toolkit result with an oracle (PyTorch, or numpy):

* base (rtol, atol) per dtype, as PyTorch's own test suite uses them (``torch.testing.assert_close``
  defaults): float16 (1e-3, 1e-5), bfloat16 (1.6e-2, 1e-5), float32 and complex64 (1.3e-6, 1e-5),
  float64 and complex128 (1e-7, 1e-7); integers and bool compare exactly;
* a value accumulated from ``accum`` terms (a sum, mean, matmul, conv, norm, ...) gets both scaled by
  ``sqrt(accum)``: pass ``accum=`` the real accumulation length, nothing for elementwise ops;
* when actual and expected dtypes differ, the less precise one's tolerance applies.

``tolerances(dtype, accum)`` computes it, ``assert_close(actual, expected, accum=...)`` applies it. Explicit
``rtol``/``atol`` are for what the rule does not describe (an iterative method's amplified error, a precision
claim tighter than the rule, comparisons that are not against an oracle), with a comment saying why.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import toolkit

torch.set_default_dtype(torch.float32)
# The oracle on one thread: on a machine shared with other work, PyTorch's spinning pool makes a call cost
# milliseconds where it costs microseconds alone (a 500-step training loop ran past the test timeout beside
# busy processes); its results do not depend on the thread count beyond the tolerances.
torch.set_num_threads(1)

TORCH_DTYPES = {
    toolkit.bool: torch.bool, toolkit.uint8: torch.uint8, toolkit.int8: torch.int8, toolkit.int16: torch.int16,
    toolkit.int32: torch.int32, toolkit.int64: torch.int64, toolkit.float16: torch.float16,
    toolkit.float32: torch.float32, toolkit.float64: torch.float64,
    toolkit.complex64: torch.complex64, toolkit.complex128: torch.complex128,
}

# (rtol, atol) of torch.testing.assert_close, by dtype name; dtypes not listed (integers, bool) are exact.
BASE_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _dtype_name(dtype) -> str:
    """The name ("float32", ...) of a toolkit, PyTorch or numpy dtype, a dtype name, or the dtype of a tensor
    or array of any of the three."""
    if isinstance(dtype, (toolkit.Tensor, torch.Tensor, np.ndarray, np.generic)):
        dtype = dtype.dtype
    if isinstance(dtype, toolkit.dtype):
        return dtype.name
    if isinstance(dtype, torch.dtype):
        return str(dtype).removeprefix("torch.")
    if isinstance(dtype, str) and dtype == "bfloat16":
        return dtype
    return np.dtype(dtype).name


def tolerances(dtype, accum: int = 1) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing a value of ``dtype`` computed two ways (toolkit and an oracle).

    The base is torch.testing's default for the dtype (see the module docstring). ``dtype`` may be a tuple of
    dtypes (actual and expected differ): then the least precise one's applies, i.e. the largest.

    ``accum`` is the number of terms accumulated into each compared element (the inner dimension of a matmul,
    C_in*kH*kW for a conv output, N*H_out*W_out for its weight gradient, the number of reduced elements for a
    sum, mean or norm; for a chain of such sums, the sum of their lengths, as their errors add in variance):
    both tolerances are scaled by ``max(1, sqrt(accum))``. Each addition rounds with an error of at most half
    an ulp of the running sum; these errors have random signs and are nearly independent, so two valid
    summation orders (pairwise vs sequential, another BLAS blocking or build, SIMD lanes) differ by a random
    walk of ``accum`` steps, whose expected size grows like ``sqrt(accum)`` units in the last place (the
    worst-case bound, linear in ``accum``, is not what happens). ``atol`` scales too because the error is
    relative to the size of the terms and partial sums, not to the result, which cancellation can make small
    (a conv weight gradient element of 0.29 summed from 2,304 products of size ~1 legitimately differs in the
    5th digit).
    """
    names = [_dtype_name(d) for d in (dtype if isinstance(dtype, (tuple, list)) else (dtype,))]
    base = [BASE_TOLERANCES.get(n, (0.0, 0.0)) for n in names]
    rtol, atol = max(b[0] for b in base), max(b[1] for b in base)
    scale = max(1.0, math.sqrt(accum))
    return rtol * scale, atol * scale


def to_torch(x, requires_grad: bool | None = None):
    """A toolkit tensor (or nested container of them) as PyTorch tensors with the same data."""
    if isinstance(x, toolkit.Tensor):
        t = torch.from_numpy(np.array(x.detach().numpy(), copy=True))
        if requires_grad if requires_grad is not None else x.requires_grad:
            t.requires_grad_(True)
        return t
    if isinstance(x, (list, tuple)):
        return type(x)(to_torch(e, requires_grad) for e in x)
    if isinstance(x, dict):
        return {k: to_torch(v, requires_grad) for k, v in x.items()}
    if isinstance(x, toolkit.dtype):
        return TORCH_DTYPES[x]
    return x


def to_numpy(x):
    if isinstance(x, toolkit.Tensor):
        return x.detach().numpy()
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def _values(x) -> tuple[np.ndarray, str]:
    """``x`` as a numpy array, and the name of its dtype (bfloat16 tensors come back as float32 values)."""
    if isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16:
        return x.detach().float().numpy(), "bfloat16"
    a = to_numpy(x)
    return a, a.dtype.name


def assert_close(actual, expected, rtol: float | None = None, atol: float | None = None, check_dtype: bool = True,
                 *, accum: int = 1, equal_nan: bool = True, msg: str = ""):
    """Compare a toolkit result with a PyTorch or numpy one: values, shape and dtype (lists and tuples of them
    element by element).

    Floating values are compared with ``tolerances((actual dtype, expected dtype), accum)``, the rule at the
    top of this file: pass ``accum=`` the number of terms accumulated into each element when the value is a
    sum, matmul, conv, norm, ...; integers and bools must be equal. ``rtol``/``atol`` override the rule; keep
    them for comparisons the rule does not describe (approximate algorithms), with a comment saying why."""
    if isinstance(expected, (tuple, list)) and not isinstance(actual, toolkit.Tensor):
        assert len(actual) == len(expected), f"length {len(actual)} != {len(expected)}"
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol, atol, check_dtype, accum=accum, equal_nan=equal_nan, msg=msg)
        return
    a, a_name = _values(actual)
    e, e_name = _values(expected)
    assert a.shape == e.shape, f"{msg}{': ' if msg else ''}shape {a.shape} != expected {e.shape}"
    if check_dtype:
        assert a_name == e_name, f"{msg}{': ' if msg else ''}dtype {a_name} != expected {e_name}"
    if a.dtype.kind in "fc" or e.dtype.kind in "fc":
        r, at = tolerances((a_name, e_name), accum)
        r = r if rtol is None else rtol
        at = at if atol is None else atol
        common = np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64
        np.testing.assert_allclose(a.astype(common), e.astype(common), rtol=r, atol=at, equal_nan=equal_nan,
                                   err_msg=f"{msg}{'; ' if msg else ''}tolerance rule: {a_name} vs {e_name}, accum={accum}")
    else:
        np.testing.assert_array_equal(a, e, err_msg=msg)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
