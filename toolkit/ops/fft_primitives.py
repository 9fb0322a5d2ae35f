"""The three discrete Fourier transforms every ``toolkit.fft`` function is built from, as ATen has them.

``_fft_c2c`` transforms complex to complex (forward or inverse), ``_fft_r2c``
real to complex (always forward; ``onesided`` keeps only the non-negative
frequencies of the last transformed dim) and ``_fft_c2r`` the Hermitian half
of a spectrum back to real (always inverse, with the last dim's output length
given, since an even and an odd length have the same half). ``normalization``
is PyTorch's integer: 0 scales by nothing, 1 by ``1/sqrt(n)``, 2 by ``1/n``,
with ``n`` the product of the transformed dims' signal lengths.

The kernels run ``scipy.fft`` on ``toolkit.get_num_threads()`` workers. Each
derivative is another of the three (PyTorch's rules): the adjoint of a c2c is
the c2c the other way, of an r2c the inverse c2c of the zero-padded gradient
(real part), of a c2r the one-sided r2c with the mirrored frequencies doubled::

    x = toolkit.randn(8, dtype=toolkit.float64)
    X = toolkit.ops.api._fft_r2c(x, [0], 0, True)   # rfft(x): 5 frequencies
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.threads import get_num_threads
from . import api
from .registry import LINALG, op

# PyTorch's normalization integers as scipy's ``norm`` for a forward transform and for an inverse one.
_FORWARD_NORM = {0: "backward", 1: "ortho", 2: "forward"}
_INVERSE_NORM = {0: "forward", 1: "ortho", 2: "backward"}


def _check_normalization(normalization: int) -> None:
    if normalization not in (0, 1, 2):
        raise RuntimeError(f"Invalid normalization mode: {normalization}")


def _check_dims(name: str, dim, ndim: int) -> tuple:
    dims = tuple(int(d) for d in dim)
    for d in dims:
        if not 0 <= d < ndim:
            raise IndexError(f"{name}: Dimension out of range (expected to be in range of [0, {max(ndim - 1, 0)}], "
                             f"but got {d})")
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    return dims


def _check_kind(name: str, dtype, complex_input: bool) -> None:
    title = dtype.title if hasattr(dtype, "title") else _dt.title(dtype)
    if complex_input and not (dtype.is_complex if hasattr(dtype, "is_complex") else dtype.kind == "c"):
        raise RuntimeError(f"{name} expects a complex input tensor, but got {title}")
    if not complex_input and not (dtype.is_floating_point if hasattr(dtype, "is_floating_point")
                                  else dtype.kind == "f"):
        raise RuntimeError(f"{name} expects a real floating point input tensor, but got {title}")


def _complex_of(a: np.ndarray) -> np.dtype:
    return np.dtype(np.complex64) if a.dtype in (np.float32, np.complex64) else np.dtype(np.complex128)


# ----------------------------------------------------------------------------- complex to complex
@op("_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor", kind=LINALG, function=False,
    method=False)
def _fft_c2c(self, dim, normalization, forward):
    """The discrete Fourier transform of a complex tensor over ``dim``: forward (``exp(-2 pi i ...)``) or inverse,
    scaled by ``normalization``; no dims give a copy."""
    _check_kind("_fft_c2c", self.dtype, True)
    _check_normalization(normalization)
    dims = _check_dims("_fft_c2c", dim, self.ndim)
    if not dims or self.size == 0:
        return self.copy()
    import scipy.fft  # optional: scipy loads on the first transform, never at import toolkit

    run = scipy.fft.fftn if forward else scipy.fft.ifftn
    norm = (_FORWARD_NORM if forward else _INVERSE_NORM)[normalization]
    return run(self, axes=dims, norm=norm, workers=get_num_threads()).astype(self.dtype, copy=False)


@_fft_c2c.meta_rule
def _(self, dim, normalization, forward):
    _check_kind("_fft_c2c", self.dtype, True)
    _check_dims("_fft_c2c", dim, len(self.shape))
    return TensorMeta(tuple(self.shape), self.dtype, self.device)


@_fft_c2c.wirtinger_grad
def _(grad, dim, normalization, forward):
    # linear with a real scale: the adjoint of the DFT matrix is the unscaled DFT the other way
    return api._fft_c2c(grad, dim, normalization, not forward)


@_fft_c2c.sample_inputs
def _(rng):
    def z(*shape, dtype=np.complex128):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    yield (z(6, dtype=np.complex64), [0], 0, True), {}
    yield (z(3, 5), [0, 1], 1, False), {}
    yield (z(2, 3, 4), [2, 0], 2, True), {}
    yield (z(4, 1), [1], 2, False), {}


# ----------------------------------------------------------------------------- real to complex
def _onesided_shape(shape, dims, onesided: bool) -> tuple:
    out = list(shape)
    if onesided and dims:
        out[dims[-1]] = out[dims[-1]] // 2 + 1
    return tuple(out)


@op("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor", kind=LINALG, function=False,
    method=False)
def _fft_r2c(self, dim, normalization, onesided):
    """The forward discrete Fourier transform of a real tensor over ``dim``, complex out; ``onesided`` keeps the
    last transformed dim's first ``n // 2 + 1`` frequencies (the rest are their conjugates)."""
    _check_kind("_fft_r2c", self.dtype, False)
    _check_normalization(normalization)
    dims = _check_dims("_fft_r2c", dim, self.ndim)
    ctype = _complex_of(self)
    if not dims:
        raise RuntimeError("_fft_r2c must transform at least one axis")
    if self.size == 0:
        return np.zeros(_onesided_shape(self.shape, dims, onesided), ctype)
    import scipy.fft  # optional: scipy loads on the first transform, never at import toolkit

    run = scipy.fft.rfftn if onesided else scipy.fft.fftn
    return run(self, axes=dims, norm=_FORWARD_NORM[normalization], workers=get_num_threads()).astype(ctype,
                                                                                                    copy=False)


@_fft_r2c.meta_rule
def _(self, dim, normalization, onesided):
    _check_kind("_fft_r2c", self.dtype, False)
    dims = _check_dims("_fft_r2c", dim, len(self.shape))
    return TensorMeta(_onesided_shape(self.shape, dims, onesided), self.dtype.to_complex(), self.device)


@_fft_r2c.wirtinger_grad
def _(grad, self_shape, dim, normalization, onesided):
    last = dim[-1]
    full = self_shape[last]
    if onesided and grad.shape[last] < full:
        # the dropped frequencies had no effect on the loss: zeros in their places
        pad = [0, 0] * (len(self_shape) - last)
        pad[-1] = full - grad.shape[last]  # constant_pad_nd lists the last dim first
        grad = api.constant_pad_nd(grad, pad)
    return api.real(api._fft_c2c(grad, dim, normalization, False))


@_fft_r2c.sample_inputs
def _(rng):
    yield (rng.standard_normal(6).astype(np.float32), [0], 0, True), {}
    yield (rng.standard_normal((3, 5)), [0, 1], 1, True), {}
    yield (rng.standard_normal((2, 3, 4)), [2, 0], 2, False), {}
    yield (rng.standard_normal((4, 1)), [1], 0, True), {}


# ----------------------------------------------------------------------------- complex to real
@op("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor", kind=LINALG, function=False,
    method=False)
def _fft_c2r(self, dim, normalization, last_dim_size):
    """The inverse discrete Fourier transform of a Hermitian spectrum given by its one-sided half over ``dim``:
    a real tensor whose last transformed dim has ``last_dim_size`` elements."""
    _check_kind("_fft_c2r", self.dtype, True)
    _check_normalization(normalization)
    dims = _check_dims("_fft_c2r", dim, self.ndim)
    if not dims:
        raise RuntimeError("_fft_c2r must transform at least one axis")
    rtype = np.float32 if self.dtype == np.complex64 else np.float64
    sizes = [self.shape[d] for d in dims[:-1]] + [int(last_dim_size)]
    if self.size == 0:
        shape = list(self.shape)
        shape[dims[-1]] = int(last_dim_size)
        return np.zeros(shape, rtype)
    import scipy.fft  # optional: scipy loads on the first transform, never at import toolkit

    return scipy.fft.irfftn(self, s=sizes, axes=dims, norm=_INVERSE_NORM[normalization],
                            workers=get_num_threads()).astype(rtype, copy=False)


@_fft_c2r.meta_rule
def _(self, dim, normalization, last_dim_size):
    _check_kind("_fft_c2r", self.dtype, True)
    dims = _check_dims("_fft_c2r", dim, len(self.shape))
    shape = list(self.shape)
    shape[dims[-1]] = int(last_dim_size)
    return TensorMeta(tuple(shape), self.dtype.to_real(), self.device)


@_fft_c2r.wirtinger_grad
def _(grad, dim, normalization):
    half = api._fft_r2c(grad, dim, normalization, True)
    last = dim[-1]
    mirrored = grad.shape[last] - half.shape[last]  # frequencies present twice in the full spectrum
    if mirrored <= 0:
        return half
    parts = [half.narrow(last, 0, 1), half.narrow(last, 1, mirrored) * 2,
             half.narrow(last, 1 + mirrored, half.shape[last] - 1 - mirrored)]
    return api.cat(parts, last)


@_fft_c2r.sample_inputs
def _(rng):
    def z(*shape, dtype=np.complex128):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    yield (z(4, dtype=np.complex64), [0], 0, 6), {}
    yield (z(3, 4), [0, 1], 1, 7), {}
    yield (z(3, 3, 4), [2, 0], 2, 5), {}
