"""Elementwise arithmetic, signs and rounding, and the helpers the other elementwise families share.

Each op has a numpy kernel, a derivative written with registered ops, and a
scalar ``formula`` (a Python expression over the schema's argument names,
using ``math``, ``min``/``max``/``abs`` and the helpers of
``toolkit.backends.cpu.scalar``) that the fusion code generator inlines into
one loop body. Exponentials, logarithms, trigonometry and ``erf`` live in
``transcendental.py``; activations (sigmoid, relu, gelu, silu, softplus) in
``activation.py``.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes
from .._core import dtypes as _dt
from .._core.fp_errors import ignore_fp_errors
from .._core.meta import TensorMeta
from ..backends.cpu import map_kernel, rename
from . import _flops
from ._meta_rules import elementwise_meta
from .complex_refusal import no_complex_kernel, refuse_complex
from .grad_fn_rules import by_scalar_operand
from .registry import (
    ELEMENTWISE,
    PROMOTE_COMPLEX_TO_FLOAT,
    PROMOTE_DEFAULT,
    PROMOTE_INT_TO_FLOAT,
    PROMOTE_NONE,
    VIEW,
    get,
    op,
    refuses_names,
    runs_on_sparse_values,
)


def not_implemented(op_name: str, kernel: str, dtype) -> NotImplementedError:
    """PyTorch's error for a dtype a kernel does not support, prefixed with the op's name."""
    return NotImplementedError(f'{op_name}: "{kernel}" not implemented for \'{_dt.title(dtype)}\'')


def reject_dtypes(opdef, kernel: str, *, bool_: bool = True, integer: bool = False) -> None:
    """Give ``opdef`` a meta rule that raises, like its kernel, for bool (and integer) inputs."""

    @opdef.meta_rule
    def _(self, *rest):
        dt = getattr(self, "dtype", None)
        if dt is not None and not dt.is_floating_point and (integer or (bool_ and dt.name == "bool")):
            raise not_implemented(opdef.name, kernel, dt)
        return elementwise_meta(opdef, self, *rest)


def float_only(opdef, kernel: str) -> None:
    """Give ``opdef`` a meta rule that raises, like its kernel, when the promoted dtype is not floating point."""

    @opdef.meta_rule
    def _(*bound):
        meta = elementwise_meta(opdef, *bound)
        if not meta.dtype.is_floating_point:
            raise not_implemented(opdef.name, kernel, meta.dtype)
        return meta


# From here (in elements) a float32/float64 op whose kernel is its formula's compiled loop runs that loop: numpy's
# ``where`` took 1.65 us for 256 float32 values, the loop 1.25 us; below, the loop is left out so that work on a
# few values need not load numba (relu, clamp by numbers).
FORMULA_KERNEL_MIN = 1 << 8
FORMULA_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_F32, _F64 = FORMULA_KERNEL_DTYPES


def compiled_float(dt: np.dtype) -> bool:
    """Whether ``dt`` is one of ``FORMULA_KERNEL_DTYPES``, by identity (a native float32 array's dtype is that
    object): the test on the hot paths that pick a compiled loop, where ``in`` costs about 0.2 us."""
    return dt is _F32 or dt is _F64


def formula_kernel(name: str, params: tuple = (), constants: dict | None = None, names: dict | None = None):
    """The numba map kernel of registered op ``name``'s own formula (one source of truth for both paths);
    ``names`` renames formula arguments (old -> new) that clash with the kernel generator's names."""
    d = get(name)
    inputs = tuple(d.arg_names[i] for i in d.tensor_args)
    expr = d.formula
    if names:
        expr = rename(expr, names)
        inputs = tuple(names.get(a, a) for a in inputs)
        params = tuple(names.get(a, a) for a in params)
    return map_kernel(expr, inputs, params, constants)


def float_unary(name: str, fn, formula: str, doc: str):
    """Register a one-input op that computes in floating point (integers and bool promote to float)."""

    def kernel(self):
        with ignore_fp_errors():
            return fn(self)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = doc
    return op(f"{name}(Tensor self) -> Tensor", kind=ELEMENTWISE, formula=formula, promotion=PROMOTE_INT_TO_FLOAT,
              inplace=True)(kernel)


def compute_dtype(*values) -> np.dtype:
    """The dtype a kernel computes in: its first array's (the dispatcher cast them all to it)."""
    for v in values:
        if isinstance(v, (np.ndarray, np.generic)):
            return v.dtype
    return np.result_type(*values)


def int_divisor_check(name: str, other, out: np.ndarray) -> None:
    """PyTorch raises for integer division by zero (only where there are elements to compute)."""
    if out.size and np.any(np.asarray(other) == 0):
        raise RuntimeError(f"{name}: ZeroDivisionError")


def _zeros(grad):
    """The gradient of a piecewise-constant op (floor, sign, ...): zero, kept in the graph for double backward."""
    return grad * 0


# ----------------------------------------------------------------------------- arithmetic
def _scaled(name: str, self, other, alpha):
    """``alpha * other`` in the compute dtype, after PyTorch's alpha checks (``alpha`` is not 1, or a bool)."""
    dt = compute_dtype(self, other)
    if isinstance(alpha, (bool, np.bool_)) and dt != np.bool_:
        raise RuntimeError(f"{name}: Boolean alpha only supported for Boolean results.")
    if dt.kind in "biu" and not isinstance(alpha, (int, np.integer, np.bool_)):
        raise RuntimeError(f"{name}: For integral input tensors, argument alpha must not be a floating point number.")
    if dt == np.bool_:
        alpha = bool(alpha)  # computed in bool, as PyTorch does: any nonzero alpha is True
    if alpha == 1:
        return other
    return np.multiply(other, alpha, dtype=np.result_type(other)) if isinstance(other, np.ndarray) else other * alpha


@op("add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", kind=ELEMENTWISE,
    formula="self + alpha * other", flops=_flops.elementwise, inplace=True, dunders=("add", "radd", "iadd"),
    identities=(("self", "other", 0, None), ("other", "self", 0, ("alpha", 1))), numbers_as_tensors=True)
def add(self, other, alpha=1, out=None):
    """Add ``other``, scaled by ``alpha``, to ``self`` elementwise, with broadcasting."""
    if alpha != 1 or type(alpha) is not int:
        other = _scaled("add", self, other, alpha)
    return np.add(self, other, out=out)


@add.grad
def _(grad, alpha):
    return grad, (grad if alpha == 1 else grad * alpha)


def _sub_check(dtypes) -> None:
    """PyTorch's sub_check: no bool operand (a Python bool counts as one), with its two messages."""
    bools = sum(d is _dt.bool for d in dtypes)
    if bools == len(dtypes):
        raise RuntimeError("sub: Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if bools:
        raise RuntimeError("sub: Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


@op("sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", kind=ELEMENTWISE,
    formula="self - alpha * other", inplace=True, dunders=("sub", "rsub", "isub"),
    identities=(("self", "other", 0, None),), numbers_as_tensors=True, check_dtypes=_sub_check)
def sub(self, other, alpha=1, out=None):
    """Subtract ``alpha * other`` from ``self`` elementwise."""
    if isinstance(self, np.ndarray) and self.dtype == np.bool_:
        _sub_check([_dt.bool, _dt.bool])
    if alpha != 1 or type(alpha) is not int:
        other = _scaled("sub", self, other, alpha)
    return np.subtract(self, other, out=out)


@sub.grad
def _(grad, alpha, needs_input_grad):
    return grad, (-grad if alpha == 1 else grad * (-alpha)) if needs_input_grad[1] else None


@op("rsub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", kind=ELEMENTWISE, out=False,
    formula="other - alpha * self", method=False, check_dtypes=_sub_check,
    grad_fn=by_scalar_operand("RsubBackward0", "RsubBackward1"))
def rsub(self, other, alpha=1):
    """``other - alpha * self``: what ``2 - x`` runs (and records), as in PyTorch."""
    return sub.kernels["cpu"](other, self, alpha)


@rsub.grad
def _(grad, alpha):
    return (-grad if alpha == 1 else grad * (-alpha)), grad


@op("mul(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="self * other", inplace=True,
    flops=_flops.elementwise, numbers_as_tensors=True,
    dunders=("mul", "rmul", "imul"), identities=(("self", "other", 1, None), ("other", "self", 1, None)))
def mul(self, other, out=None):
    """Multiply elementwise, with broadcasting."""
    if (out is None and type(self) is np.ndarray and type(other) is np.ndarray
            and (self.size >= ROW_SCALE_MIN or other.size >= ROW_SCALE_MIN)):
        r = _scaled_rows(self, other)
        if r is None:
            r = _scaled_rows(other, self)  # x * s is s * x, bit for bit
        if r is not None:
            return r
    return np.multiply(self, other, out=out)


# From here (elements of the larger operand) a product by per-row values runs the compiled loop of ``_rows_numba``.
ROW_SCALE_MIN = 1 << 12


def _scaled_rows(a: np.ndarray, b: np.ndarray):
    """``a * b`` where ``b`` has ``a``'s leading dims and ones after them (one value per row of ``a``), both
    C-contiguous float32 or both float64; None for any other pair."""
    if a.dtype is not b.dtype or a.ndim != b.ndim or a.ndim < 2 or not compiled_float(a.dtype):
        return None
    shape = b.shape
    k = len(shape)
    while k and shape[k - 1] == 1:
        k -= 1
    if k == 0 or k == a.ndim or shape[:k] != a.shape[:k] or not a.flags.c_contiguous or not b.flags.c_contiguous:
        return None
    from ._rows_numba import scale_rows  # optional: numba, never loaded by import toolkit

    rows = b.size
    out = np.empty(a.shape, a.dtype)
    scale_rows(a.reshape(rows, -1), b.reshape(rows), out.reshape(rows, -1))
    return out


@mul.grad
def _(grad, self, other, needs_input_grad):
    return (grad * other if needs_input_grad[0] else None), (grad * self if needs_input_grad[1] else None)


@op("div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor", kind=ELEMENTWISE,
    formula="self / other", promotion=PROMOTE_INT_TO_FLOAT, mode_promotion=("rounding_mode", PROMOTE_DEFAULT),
    inplace=True, numbers_as_tensors=True, dunders=("truediv", "rtruediv", "itruediv", "div", "rdiv", "idiv"),
    identities=(("self", "other", 1, ("rounding_mode", None)),),
    grad_fn=lambda bound, outputs: "DivBackward0" if bound[2] is None else "DivBackward2")  # div.Tensor_mode
def div(self, other, rounding_mode=None, out=None):
    """True division, or with ``rounding_mode`` ``'trunc'``/``'floor'`` the rounded quotient.

    True division promotes integers to float; a rounded quotient keeps the
    inputs' common dtype, so integers divide exactly (``2**40 + 1`` stays
    itself), and an integer division by zero raises, as in PyTorch.
    """
    if rounding_mode is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.true_divide(self, other, out=out)
    if rounding_mode == "floor":
        return floor_quotient("div", self, other, out)
    if rounding_mode != "trunc":
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    dt = compute_dtype(self, other)
    if dt == np.bool_:
        raise not_implemented("div", "div_trunc_cpu", dt)
    with ignore_fp_errors():
        if dt.kind == "f":
            return np.trunc(np.true_divide(self, other), out=out)
        q, r = np.divmod(self, other)
    int_divisor_check("div", other, q)
    if dt.kind == "i":
        q += (r != 0) & (q < 0)  # a floored negative quotient with a remainder is one below the truncated
    return _into(q, out)


def floor_quotient(name: str, self, other, out=None):
    """The quotient rounded toward minus infinity (``div(..., rounding_mode='floor')``, ``floor_divide``, ``//``):
    fmod-based for floats, as PyTorch's div_floor and numpy's; exact for integers, which refuse a zero divisor."""
    dt = compute_dtype(self, other)
    if dt == np.bool_:
        raise not_implemented(name, "div_floor_cpu", dt)
    if dt.kind == "f":
        with ignore_fp_errors():
            return np.floor_divide(self, other, out=out)
    with ignore_fp_errors():
        q = np.floor_divide(self, other)  # into a temporary: nothing is written before the divisor check
    int_divisor_check(name, other, q)
    return _into(q, out)


def _into(result: np.ndarray, out):
    """``result``, or ``out`` holding it (an in-place kernel's destination)."""
    if out is None:
        return result
    np.copyto(out, result, casting="unsafe")
    return out


@div.grad
def _(grad, self, other, needs_input_grad, rounding_mode=None):
    if rounding_mode is not None:
        return grad * 0, (grad * 0 if isinstance(other, type(grad)) else None)
    ga = grad / other if needs_input_grad[0] else None
    gb = -grad * self / (other * other) if needs_input_grad[1] else None
    return ga, gb


@op("neg(Tensor self) -> Tensor", kind=ELEMENTWISE, out="exact", formula="-self", inplace=True, dunders=("neg",))
def neg(self):
    """Negate elementwise (integers wrap around, as in PyTorch)."""
    if self.dtype == np.bool_:
        raise RuntimeError(
            "neg: Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return np.negative(self)


@neg.meta_rule
def _(self):
    if self.dtype.name == "bool":
        raise RuntimeError(
            "neg: Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return elementwise_meta(neg, self)


@neg.grad
def _(grad):
    return -grad


@op("positive(Tensor(a) self) -> Tensor(a)", kind=VIEW, formula="self", dunders=("pos",))
def positive(self):
    """``+self``: the input itself (a view sharing its storage), as in PyTorch; bool tensors are refused."""
    if self.dtype == np.bool_:
        raise RuntimeError("positive: The `+` operator, on a bool tensor is not supported.")
    return self.view()


@positive.grad
def _(grad):
    return grad


@positive.meta_rule
def _(self):
    if self.dtype.name == "bool":
        raise RuntimeError("positive: The `+` operator, on a bool tensor is not supported.")
    return TensorMeta(self.shape, self.dtype, self.device)


@op("abs(Tensor self) -> Tensor", kind=ELEMENTWISE, out="exact", formula="abs(self)", inplace=True, dunders=("abs",),
    promotion=PROMOTE_COMPLEX_TO_FLOAT)
def absolute(self):
    """Absolute value, keeping integer dtypes (``abs(-128)`` stays ``-128`` in int8, as in PyTorch)."""
    if self.dtype == np.bool_:
        raise not_implemented("abs", "abs_cpu", self.dtype)
    return np.abs(self)


reject_dtypes(absolute, "abs_cpu")


@absolute.wirtinger_grad
def _(grad, self):
    return grad * self.sgn()  # sign(x) for reals, z / |z| for complex


@op("sign(Tensor self) -> Tensor", kind=ELEMENTWISE, out="exact",
    formula="(1.0 if self > 0 else (-1.0 if self < 0 else 0.0))", inplace=True)
def sign(self):
    """-1, 0 or 1 by the sign of each element; ``sign(nan)`` and ``sign(-0.0)`` are 0 as in PyTorch."""
    if self.dtype == np.bool_:
        return self.copy()
    if self.dtype.kind == "f":
        return (self > 0).astype(self.dtype) - (self < 0).astype(self.dtype)
    return np.sign(self)


@sign.grad
def _(grad):
    return _zeros(grad)


@op("square(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="self * self", promotion=PROMOTE_NONE,
    inplace=True, grad_fn="PowBackward0")
def square(self):
    """``self * self``; bool squares to int64, as PyTorch's ``pow(self, 2)`` promotes it."""
    if isinstance(self, np.ndarray) and self.dtype == np.bool_:
        return self.astype(np.int64)
    with np.errstate(over="ignore"):
        return np.multiply(self, self)


@square.meta_rule
def _(self):
    return TensorMeta(self.shape, dtypes.int64 if self.dtype.name == "bool" else self.dtype, self.device)


@square.grad
def _(grad, self):
    return grad * 2 * self


reciprocal = float_unary("reciprocal", np.reciprocal, "1.0 / self", "``1 / self`` elementwise (``inf`` at 0).")


@reciprocal.grad
def _(grad, result):
    return -grad * result * result


# ----------------------------------------------------------------------------- rounding
def _rounding(name: str, fn, formula: str, doc: str, vml: str):
    """Register a rounding op: floats round, integers come back as a copy, bool is refused (as in PyTorch)."""

    def kernel(self):
        if self.dtype == np.bool_:
            raise not_implemented(name, vml, self.dtype)
        if self.dtype.kind != "f":
            return self.copy()
        return fn(self)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = doc
    d = op(f"{name}(Tensor self) -> Tensor", kind=ELEMENTWISE, out="exact", formula=formula, inplace=True)(kernel)
    reject_dtypes(d, vml)
    d.grad(lambda grad: _zeros(grad))
    return d


floor = _rounding("floor", np.floor, "floor(self)", "Round down to an integer value (same dtype).", "floor_vml_cpu")
ceil = _rounding("ceil", np.ceil, "ceil(self)", "Round up to an integer value (same dtype).", "ceil_vml_cpu")
trunc = _rounding("trunc", np.trunc, "trunc(self)", "Round toward zero (same dtype).", "trunc_vml_cpu")
round_half_even = _rounding("round", np.rint, "rint(self)",
                             "Round to the nearest integer, halves to even (``round(2.5) == 2``), as PyTorch does.",
                             "round_vml_cpu")

_ROUND_DECIMALS = (
    "(rint(self * 10.0 ** decimals) / 10.0 ** decimals) if decimals >= 0 "
    "else (rint(self / 10.0 ** -decimals) * 10.0 ** -decimals)"
)


@op("round.decimals(Tensor self, *, int decimals) -> Tensor", kind=ELEMENTWISE, out="exact", formula=_ROUND_DECIMALS,
    inplace=True, grad_fn="RoundBackward1")
def round_decimals(self, decimals):
    """Round to ``decimals`` decimal places (negative: to the left of the point), halves to even.

    Computed as PyTorch does: scale by ``10 ** |decimals|`` in the input's
    precision (float32 for half), round, scale back.
    """
    if self.dtype.kind != "f":
        raise not_implemented("round", "round_vml_cpu" if decimals == 0 else "round_cpu", self.dtype)
    compute = np.dtype(np.float32) if self.dtype == np.float16 else self.dtype
    x = self.astype(compute, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        if decimals >= 0:
            p = compute.type(10.0 ** decimals)
            out = np.rint(x * p) / p
        else:
            p = compute.type(10.0 ** -decimals)
            out = np.rint(x / p) * p
    return out.astype(self.dtype, copy=False)


@round_decimals.meta_rule
def _(self, decimals):
    if not self.dtype.is_floating_point:
        raise not_implemented("round", "round_vml_cpu" if decimals == 0 else "round_cpu", self.dtype)
    return elementwise_meta(round_decimals, self, decimals)


@round_decimals.grad
def _(grad):
    return _zeros(grad)


@op("frac(Tensor self) -> Tensor", kind=ELEMENTWISE, out="exact", formula="self - trunc(self)", inplace=True)
def frac(self):
    """The fractional part ``self - trunc(self)``, with the sign of ``self``; floats only."""
    if self.dtype.kind != "f":
        raise not_implemented("frac", "frac_cpu", self.dtype)
    with np.errstate(invalid="ignore"):
        return self - np.trunc(self)


reject_dtypes(frac, "frac_cpu", integer=True)


@frac.grad
def _(grad):
    return grad


# ----------------------------------------------------------------------------- samples
def unary_samples(rng, low=-2.0, high=2.0):
    """A matrix, a transposed (non-contiguous) one, a 0-d and a zero-size input, values in [low, high)."""
    yield (rng.uniform(low, high, (3, 4)),), {}
    yield (rng.uniform(low, high, (4, 3)).T,), {}
    yield (np.array(rng.uniform(low, high)),), {}
    yield (rng.uniform(low, high, (0, 3)),), {}


def away_from_zero(rng, low=0.3, high=2.0):
    """Like ``unary_samples`` but with |x| in [low, high): for ops with a kink or pole at 0."""
    for (x,), kw in unary_samples(rng, low, high):
        yield (np.asarray(x * rng.choice([-1.0, 1.0], x.shape)),), kw


def int_and_bool(rng):
    yield (rng.integers(-5, 6, (2, 3)),), {}
    yield (rng.random((2, 3)) > 0.5,), {}


def _between_integers(rng):
    """Values whose fractional part is in (0.1, 0.4) or (0.6, 0.9): away from the jumps of floor/round."""
    for (x,), kw in unary_samples(rng, -3.0, 3.0):
        frac = rng.uniform(0.1, 0.4, x.shape) + rng.choice([0.0, 0.5], x.shape)
        yield (np.asarray(np.floor(x) + frac),), kw


def _binary_samples(rng, low=-2.0, high=2.0):
    yield (rng.uniform(low, high, (3, 4)), rng.uniform(low, high, (3, 4))), {}
    yield (rng.uniform(low, high, (2, 3, 4)), rng.uniform(low, high, (4,))), {}
    yield (rng.uniform(low, high, (4, 3)).T, rng.uniform(low, high, (3, 1))), {}
    yield (rng.uniform(low, high, (3,)), 1.5), {}
    yield (np.array(rng.uniform(low, high)), rng.uniform(low, high, (2, 2))), {}


def float_samples(*ops, low=-2.0, high=2.0, ints=True):
    """Attach ``unary_samples`` in [low, high) (plus integer and bool inputs) to each op."""

    def gen(rng):
        yield from unary_samples(rng, low, high)
        if ints:
            yield from int_and_bool(rng)

    for o in ops:
        o.sample_inputs(gen)


mul.sample_inputs(_binary_samples)
float_samples(square)


@add.sample_inputs
def _(rng):
    yield from _binary_samples(rng)
    yield (rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 2))), {"alpha": 2.5}
    yield (rng.integers(-5, 5, (3,)), rng.integers(-5, 5, (3,))), {}


@sub.sample_inputs
def _(rng):
    yield from _binary_samples(rng)
    yield (rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (2,))), {"alpha": -0.5}


@rsub.sample_inputs
def _(rng):
    yield from _binary_samples(rng)
    yield (rng.uniform(-1, 1, (3, 2)), 2), {"alpha": 0.5}


@div.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(0.5, 2, (3, 4))), {}
    yield (rng.uniform(-2, 2, (2, 3)), rng.uniform(0.5, 2, (3,))), {}
    yield (rng.integers(-9, 9, (4,)), rng.integers(1, 4, (4,))), {}
    yield (rng.uniform(-5, 5, (4,)), rng.uniform(0.5, 2, (4,))), {"rounding_mode": "floor"}
    yield (rng.uniform(-5, 5, (4,)), -0.75), {"rounding_mode": "trunc"}
    big = np.array([2**40 + 1, -(2**40) - 1, 2**62 + 3, -7, 7, 0])
    yield (big, np.array([1, 3, -3, 2, -2, 5])), {"rounding_mode": "floor"}
    yield (big, np.array([1, 3, -3, 2, -2, 5])), {"rounding_mode": "trunc"}
    yield (big, 3), {"rounding_mode": "trunc"}
    yield (rng.integers(0, 250, (5,)).astype(np.uint8), 7), {"rounding_mode": "floor"}
    yield (rng.integers(-9, 9, (2, 3)).astype(np.int32), rng.integers(1, 4, (3,)).astype(np.int16)), {
        "rounding_mode": "floor"}


@neg.sample_inputs
def _(rng):
    yield from unary_samples(rng)
    yield (rng.integers(-5, 6, (2, 3)),), {}


@positive.sample_inputs
def _(rng):
    yield from unary_samples(rng)
    yield (rng.integers(-5, 6, (2, 3)),), {}


@absolute.sample_inputs
def _(rng):
    yield from away_from_zero(rng)
    yield (rng.integers(-5, 6, (2, 3)),), {}


@sign.sample_inputs
def _(rng):
    yield from away_from_zero(rng)
    yield from int_and_bool(rng)


@reciprocal.sample_inputs
def _(rng):
    yield from away_from_zero(rng, 0.5, 2.0)
    yield from int_and_bool(rng)


def _rounding_samples(rng):
    yield from _between_integers(rng)
    yield (rng.integers(-5, 6, (2, 3)),), {}


for _o in (floor, ceil, trunc, round_half_even):
    _o.sample_inputs(_rounding_samples)


@round_decimals.sample_inputs
def _(rng):
    yield (rng.uniform(-3, 3, (3, 4)) + 0.0013,), {"decimals": 2}
    yield (rng.uniform(-300, 300, (4, 3)).T + 1.3,), {"decimals": -1}
    yield (np.array([0.125, 0.375, -2.3, 1234.5678]),), {"decimals": 0}


@frac.sample_inputs
def _(rng):
    yield from _between_integers(rng)


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("round",), no_complex_kernel("round_vml_cpu"))
refuse_complex(("frac",), no_complex_kernel("frac_cpu"))
refuse_complex(("floor", "ceil", "trunc"), "{name} is not supported for complex inputs")
refuse_complex(("abs_",), "In-place abs is not supported for complex tensors.", RuntimeError)
# (``sign`` refuses complex in pointwise.py, once ``sgn`` has taken its kernel)

# PyTorch's sparse kernels for these map the values (each maps zero to zero).
runs_on_sparse_values(("abs", "ceil", "floor", "frac", "round", "sign", "square", "trunc"))


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def onnx_promote(g, *xs, floating: bool = False) -> tuple:
    """ONNX ops take one dtype where PyTorch promotes: the inputs cast to their common dtype (to the default
    float dtype as well with ``floating``, for ops that compute integers as floats). Unknown dtypes stay."""
    known = [g.dtype(x) for x in xs if x is not None]
    if not known or any(d is None for d in known):
        return xs
    # 0-dim tensors are a lower tier of PyTorch's promotion: they only count when of a higher category.
    dims = [g.dtype(x) for x in xs if x is not None and g.rank(x) != 0]
    zero_dim = [g.dtype(x) for x in xs if x is not None and g.rank(x) == 0]
    common = _dt.result_type_from(dims, zero_dim, ())
    if floating and not common.is_floating_point:
        common = _dt.get_default_dtype()
    return tuple(x if x is None or g.dtype(x) is common else g.op("Cast", x, to=common) for x in xs)


def _onnx_scaled(g, other, alpha):
    return other if alpha == 1 else g.op("Mul", other, g.constant(alpha, g.dtype(other)))


@add.symbolic
def _(g, self, other, alpha=1):
    self, other = onnx_promote(g, self, other)
    if g.dtype(self) is _dt.bool:
        return g.op("Or", self, other)
    return g.op("Add", self, _onnx_scaled(g, other, alpha))


@sub.symbolic
def _(g, self, other, alpha=1):
    self, other = onnx_promote(g, self, other)
    return g.op("Sub", self, _onnx_scaled(g, other, alpha))


@mul.symbolic
def _(g, self, other):
    self, other = onnx_promote(g, self, other)
    return g.op("And" if g.dtype(self) is _dt.bool else "Mul", self, other)


@div.symbolic
def _(g, self, other, rounding_mode=None):
    if rounding_mode is None:
        return g.op("Div", *onnx_promote(g, self, other, floating=True))
    self, other = onnx_promote(g, self, other)
    if g.dtype(self) is not None and not g.dtype(self).is_floating_point:
        if rounding_mode == "trunc":
            return g.op("Div", self, other)  # ONNX divides integers truncating, as C does
        # floor: take off the remainder of floor division (Mod with fmod=0 has the divisor's sign) first, so
        # the truncating Div is exact
        return g.op("Div", g.op("Sub", self, g.op("Mod", self, other, fmod=0)), other)
    q = g.op("Div", self, other)
    if rounding_mode == "floor":
        return g.op("Floor", q)
    return g.op("Where", g.op("Less", q, g.constant(0.0, g.dtype(q))), g.op("Ceil", q), g.op("Floor", q))


@neg.symbolic
def _(g, self):
    return g.op("Neg", self)


@absolute.symbolic
def _(g, self):
    return g.op("Abs", self)

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("round.decimals",))
