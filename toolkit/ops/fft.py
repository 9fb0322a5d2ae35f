"""``torch.fft``'s transforms: ``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft`` and their 2-d and n-d forms.

Each is a composition of the three primitives in ``fft_primitives`` (as ATen
builds them), so autograd differentiates it through their rules. A call is
planned first from its input's shape and dtype alone: which dims, the signal
length per dim (``n``/``s``: the input is zero-padded or cut to it), the
normalization integer and the dtype computed in. The meta rule reads the same
plan, so the shapes and errors it gives are the call's. Integer and bool
inputs compute in the default float dtype; the outputs are complex except for
``irfft*``/``hfft*``, which are real::

    x = toolkit.arange(6.)
    toolkit.fft.rfft(x, n=8, norm="ortho").shape    # (5,)

The ops are declared ``differentiable=False`` only because the registry's
numerical checks of a composition go through its parts; gradients flow through
the primitives (``tests/ops/test_fft.py`` gradchecks every function).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import LINALG, OUT_CAST, op

C2C, R2C, C2R = "c2c", "r2c", "c2r"  # what the last transformed dim does: complex, real to complex, to real


class Plan(NamedTuple):
    """One call's transform: dims, the input's length along each after padding/cutting, PyTorch's normalization
    integer, the dtype the input is converted to, and the output length of a c2r's last dim (else None)."""

    dims: tuple
    sizes: tuple
    norm: int
    dtype: object
    last: int | None


def _norm(norm: str | None, forward: bool) -> int:
    """PyTorch's normalization integer of a ``norm`` string: 0 none, 1 by ``1/sqrt(n)``, 2 by ``1/n``."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap(dim: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _points(n: int) -> int:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _dtype(name: str, dtype, kind: str, nd: bool):
    """The dtype a transform computes in: integers and bool in the default float dtype, complex for c2c/c2r."""
    if kind == R2C and dtype.is_complex:
        if name == "ihfftn":
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {dtype.title}")
        raise RuntimeError(f"{name} expects a real{'-valued' if nd else ''} input tensor, but got {dtype.title}")
    if not dtype.is_complex and not dtype.is_floating_point:
        dtype = _dt.get_default_dtype()
    if dtype not in (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128):
        raise RuntimeError(f"Unsupported dtype {dtype.title}")
    return dtype if kind == R2C else dtype.to_complex()


def plan_1d(name: str, x, n, dim: int, norm, kind: str, forward: bool) -> Plan:
    """A 1-d transform's plan: ``n`` points along ``dim`` (a c2r's output length; it reads ``n // 2 + 1``)."""
    dtype = _dtype(name, x.dtype, kind, False)
    shape = tuple(x.shape)
    d = _wrap(dim, len(shape))
    last = None
    if kind == C2C and not x.dtype.is_complex:
        dtype = dtype.to_real()  # a real signal's transform: the full r2c (its inverse conjugated), as PyTorch's
    if kind == C2R:
        last = _points(n if n is not None else 2 * (shape[d] - 1))
        size = last // 2 + 1 if n is not None else shape[d]
    else:
        size = _points(n if n is not None else shape[d])
    return Plan((d,), (size,), _norm(norm, forward), dtype, last)


def plan_nd(name: str, x, s, dim, norm, kind: str, forward: bool) -> Plan:
    """An n-d transform's plan: ``s`` (``-1``: the input's length) and ``dim`` as PyTorch reads them, defaulting
    to the last ``len(s)`` dims, or all."""
    dtype = _dtype(name, x.dtype, kind, True)
    shape = tuple(x.shape)
    ndim = len(shape)
    s = [s] if isinstance(s, int) else s
    dim = [dim] if isinstance(dim, int) else dim
    if dim is not None:
        dims = tuple(_wrap(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dim is None:
            dims = tuple(range(ndim - len(s), ndim))
        sizes = [shape[d] if v == -1 else v for d, v in zip(dims, s)]
    else:
        if dim is None:
            dims = tuple(range(ndim))
        sizes = [shape[d] for d in dims]
    for v in sizes:
        _points(v)
    last = None
    if kind != C2C and not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if kind == C2R:
        last = _points(2 * (shape[dims[-1]] - 1) if s is None or s[-1] == -1 else sizes[-1])
        sizes[-1] = last // 2 + 1
    return Plan(dims, tuple(sizes), _norm(norm, forward), dtype, last)


def _resized(x, dims: tuple, sizes: tuple):
    """``x`` zero-padded or cut to ``sizes`` along ``dims`` (one ``constant_pad_nd``: negative pads cut)."""
    changes = {d: n - x.shape[d] for d, n in zip(dims, sizes) if n != x.shape[d]}
    if not changes:
        return x
    first = min(changes)
    pad = []
    for d in range(x.ndim - 1, first - 1, -1):
        pad += [0, changes.get(d, 0)]
    return api.constant_pad_nd(x, pad)


def transform(x, kind: str, forward: bool, p: Plan):
    """Run plan ``p`` on ``x``: convert, pad or cut, then the primitives (ATen's compositions)."""
    if x.dtype is not p.dtype:
        x = x.to(p.dtype)
    x = _resized(x, p.dims, p.sizes)
    dims, last = list(p.dims), [p.dims[-1]] if p.dims else []
    if kind == C2C and not p.dtype.is_complex:
        y = api._fft_r2c(x, dims, p.norm, False)
        return y if forward else api.conj(y)
    if kind == C2C:
        return api._fft_c2c(x, dims, p.norm, forward)
    if kind == R2C:
        if forward:
            return api._fft_r2c(x, dims, p.norm, True)
        y = api._fft_r2c(x, last, p.norm, True)  # ihfft: the conjugate of the forward half, then the other dims
        if len(dims) == 1:
            return api.conj(y)
        return api._fft_c2c(api.conj_physical(y), dims[:-1], p.norm, False)
    if not forward:
        return api._fft_c2r(x, dims, p.norm, p.last)
    if len(dims) > 1:  # hfft: the other dims forward, then the conjugate's inverse along the last
        x = api._fft_c2c(x, dims[:-1], p.norm, True)
    return api._fft_c2r(api.conj_physical(x), last, p.norm, p.last)


def output_meta(x, kind: str, p: Plan) -> TensorMeta:
    shape = list(x.shape)
    for d, n in zip(p.dims, p.sizes):
        shape[d] = n
    if kind == R2C:
        shape[p.dims[-1]] = p.sizes[-1] // 2 + 1
    if kind == C2R:
        shape[p.dims[-1]] = p.last
        return TensorMeta(tuple(shape), p.dtype.to_real(), x.device)
    return TensorMeta(tuple(shape), p.dtype.to_complex(), x.device)


# ----------------------------------------------------------------------------- the 18 transforms
_ARGS = {
    "": "SymInt? n=None, int dim=-1, str? norm=None",
    "2": "SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None",
    "n": "SymInt[1]? s=None, int[1]? dim=None, str? norm=None",
}
_TRANSFORMS = {  # base name: (kind, forward, what it computes)
    "fft": (C2C, True, "the discrete Fourier transform"),
    "ifft": (C2C, False, "the inverse discrete Fourier transform"),
    "rfft": (R2C, True, "the discrete Fourier transform of a real signal, its non-negative frequencies only"),
    "irfft": (C2R, False, "the real signal whose one-sided (``rfft``) spectrum is given: ``rfft``'s inverse"),
    "hfft": (C2R, True, "the (real) transform of a Hermitian-symmetric signal given by its one-sided half"),
    "ihfft": (R2C, False, "the inverse transform of a real signal, its non-negative frequencies only: "
                          "``hfft``'s inverse"),
}


def _samples(kind: str, forward: bool, form: str):
    def samples(rng):
        def z(*shape, dtype=np.complex128):
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

        real = kind == R2C
        if form == "" and not forward:
            # PyTorch's 1-d inverses of real signals come back with the conjugate bit set, which the shared
            # comparison with PyTorch cannot read: those cases are in tests/ops/test_fft.py
            if real:
                return
            yield (z(4, 5),), {}
            yield (z(3, 4, dtype=np.complex64),), {"n": 7, "dim": 0, "norm": "ortho"}
            yield (z(4, 5),), {"n": 3, "norm": "forward"}
            return
        a = rng.standard_normal((4, 5)) if real else z(4, 5)
        b = rng.standard_normal((3, 4)).astype(np.float32) if real else z(3, 4, dtype=np.complex64)
        if form == "":
            yield (a,), {}
            yield (b,), {"n": 7, "dim": 0, "norm": "ortho"}
            yield (a,), {"n": 3, "norm": "forward"}
        else:
            yield (a,), {}
            yield (b,), {"s": [5, 6], "norm": "ortho"}
            yield (a,), {"s": [3, 2], "dim": [1, 0], "norm": "forward"}
        yield (rng.integers(-3, 4, (2, 6)),), {}  # integers compute in the default float dtype
        yield (rng.standard_normal((2, 4)).astype(np.float32),), {"norm": "backward"}

    return samples


def _define(base: str, form: str) -> None:
    kind, forward, what = _TRANSFORMS[base]
    name = base + form  # fft2, irfftn...
    plan = plan_1d if form == "" else plan_nd
    over = {"": "``dim``, with ``n`` points", "2": "the last two dims (or ``dim``), with ``s`` points",
            "n": "``dim`` (default: the last ``len(s)`` dims, or all), with ``s`` points"}[form]
    plan_name = base + ("" if form == "" else "n")  # the 2-d forms report errors as the n-d ones

    def composite(self, n_or_s=None, dim=-1 if form == "" else None, norm=None):
        return transform(self, kind, forward, plan(plan_name, self, n_or_s, dim, norm, kind, forward))

    def meta(self, n_or_s=None, dim=-1 if form == "" else None, norm=None):
        return output_meta(self, kind, plan(plan_name, self, n_or_s, dim, norm, kind, forward))

    composite.__name__ = f"fft_{name}"
    # differentiable through the primitives it calls (see the module's docstring)
    d = op(f"fft_{name}(Tensor self, {_ARGS[form]}) -> Tensor", kind=LINALG, namespace="fft", function=name,
           method=False, composite=True, differentiable=False, out=OUT_CAST,
           doc=f"{what[0].upper()}{what[1:]}, over {over}; ``norm`` is ``'backward'`` (default), ``'ortho'`` "
               f"or ``'forward'``.")(composite)
    d.meta_rule(meta)
    d.sample_inputs(_samples(kind, forward, form))


for _base in _TRANSFORMS:
    for _form in ("", "2", "n"):
        _define(_base, _form)
