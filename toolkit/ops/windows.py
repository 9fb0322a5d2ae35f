"""Window functions for spectral analysis: Bartlett, Blackman, Hamming, Hann and Kaiser windows.

Each is PyTorch's composition, written with registered ops so it runs on every
device and rounds as PyTorch does: an ``arange`` of the window's length in the
asked floating dtype, scaled and shaped elementwise. A *periodic* window (the
default, for use with ``stft``) is the symmetric window one longer with its last
element dropped. The device argument is passed on to the ``arange`` (and
``empty``/``ones``) they start from, so ``set_default_device`` reaches them.

Every overload PyTorch declares is an op of its own (``hamming_window``,
``hamming_window.periodic``, ``.periodic_alpha``, ``.periodic_alpha_beta``),
so calls pick among them by their arguments exactly as PyTorch's do.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .._core import dtypes as _dt
from .._core.device import CPU
from .._core.meta import TensorMeta
from . import api
from .factory_indices import TENSOR_OPTIONS
from .registry import FACTORY, op


def _options(name: str, dtype, layout, device, pin_memory) -> str:
    """PyTorch's print of the TensorOptions a window was asked for, as its errors show them (only
    ``hann_window`` checks them before filling in the default dtype, so only its print says so)."""
    d = (dtype or _dt.get_default_dtype()).cpp_name
    if dtype is None and name == "hann_window":
        d += " (default)"
    lay = "Strided (default)" if layout is None else ("Sparse" if _is_sparse(layout) else "Strided")
    return (f"TensorOptions(dtype={d}, device={device or 'cpu'}, layout={lay}, requires_grad=false (default), "
            f"pinned_memory={'true' if pin_memory else 'false'}, memory_format=(nullopt))")


def _is_sparse(layout) -> bool:
    return "sparse" in str(layout)


def _check(name: str, window_length: int, dtype, layout, device, pin_memory):
    """PyTorch's window_function_checks; returns the dtype the window is made in."""
    if layout is not None and _is_sparse(layout):
        raise RuntimeError(f"{name} is not implemented for sparse types, got: "
                           f"{_options(name, dtype, layout, device, pin_memory)}")
    d = dtype or _dt.get_default_dtype()
    if not d.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"{_options(name, dtype, layout, device, pin_memory)}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    return d


def _window(name: str, shape: Callable, window_length: int, periodic: bool, params: tuple, dtype, layout, device,
            pin_memory, requires_grad):
    """Checks, the empty and one-element cases, then ``shape(arange(n), n, *params)`` with ``n`` the symmetric
    window's length, cut to ``window_length`` when periodic."""
    d = _check(name, window_length, dtype, layout, device, pin_memory)
    if window_length <= 1:
        make = api.empty if window_length == 0 else api.ones
        return make((window_length,), dtype=d, layout=layout, device=device, pin_memory=pin_memory,
                    requires_grad=requires_grad)
    n = window_length + 1 if periodic else window_length
    window = shape(api.arange(n, dtype=d, layout=layout, device=device, pin_memory=pin_memory), n, *params)
    if periodic:
        window = window.narrow(0, 0, window_length)
    return window.detach().requires_grad_(requires_grad)  # a leaf, as PyTorch's factories make


# ---------------------------------------------------------------------------------------------
# The windows' shapes: each takes x = arange(n) in the window's dtype and n, the symmetric length
# ---------------------------------------------------------------------------------------------
def _bartlett(x, n):
    """The triangle ``1 - |2x/(n-1) - 1|``: up by ``2/(n-1)`` to the middle, then ``2 - t`` down."""
    t = x * (2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1
    return api.cat([t.narrow(0, 0, half), 2 - t.narrow(0, half, n - half)])


def _blackman(x, n):
    """``0.42 - 0.5 cos(2 pi x/(n-1)) + 0.08 cos(4 pi x/(n-1))``."""
    t = x * (math.pi / (n - 1))
    return (t * 4).cos() * 0.08 - (t * 2).cos() * 0.5 + 0.42


def _hamming(x, n, alpha=0.54, beta=0.46):
    """``alpha - beta cos(2 pi x/(n-1))``; the Hann window is ``alpha = beta = 0.5``."""
    return (x * (math.pi * 2.0 / (n - 1))).cos() * -beta + alpha


def _kaiser(x, n, beta=12.0):
    """``I0(beta sqrt(1 - ((x - a)/a)^2)) / I0(beta)`` with ``a = (n-1)/2``, computed in float32 for float16
    (PyTorch's opmath type) and rounded once at the end."""
    half = x.dtype is _dt.float16
    if half:
        x = x.float()
    alpha = (n - 1) / 2.0
    r = (x - alpha) / alpha
    arg = (1 - r * r).abs().sqrt() * beta
    scale = api.full((1,), beta, dtype=x.dtype, device=x.device).i0()
    w = arg.i0() / scale
    return w.half() if half else w


# ---------------------------------------------------------------------------------------------
# One op per PyTorch overload
# ---------------------------------------------------------------------------------------------
def _define(name: str, shape: Callable, overloads: dict, doc: str) -> None:
    """Register ``name``'s overloads: ``{overload: extra positional parameters}``, e.g. ``{"periodic_alpha":
    ("bool periodic", "float alpha")}``; a call passes its parameters after ``periodic`` on to ``shape``."""
    for overload, params in overloads.items():
        head = f"{name}.{overload}" if overload else name
        extra = "".join(f", {p}" for p in params)
        count = len(params)

        def composite(window_length, *rest, _name=name, _count=count):
            given, (dtype, layout, device, pin_memory, requires_grad) = rest[:_count], rest[_count:]
            periodic = given[0] if given else True
            return _window(_name, shape, window_length, periodic, given[1:], dtype, layout, device, pin_memory,
                           requires_grad)

        composite.__name__ = head.replace(".", "_")
        d = op(f"{head}(int window_length{extra}, *, {TENSOR_OPTIONS}) -> Tensor", kind=FACTORY, out=False, method=False,
               composite=True, doc=doc)(composite)
        d.meta_rule(_meta(name, count))
        d.sample_inputs(_samples(count))


def _meta(name: str, count: int):
    def meta(window_length, *rest):
        dtype, layout, device, pin_memory, _ = rest[count:]
        return TensorMeta((window_length,), _check(name, window_length, dtype, layout, device, pin_memory),
                          device or CPU)

    return meta


_PARAMETERS = (0.6, 0.3)  # alpha and beta of the Hamming samples; beta is the Kaiser samples' shape parameter


def _samples(count: int):
    def samples(rng):
        params = _PARAMETERS[:count - 1] if count > 1 else ()
        for periodic in ((True, False) if count else (None,)):
            given = () if periodic is None else (periodic, *params)
            for length in (0, 1, 2, 5, 8):
                yield (length, *given), {}
            yield (7, *given), {"dtype": _dt.float64}
            yield (6, *given), {"dtype": _dt.float16}

    return samples


_PERIODIC = {"": (), "periodic": ("bool periodic",)}
_define("bartlett_window", _bartlett, _PERIODIC, """\
    The Bartlett (triangular) window of ``window_length`` points, ``1 - |2n/(N-1) - 1|`` with ``N`` the length
    (one more when ``periodic``, the default, whose last point is then dropped).

    >>> toolkit.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """)
_define("blackman_window", _blackman, _PERIODIC, """\
    The Blackman window, ``0.42 - 0.5 cos(2 pi n/(N-1)) + 0.08 cos(4 pi n/(N-1))`` with ``N`` the length (one
    more when ``periodic``, the default, whose last point is then dropped).

    >>> toolkit.blackman_window(3, periodic=False)
    tensor([-1.4901e-08,  1.0000e+00, -1.4901e-08])
    """)
_define("hamming_window", _hamming, {**_PERIODIC, "periodic_alpha": ("bool periodic", "float alpha"),
                                     "periodic_alpha_beta": ("bool periodic", "float alpha", "float beta")}, """\
    The generalized Hamming window, ``alpha - beta cos(2 pi n/(N-1))`` (``alpha=0.54, beta=0.46`` unless given)
    with ``N`` the length (one more when ``periodic``, the default, whose last point is then dropped).

    >>> toolkit.hamming_window(4, False)
    tensor([0.0800, 0.7700, 0.7700, 0.0800])
    """)
_define("hann_window", lambda x, n: _hamming(x, n, 0.5, 0.5), _PERIODIC, """\
    The Hann window, ``0.5 - 0.5 cos(2 pi n/(N-1))`` = ``sin(pi n/(N-1))^2`` with ``N`` the length (one more when
    ``periodic``, the default, whose last point is then dropped).

    >>> toolkit.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """)
_define("kaiser_window", _kaiser, {**_PERIODIC, "beta": ("bool periodic", "float beta")}, """\
    The Kaiser window, ``I0(beta sqrt(1 - ((n - a)/a)^2)) / I0(beta)`` with ``a = (N-1)/2`` and ``beta=12.0``
    unless given, ``N`` the length (one more when ``periodic``, the default, whose last point is then dropped).

    >>> toolkit.kaiser_window(3, False, 2.0)
    tensor([0.4382, 1.0000, 0.4382])
    """)
