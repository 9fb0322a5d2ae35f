"""Complex numbers: the parts of a complex tensor, conjugation, polar form, and building complex tensors.

A complex tensor's array is numpy's ``complex64``/``complex128``, so ``real``,
``imag`` and ``view_as_real`` are numpy views sharing its memory, as PyTorch's
are. Conjugation is lazy in PyTorch (a bit on the tensor, read by
``is_conj``) and so it is here: ``conj`` returns a view of the same memory with
the bit set, and the dispatcher conjugates the values where an op reads them
(``toolkit.dispatch.conj``); ``resolve_conj`` materialises them::

    z = toolkit.tensor([1 + 2j])
    z.conj().is_conj()                  # True
    z.conj().resolve_conj().is_conj()   # False
    toolkit.view_as_real(z)             # tensor([[1., 2.]])

Derivatives follow PyTorch's convention: the gradient of a real loss with
respect to ``z = x + iy`` is ``dL/dx + i dL/dy`` (the conjugate Wirtinger
derivative). The ops here are not complex-analytic, so their rules are written
in that convention (``wirtinger_grad``).
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.fp_errors import ignore_fp_errors
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes
from . import api
from .registry import COMPOSITE, ELEMENTWISE, PROMOTE_INT_TO_FLOAT_REAL, VIEW, op, refuses_names


def _complex_samples(rng, *shape):
    return np.asarray(rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(np.complex64)


def _parts_samples(rng):
    # real tensors first: the fusion tests take the first samples, and only real dtypes fuse
    yield (rng.uniform(-2, 2, (2, 3)),), {}
    yield (rng.uniform(-2, 2, (3,)).astype(np.float32),), {}
    yield (_complex_samples(rng, 2, 3),), {}
    yield (_complex_samples(rng, 4).astype(np.complex128),), {}


# ----------------------------------------------------------------------------- parts
@op("real(Tensor(a) self) -> Tensor(a)", kind=VIEW, name_rule=_names.KEEP, method=False)
def real(self):
    """The real part of each element, as a view; a real tensor is its own real part."""
    return self.real if self.dtype.kind == "c" else self.view()


@real.meta_rule
def _(self):
    return TensorMeta(self.shape, self.dtype.to_real(), self.device)


@real.wirtinger_grad
def _(grad):
    return grad  # the engine widens it to the input's complex dtype: an imaginary part of 0


real.sample_inputs(_parts_samples)


@op("imag(Tensor(a) self) -> Tensor(a)", kind=VIEW, name_rule=_names.KEEP, method=False)
def imag(self):
    """The imaginary part of each element, as a view; real tensors have none (an error, as in PyTorch)."""
    if self.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return self.imag


@imag.meta_rule
def _(self):
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return TensorMeta(self.shape, self.dtype.to_real(), self.device)


imag.conj_rule = "resolve"  # the imaginary part of a conjugated tensor: its values, negated (not a view)


@imag.wirtinger_grad
def _(grad):
    return grad * 1j  # dL/dy of y = imag(z) is the imaginary part of z's gradient


@imag.sample_inputs
def _(rng):
    yield (_complex_samples(rng, 2, 3),), {}
    yield (_complex_samples(rng, 3).astype(np.complex128),), {}


@op("view_as_real(Tensor(a) self) -> Tensor(a)", kind=VIEW, method=False)
def view_as_real(self):
    """A complex tensor as a real one with a last dimension of 2 (real, imaginary), sharing its memory."""
    if self.dtype.kind != "c":
        raise RuntimeError(f"view_as_real is only supported for complex tensors, but got a tensor of scalar type: "
                           f"{_dt.title(self.dtype)}")
    return self[..., None].view(self.real.dtype)


@view_as_real.meta_rule
def _(self):
    if not self.dtype.is_complex:
        raise RuntimeError(f"view_as_real is only supported for complex tensors, but got a tensor of scalar type: "
                           f"{self.dtype.title}")
    return TensorMeta((*self.shape, 2), self.dtype.to_real(), self.device)


view_as_real.conj_rule = (
    "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you can view "
    "it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias the original.")


@view_as_real.wirtinger_grad
def _(grad):
    return api.view_as_complex(grad.contiguous())


@view_as_real.sample_inputs
def _(rng):
    yield (_complex_samples(rng, 2, 3),), {}
    yield (_complex_samples(rng).astype(np.complex128),), {}


@op("view_as_complex(Tensor(a) self) -> Tensor(a)", kind=VIEW, method=False)
def view_as_complex(self):
    """A real tensor whose last dimension is 2 (real, imaginary) as a complex one, sharing its memory."""
    if self.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, but got a tensor of "
                           f"scalar type: {_dt.title(self.dtype)}")
    if self.ndim == 0 or self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = self.itemsize
    if self.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * item) for s in self.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self.__array_interface__["data"][0] % (2 * item):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return self.view(np.complex64 if self.dtype == np.float32 else np.complex128)[..., 0]


@view_as_complex.meta_rule
def _(self):
    if self.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, but got a tensor of "
                           f"scalar type: {self.dtype.title}")
    if len(self.shape) == 0 or self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return TensorMeta(tuple(self.shape[:-1]), self.dtype.to_complex(), self.device)


@view_as_complex.wirtinger_grad
def _(grad):
    return api.view_as_real(grad.resolve_conj())


@view_as_complex.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 2)).astype(np.float32),), {}
    yield (rng.uniform(-2, 2, (2, 4, 2)),), {}


view_as_real_copy = op("view_as_real_copy(Tensor self) -> Tensor", kind=COMPOSITE, composite=True, method=False,
                       doc="``view_as_real`` into new memory.")(lambda self: api.clone(api.view_as_real(self)))
view_as_real_copy.meta_rule(view_as_real.meta)
view_as_real_copy.sample_inputs(view_as_real.samples)
view_as_real_copy.wirtinger_grad(view_as_real.derivative)
view_as_complex_copy = op("view_as_complex_copy(Tensor self) -> Tensor", kind=COMPOSITE, composite=True,
                          method=False, doc="``view_as_complex`` into new memory.")(
    lambda self: api.clone(api.view_as_complex(self)))
view_as_complex_copy.meta_rule(view_as_complex.meta)
view_as_complex_copy.sample_inputs(view_as_complex.samples)
view_as_complex_copy.wirtinger_grad(view_as_complex.derivative)


# ----------------------------------------------------------------------------- conjugation
@op("conj_physical(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="self", inplace=True)
def conj_physical(self):
    """The complex conjugate, computed into a new tensor (a copy of a real tensor)."""
    return np.conjugate(self) if self.dtype.kind == "c" else self.copy()


@conj_physical.wirtinger_grad
def _(grad):
    return api.conj_physical(grad)


conj_physical.sample_inputs(_parts_samples)


@op("_conj(Tensor(a) self) -> Tensor(a)", kind=VIEW, method=False)
def _conj(self):
    """A view of ``self``'s memory whose conjugation bit is flipped (the dispatcher carries the bit)."""
    return self.view()


_conj.wirtinger_grad(conj_physical.derivative)


@_conj.meta_rule
def _(self):
    return TensorMeta(self.shape, self.dtype, self.device)


@op("conj(Tensor(a) self) -> Tensor(a)", kind=COMPOSITE, name_rule=_names.KEEP, composite=True, out=False)
def conj(self):
    """The complex conjugate as a lazy view (``is_conj()``): it shares ``self``'s memory, and values are
    conjugated only when an op reads them; a real tensor is returned as it is."""
    if not self.is_complex():
        return self
    out = api._conj(self)
    flag = not self.is_conj()
    if flag:
        out._extras()["conj"] = True
    elif out._extra is not None:
        out._extra.pop("conj", None)
    return out


conj.wirtinger_grad(conj_physical.derivative)


@conj.meta_rule
def _(self):
    return TensorMeta(self.shape, self.dtype, self.device)


@conj.sample_inputs
def _(rng):
    # PyTorch's conjugate views of complex tensors do not convert to numpy; the complex cases are tested
    # in tests/ops/test_complex.py
    yield (rng.uniform(-2, 2, (2, 3)),), {}
    yield (rng.integers(-3, 3, (4,)),), {}


@_conj.sample_inputs
def _(rng):
    # none for the generated tests: torch's ``_conj`` asserts on real tensors, and its conjugate views of
    # complex ones do not convert to numpy; tests/ops/test_complex_more.py checks the views against torch
    yield from ()


@op("resolve_conj(Tensor(a) self) -> Tensor(a)", kind=COMPOSITE, composite=True, out=False)
def resolve_conj(self):
    """A tensor without the conjugation bit holding the same values (``self`` when the bit is not set)."""
    return api.clone(self) if self.is_conj() else self


resolve_conj.meta_rule(conj.meta)
resolve_conj.wirtinger_grad(lambda grad: grad)
resolve_conj.sample_inputs(_parts_samples)


# ----------------------------------------------------------------------------- polar form
@op("angle(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="(math.pi if self < 0 else (self if self != self else 0.0))",
    promotion=PROMOTE_INT_TO_FLOAT_REAL)
def angle(self):
    """The argument of each element in radians (``pi`` for negative reals, ``nan`` kept); a real dtype out."""
    with ignore_fp_errors():
        if self.dtype.kind == "c":
            return np.angle(self)
        return np.where(np.isnan(self), self, np.where(self < 0, np.pi, 0.0)).astype(self.dtype)


@angle.wirtinger_grad
def _(grad, self):
    if not self.is_complex():
        return grad * 0
    # d angle = (x dy - y dx) / |z|^2, so the gradient is grad * (-y + ix) / |z|^2 = grad * i z / |z|^2
    denom = self.real * self.real + self.imag * self.imag
    return grad * (self * 1j) / denom


@angle.sample_inputs
def _(rng):
    yield (_complex_samples(rng, 2, 3),), {}
    yield (np.array([-1.5, 2.0, -0.5], np.float32),), {}
    yield (rng.integers(-3, 3, (4,)),), {}


def _complex_out(a, b) -> np.ndarray:
    """The empty complex array ``complex``/``polar`` fill from parts ``a`` and ``b``, after PyTorch's checks."""
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_dt.title(a.dtype)} but got scalar type "
                           f"{_dt.title(b.dtype)} for second argument")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_dt.title(a.dtype)} and {_dt.title(b.dtype)}")
    return np.empty(np.broadcast_shapes(a.shape, b.shape), np.complex64 if a.dtype == np.float32 else np.complex128)


@op("complex(Tensor real, Tensor imag) -> Tensor", kind=ELEMENTWISE, formula="complex(real, imag)", method=False,
    promotion="none")
def complex_(real, imag):
    """A complex tensor from its real and imaginary parts (broadcast; both float32 or both float64)."""
    out = _complex_out(real, imag)
    out.real, out.imag = real, imag
    return out


def _parts_meta(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {a.dtype.title} but got scalar type {b.dtype.title} "
                           f"for second argument")
    if a.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {a.dtype.title} and "
                           f"{b.dtype.title}")
    return TensorMeta(broadcast_shapes(tuple(a.shape), tuple(b.shape)), a.dtype.to_complex(), a.device)


complex_.meta_rule(_parts_meta)


@complex_.wirtinger_grad
def _(grad):
    return api.real(grad), api.imag(grad)


@complex_.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (2, 3)).astype(np.float32), rng.uniform(-2, 2, (2, 3)).astype(np.float32)), {}
    yield (rng.uniform(-2, 2, (3,)), rng.uniform(-2, 2, (2, 1))), {}


@op("polar(Tensor abs, Tensor angle) -> Tensor", kind=ELEMENTWISE, method=False, promotion="none",
    formula="complex(abs * math.cos(angle), abs * math.sin(angle))")
def polar(abs, angle):  # noqa: A002  (PyTorch's argument names)
    """The complex tensor ``abs * (cos(angle) + i sin(angle))`` (broadcast; both float32 or both float64)."""
    out = _complex_out(abs, angle)
    out.real, out.imag = abs * np.cos(angle), abs * np.sin(angle)
    return out


polar.meta_rule(_parts_meta)


@polar.wirtinger_grad
def _(grad, result, abs):  # noqa: A002
    # z = r e^{i t}: dz/dr = e^{i t} = z / r, dz/dt = i z; each real input's gradient is Re(conj(dz) * grad)
    unit = api.sgn(result)
    g_abs = api.real(grad * api.conj_physical(unit))
    g_angle = api.real(grad * api.conj_physical(result * 1j))
    return g_abs, g_angle


@polar.sample_inputs
def _(rng):
    yield (rng.uniform(0.5, 2, (2, 3)).astype(np.float32), rng.uniform(-3, 3, (2, 3)).astype(np.float32)), {}
    yield (rng.uniform(0.5, 2, (3,)), rng.uniform(-3, 3, (2, 1))), {}

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("complex", "polar", "conj_physical_"))
