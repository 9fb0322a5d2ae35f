"""Tensor dtypes and PyTorch's type-promotion rules.

A ``dtype`` wraps a numpy dtype so CPU kernels can hand arrays straight to
numpy, while promotion follows PyTorch rather than numpy (they differ, e.g.
``int64 + float16`` is ``float16`` in PyTorch and ``float64`` in numpy, and
Python scalars only promote across categories).
"""

from __future__ import annotations

import math

import numpy as np


class dtype:
    """A tensor element type, printed as PyTorch prints it (``toolkit.float32``)."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_signed", "is_complex", "_rank", "_category", "cpp_name",
                 "title")

    def __init__(self, name: str, np_dtype, rank: int, category: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == FLOAT
        self.is_complex = category == COMPLEX_CATEGORY
        self.is_signed = name not in ("bool", "uint8")
        self._rank = rank
        self._category = category
        self.title = _TITLES[name]  # PyTorch's scalar-type name in error messages: Float, Long, ...
        self.cpp_name = _CPP_NAMES[name]  # its C++ type in other messages: float, long int, c10::Half, ...

    def __repr__(self) -> str:
        return f"toolkit.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> dtype:
        """The real dtype of a complex one's parts (``complex64`` -> ``float32``); any other dtype is itself."""
        return _REAL_OF.get(self.name, self)

    def to_complex(self) -> dtype:
        """The complex dtype whose parts are this floating dtype (``float32`` -> ``complex64``)."""
        if self._category == COMPLEX_CATEGORY:
            return self
        if self.name == "float16":
            raise TypeError("toolkit has no complex32 (ComplexHalf) dtype")
        if self._category != FLOAT:
            raise RuntimeError(f"Unknown Complex ScalarType for {self.title}")
        return complex64 if self.name == "float32" else complex128

    @property
    def is_integral(self) -> bool:
        return self._category == INT


BOOL, INT, FLOAT, COMPLEX_CATEGORY = 0, 1, 2, 3
_TITLES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
           "float16": "Half", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
           "complex128": "ComplexDouble"}
_CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
              "int64": "long int", "float16": "c10::Half", "float32": "float", "float64": "double",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}

bool = dtype("bool", np.bool_, 0, BOOL)  # noqa: A001
uint8 = dtype("uint8", np.uint8, 1, INT)
int8 = dtype("int8", np.int8, 1, INT)
int16 = dtype("int16", np.int16, 2, INT)
int32 = dtype("int32", np.int32, 3, INT)
int64 = dtype("int64", np.int64, 4, INT)
float16 = dtype("float16", np.float16, 5, FLOAT)
float32 = dtype("float32", np.float32, 6, FLOAT)
float64 = dtype("float64", np.float64, 7, FLOAT)
complex64 = dtype("complex64", np.complex64, 10, COMPLEX_CATEGORY)
complex128 = dtype("complex128", np.complex128, 11, COMPLEX_CATEGORY)
_REAL_OF = {"complex64": float32, "complex128": float64}


class qdtype(dtype):
    """A quantized element type (``toolkit.quint8``): integers standing for ``(q - zero_point) * scale``.

    Its ``np`` is the integer array type a quantized tensor stores; PyTorch refuses to say whether it is signed
    and to promote it with any other dtype, so these refuse too."""

    __slots__ = ()

    def __init__(self, name: str, np_dtype, itemsize_: int):
        self.name, self.np, self.itemsize = name, np.dtype(np_dtype), itemsize_
        self.is_floating_point = self.is_complex = False
        self._rank, self._category = None, QUANTIZED
        self.title = {"quint8": "QUInt8", "qint8": "QInt8", "qint32": "QInt32", "quint4x2": "QUInt4x2",
                      "quint2x4": "QUInt2x4"}[name]
        self.cpp_name = "c10::" + name

    @property
    def is_signed(self):
        raise RuntimeError("isSignedType not supported for quantized types")


QUANTIZED = 4
quint8 = qdtype("quint8", np.uint8, 1)
qint8 = qdtype("qint8", np.int8, 1)
qint32 = qdtype("qint32", np.int32, 4)
quint4x2 = qdtype("quint4x2", np.uint8, 1)
quint2x4 = qdtype("quint2x4", np.uint8, 1)
QUANTIZED_DTYPES = (quint8, qint8, qint32, quint4x2, quint2x4)

# The real dtypes; op families that accept complex say so, and ``COMPLEX`` lists those dtypes apart so
# tests generated over ``ALL`` keep meaning "every real dtype".
ALL = (bool, uint8, int8, int16, int32, int64, float16, float32, float64)
COMPLEX = (complex64, complex128)
FLOATING = (float16, float32, float64)
INTEGRAL = (uint8, int8, int16, int32, int64)

# PyTorch's aliases.
half = float16
float = float32  # noqa: A001
double = float64
short = int16
int = int32  # noqa: A001
long = int64
cfloat = complex64
cdouble = complex128

_NAMES = {d.name: d for d in ALL + COMPLEX + QUANTIZED_DTYPES}
_NAMES.update(half=half, float=float32, double=double, short=short, int=int32, long=long, cfloat=cfloat,
              cdouble=cdouble)
FROM_NUMPY = {d.np: d for d in ALL + COMPLEX}  # numpy dtype -> dtype, for hot paths that know the dtype is supported

_default_dtype = float32


def _by_name(name: str) -> dtype:
    return _NAMES[name]


def title(d) -> str:
    """PyTorch's scalar-type name (``Float``, ``Long``) of a toolkit dtype, numpy dtype or dtype name."""
    if isinstance(d, dtype):
        return d.title
    name = d if isinstance(d, str) else np.dtype(d).name
    return _TITLES.get(name, name)


def get_default_dtype() -> dtype:
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the dtype used for Python floats and float factories (float32 or float64 as in PyTorch)."""
    global _default_dtype
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the default type, got {d}")
    _default_dtype = d
    for forget in default_dtype_listeners:
        forget()


default_dtype_listeners: list = []  # caches of promotion results (the dispatcher's) to clear on a change


def from_numpy_dtype(np_dtype) -> dtype:
    """Map a numpy dtype to ours; unsupported ones raise TypeError naming the dtype."""
    try:
        return FROM_NUMPY[np_dtype]
    except KeyError:
        pass
    nd = np.dtype(np_dtype)
    if nd in FROM_NUMPY:
        return FROM_NUMPY[nd]
    raise TypeError(
        f"can't convert np.ndarray of type {nd}. The only supported types are: "
        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
    )


def cpp_name(d) -> str:
    """PyTorch's C++ spelling of ``d`` (a toolkit or numpy dtype) in its messages: ``float``, ``long int``..."""
    return (d if isinstance(d, dtype) else from_numpy_dtype(np.dtype(d))).cpp_name


def as_dtype(d) -> dtype:
    """Accept our dtype, a numpy dtype, a Python type or a name and return our dtype."""
    if isinstance(d, dtype):
        return d
    if d is builtins_float:
        return _default_dtype
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool
    if d is builtins_complex:
        return _default_dtype.to_complex()
    if isinstance(d, str):
        key = d[6:] if d.startswith("torch.") else d[8:] if d.startswith("toolkit.") else d
        if key in _NAMES:
            return _NAMES[key]
        raise TypeError(f"unknown dtype name {d!r}")
    try:
        return from_numpy_dtype(d)
    except TypeError:
        raise TypeError(f"expected a dtype, got {d!r}") from None


import builtins as _builtins  # noqa: E402

builtins_float = _builtins.float
builtins_int = _builtins.int
builtins_bool = _builtins.bool
builtins_complex = _builtins.complex


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's ``promote_types``: the smallest dtype both can be cast to safely."""
    if a is b:
        return a
    if a._category == QUANTIZED or b._category == QUANTIZED:
        raise RuntimeError("promoteTypes with quantized numbers is not handled yet; figure out what the correct "
                           f"rules should be, offending types: {a.title} {b.title}")
    if a._category == COMPLEX_CATEGORY or b._category == COMPLEX_CATEGORY:
        # the wider of the two parts' precisions, complex (float16 parts widen to complex64's)
        real = promote_types(a.to_real(), b.to_real())
        return complex128 if real is float64 else complex64
    return _PROMOTE[a._rank if a is not uint8 else 8][b._rank if b is not uint8 else 8]


def _build_promote_table():
    # Index 8 is uint8 (rank 1 is shared with int8 for ordering).
    order = [bool, int8, int16, int32, int64, float16, float32, float64, uint8]
    table = [[None] * 9 for _ in range(9)]
    for i, x in enumerate(order):
        for j, y in enumerate(order):
            if x is y:
                r = x
            elif x is bool:
                r = y
            elif y is bool:
                r = x
            elif x.is_floating_point or y.is_floating_point:
                if x.is_floating_point and y.is_floating_point:
                    r = x if x._rank > y._rank else y
                else:
                    r = x if x.is_floating_point else y
            elif uint8 in (x, y):
                other = y if x is uint8 else x
                r = int16 if other is int8 else other
            else:
                r = x if x._rank > y._rank else y
            table[i][j] = r
    return table


_PROMOTE = _build_promote_table()


def scalar_category(value) -> int:
    """Category of a Python number: bool < int < float < complex."""
    t = type(value)
    if t is builtins_bool or t is np.bool_:
        return BOOL
    if t is builtins_int or isinstance(value, np.integer):
        return INT
    if t is builtins_float or isinstance(value, np.floating):
        return FLOAT
    if t is builtins_complex or isinstance(value, np.complexfloating):
        return COMPLEX_CATEGORY
    raise TypeError(f"expected a number, got {type(value).__name__}")


def scalar_default_dtype(value) -> dtype:
    """The dtype a Python scalar becomes as a tensor: bool, int64, the default float dtype or its complex."""
    c = scalar_category(value)
    if c == COMPLEX_CATEGORY:
        return _default_dtype.to_complex()
    return bool if c == BOOL else int64 if c == INT else _default_dtype


def _combine_categories(higher, lower):
    # c10's combine_categories: a lower tier wins only by being of a higher category; a complex lower tier
    # over a floating higher one keeps the higher one's precision.
    if higher is None:
        return lower
    if lower is None or higher._category == COMPLEX_CATEGORY:
        return higher
    if lower._category == COMPLEX_CATEGORY:
        return higher.to_complex() if higher._category == FLOAT else lower
    if higher._category == FLOAT:
        return higher
    if higher is bool or lower._category == FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type_from(dims_dtypes, zero_dim_dtypes, scalar_values) -> dtype:
    """PyTorch's three-tier promotion: dimensioned tensors, then 0-dim tensors, then Python scalars.

    A lower tier only affects the result when it is of a higher category (bool < int < float < complex).
    """
    dim_r = None
    for d in dims_dtypes:
        dim_r = d if dim_r is None else promote_types(dim_r, d)
    zero_r = None
    for d in zero_dim_dtypes:
        zero_r = d if zero_r is None else promote_types(zero_r, d)
    wrapped = None
    for v in scalar_values:
        d = scalar_default_dtype(v)
        wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine_categories(dim_r, _combine_categories(zero_r, wrapped))


def can_cast(from_: dtype, to: dtype) -> bool:
    """PyTorch's ``can_cast`` (same-kind casting: no float to int, no int to bool)."""
    return from_._category <= to._category


_C_SCALAR_NAMES = {"float32": "float", "float64": "double", "float16": "double", "bfloat16": "double",
                   "int32": "int", "int64": "int64_t", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


_C_TYPE_NAMES = {**_C_SCALAR_NAMES, "float16": "c10::Half", "bfloat16": "c10::BFloat16", "bool": "bool",
                 "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def checked_scalar(value, target) -> object:
    """``value`` ready to fill an array of numpy dtype ``target``, refused as PyTorch's ``checked_convert`` refuses a
    number its type cannot hold (``full``, ``fill_``, ``new_full``): a number beyond the finite range of a
    floating or complex ``target`` (infinity and NaN pass), a non-finite float or one outside the range of an
    integer ``target``, an integer outside it (an unsigned type also takes negatives down to ``-max``, which wrap
    as in C), or a complex number with an imaginary part going into a real type. Floats going into integers are
    truncated toward zero."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, _builtins.bool) or target.kind == "b":
        return value
    if target.kind in "fc":
        finite = _builtins.float(np.finfo(target).max)
        parts = (value.real, value.imag) if isinstance(value, _builtins.complex) else (value,)
        if any(math.isfinite(p) and abs(p) > finite for p in parts) or \
                (target.kind == "f" and isinstance(value, _builtins.complex) and value.imag != 0):
            raise _overflow(target)
        return value.real if target.kind == "f" and isinstance(value, _builtins.complex) else value
    if isinstance(value, _builtins.complex):
        if value.imag != 0:
            raise _overflow(target)
        value = value.real
    info = np.iinfo(target)
    if isinstance(value, _builtins.float):
        if not math.isfinite(value) or value < info.min or value > info.max:
            raise _overflow(target)
        return _builtins.int(value)
    value = _builtins.int(value)
    low = -_builtins.int(info.max) if info.min == 0 else _builtins.int(info.min)
    if value < low or value > info.max:
        raise _overflow(target)
    return value % (_builtins.int(info.max) + 1) if info.min == 0 and value < 0 else value


def _overflow(target) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {_C_TYPE_NAMES.get(target.name, target.name)} "
                        "without overflow")


def real_scalar(value, target) -> object:
    """A Python number ready to be stored in numpy dtype ``target``: a complex number going into a real dtype
    must have no imaginary part (PyTorch's overflow error otherwise) and becomes its real part; bool targets
    take any number, and everything else passes through unchanged."""
    if not isinstance(value, complex) or target.kind in "cb":
        return value
    if value.imag != 0:
        raise RuntimeError(f"value cannot be converted to type {_C_SCALAR_NAMES.get(target.name, target.name)} "
                           "without overflow")
    return value.real
