"""``torch.fft``'s helpers around the transforms: the sample frequencies of each output element (``fftfreq``,
``rfftfreq``) and the shift that puts the zero frequency in the middle (``fftshift``, ``ifftshift``)::

    toolkit.fft.fftfreq(5)                                  # [0.0, 0.2, 0.4, -0.4, -0.2]
    toolkit.fft.fftshift(toolkit.fft.fftfreq(5))            # [-0.4, -0.2, 0.0, 0.2, 0.4]
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.device import CPU
from .._core.fp_errors import ignore_fp_errors
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .factory_indices import TENSOR_OPTIONS
from .registry import FACTORY, SHAPE, op


def _freq_dtype(name: str, n: int, dtype):
    d = dtype or _dt.get_default_dtype()
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return d


def _frequencies(name: str, n: int, d: float, dtype, layout, device, pin_memory, requires_grad, onesided: bool):
    """``[0, 1, ..., m]`` (then ``-(n // 2), ..., -1`` unless one-sided) times ``1 / (n * d)``, in ``dtype``."""
    dtype = _freq_dtype(name, n, dtype)
    count = n // 2 + 1 if onesided else (n + 1) // 2
    options = {"dtype": dtype, "layout": layout, "device": device, "pin_memory": pin_memory}
    result = api.arange(count, **options)
    if not onesided and n // 2:
        result = api.cat([result, api.arange(-(n // 2), 0, **options)])
    with ignore_fp_errors():  # n or d of 0: a scale of inf, and 0 * inf, as C++'s arithmetic gives them
        scale = float(np.divide(1.0, np.float64(n) * d))
        result = result * scale
    return result.detach().requires_grad_(requires_grad)  # a leaf, as PyTorch's factories make


def _freq_meta(name: str, onesided: bool):
    def meta(n, d=1.0, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
        dtype = _freq_dtype(name, n, dtype)
        return TensorMeta((n // 2 + 1 if onesided else n,), dtype, device or CPU)

    return meta


def _freq_samples(rng):
    yield (5,), {}
    yield (8, 0.25), {}
    yield (1,), {"dtype": _dt.float64}
    yield (0,), {}


@op(f"fft_fftfreq(int n, float d=1.0, *, {TENSOR_OPTIONS}) -> Tensor", kind=FACTORY, namespace="fft",
    function="fftfreq", method=False, composite=True, out=True)
def fft_fftfreq(n, d=1.0, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """The frequency of each element of an ``n``-point ``fft`` with sample spacing ``d``: the non-negative
    frequencies first, then the negative ones, in cycles per unit of ``d``."""
    return _frequencies("fftfreq", n, d, dtype, layout, device, pin_memory, requires_grad, False)


fft_fftfreq.meta_rule(_freq_meta("fftfreq", False))
fft_fftfreq.sample_inputs(_freq_samples)


@op(f"fft_rfftfreq(int n, float d=1.0, *, {TENSOR_OPTIONS}) -> Tensor", kind=FACTORY, namespace="fft",
    function="rfftfreq", method=False, composite=True, out=True)
def fft_rfftfreq(n, d=1.0, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """The frequency of each element of an ``n``-point ``rfft`` with sample spacing ``d``: ``n // 2 + 1``
    non-negative frequencies."""
    return _frequencies("rfftfreq", n, d, dtype, layout, device, pin_memory, requires_grad, True)


fft_rfftfreq.meta_rule(_freq_meta("rfftfreq", True))
fft_rfftfreq.sample_inputs(_freq_samples)


# ----------------------------------------------------------------------------- shifts
def _shift(self, dim, inverse: bool):
    dims = list(range(self.ndim)) if dim is None else [
        wrap_dim(d, self.ndim) for d in ([dim] if isinstance(dim, int) else dim)]
    if not dims:  # a 0-d tensor: PyTorch's roll refuses no shifts
        raise RuntimeError("`shifts` required")
    # fftshift moves element 0 to the middle (n // 2); ifftshift moves it back by the other half
    shifts = [(self.shape[d] + 1) // 2 if inverse else self.shape[d] // 2 for d in dims]
    return api.roll(self, shifts, dims)


def _shift_meta(self, dim=None):
    for d in [] if dim is None else ([dim] if isinstance(dim, int) else dim):
        wrap_dim(d, len(self.shape))
    if not self.shape and dim is None:
        raise RuntimeError("`shifts` required")
    return TensorMeta(tuple(self.shape), self.dtype, self.device)


def _shift_samples(rng):
    yield (rng.standard_normal((4, 5)),), {}
    yield (rng.standard_normal((3, 6)).astype(np.float32),), {"dim": 1}
    yield (rng.standard_normal((2, 3, 5)),), {"dim": (0, 2)}
    yield (rng.integers(0, 9, (7,)),), {}


@op("fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor", kind=SHAPE, namespace="fft", function="fftshift",
    method=False, composite=True, out=False)
def fft_fftshift(self, dim=None):
    """Roll each of ``dim`` (default: all) by half its length, so the zero frequency of an ``fft`` output moves
    to the middle."""
    return _shift(self, dim, False)


@op("fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor", kind=SHAPE, namespace="fft", function="ifftshift",
    method=False, composite=True, out=False)
def fft_ifftshift(self, dim=None):
    """``fftshift``'s inverse: roll each of ``dim`` (default: all) so the middle element comes first."""
    return _shift(self, dim, True)


for _o in (fft_fftshift, fft_ifftshift):
    _o.meta_rule(_shift_meta)
    _o.sample_inputs(_shift_samples)


@fft_fftshift.grad
def _(grad, dim):
    return api.fft_ifftshift(grad, dim)


@fft_ifftshift.grad
def _(grad, dim):
    return api.fft_fftshift(grad, dim)
