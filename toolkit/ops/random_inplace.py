"""In-place random fills: ``uniform_``, ``normal_``, ``random_``, ``bernoulli_``, ``exponential_``,
``cauchy_``, ``log_normal_``, ``geometric_``.

They are registry ops of kind INPLACE that are not derived from a functional
op: the kernel computes the new values of ``self`` (in the order PyTorch
writes them: ``self``'s memory order) and the dispatcher writes them into
``self`` and bumps its version. The functional random ops (``rand``,
``randn``, ``bernoulli``...) are built on the same samplers, so
``toolkit.manual_seed(s); x.normal_()`` gives PyTorch's numbers for seed ``s``.
Their derivative is zero for ``self``, as in PyTorch.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from . import _distributions as D
from . import api
from ._generator import get_generator
from .registry import INPLACE, op


def not_implemented(kernel: str, dtype: np.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_dt.title(dtype)}\'')


def check_floating(kernel: str, dtype: np.dtype) -> None:
    if np.dtype(dtype).kind != "f":
        raise not_implemented(kernel, dtype)


def memory_order(a: np.ndarray) -> list:
    """Dims from outermost to innermost in memory: the order PyTorch's TensorIterator fills."""
    return sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))


def shaped_like(a: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Values listed in ``a``'s memory order, arranged in ``a``'s shape."""
    if a.ndim <= 1 or a.flags.c_contiguous:
        return values.reshape(a.shape)
    perm = memory_order(a)
    return values.reshape([a.shape[p] for p in perm]).transpose(np.argsort(perm))


def in_memory_order(like: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (shaped like ``like``) listed in ``like``'s memory order (the inverse of ``shaped_like``)."""
    if like.ndim <= 1 or like.flags.c_contiguous:
        return values.reshape(-1)
    return values.transpose(memory_order(like)).reshape(-1)


def empty_like(a: np.ndarray, dtype=None) -> np.ndarray:
    """An uninitialized array laid out as PyTorch's ``empty_like`` lays it out: with ``a``'s dim order
    in memory when ``a`` is dense, C order otherwise."""
    dtype = a.dtype if dtype is None else dtype
    if a.ndim <= 1 or a.flags.c_contiguous:
        return np.empty(a.shape, dtype)
    perm = memory_order(a)
    expected = a.itemsize
    for d in reversed(perm):
        if a.shape[d] != 1 and a.strides[d] != expected:
            return np.empty(a.shape, dtype)
        expected *= a.shape[d]
    return np.empty([a.shape[p] for p in perm], dtype).transpose(np.argsort(perm))


def _complex_parts(shape, dtype) -> tuple | None:
    """For a complex dtype, the real sample PyTorch draws instead: its parts' dtype and a trailing dim of 2
    (real and imaginary parts interleaved, as ``view_as_real`` lays them out)."""
    if np.dtype(dtype).kind != "c":
        return None
    return (*shape, 2), np.empty(0, dtype).real.dtype


def sample_uniform(shape, dtype, low: float, high: float, generator) -> np.ndarray:
    parts = _complex_parts(shape, dtype)
    if parts is not None:  # both parts uniform on [low, high)
        return sample_uniform(*parts, low, high, generator).view(dtype)
    check_floating("check_uniform_bounds", dtype)
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(low)} > to={_num(high)}")
    n = int(np.prod(shape))
    return D.uniform(get_generator(generator), n, dtype, low, high)


def sample_normal(shape, dtype, mean: float, std: float, generator, contiguous: bool = True) -> np.ndarray:
    parts = _complex_parts(shape, dtype)
    if parts is not None:  # each part N(mean, std^2 / 2): the complex variance is std^2
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
        return sample_normal(*parts, mean, std / math.sqrt(2), generator, contiguous).view(dtype)
    check_floating("normal_kernel_cpu", dtype)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    n = int(np.prod(shape))
    return D.normal(get_generator(generator), n, dtype, mean, std, contiguous)


def _num(v) -> str:
    """A number as PyTorch's messages print it (``2`` for 2.0)."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _self_meta(self, *args):
    return TensorMeta(self.shape, self.dtype, self.device)


def _zero_grad(grad):
    return (api.zeros_like(grad),)


@op("uniform_(Tensor self, float from=0, float to=1, *, Generator? generator=None) -> Tensor", kind=INPLACE,
    name_rule=_names.KEEP,
    function=False)
def uniform_(self, low=0.0, high=1.0, generator=None):
    """Fill with numbers drawn uniformly from [from, to); bit-exact with PyTorch's CPU generator."""
    return shaped_like(self, sample_uniform(self.shape, self.dtype, low, high, generator))


@op("normal_(Tensor self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor", kind=INPLACE,
    name_rule=_names.KEEP,
    function=False)
def normal_(self, mean=0.0, std=1.0, generator=None):
    """Fill with normal samples; bit-exact with PyTorch's CPU generator for float32 and float64 (its
    vectorized Box-Muller for contiguous tensors of 16+ elements, its scalar one with the cached second
    sample otherwise). float16 is exact below 16 elements and deterministic, not bit-exact, above."""
    contiguous = self.flags.c_contiguous
    return shaped_like(self, sample_normal(self.shape, self.dtype, mean, std, generator, contiguous))


@op("exponential_(Tensor self, float lambd=1, *, Generator? generator=None) -> Tensor", kind=INPLACE,
    name_rule=_names.KEEP,
    function=False)
def exponential_(self, lambd=1.0, generator=None):
    """Fill with exponential samples of rate ``lambd`` (``-log1p(-u) / lambd``); bit-exact with PyTorch's
    default CPU kernel (checked against PyTorch 2.13 on an AMD CPU)."""
    check_floating("exponential_cpu", self.dtype)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    return shaped_like(self, D.exponential(get_generator(generator), self.size, self.dtype, lambd))


@op("bernoulli_.Tensor(Tensor self, Tensor p, *, Generator? generator=None) -> Tensor", kind=INPLACE,
    name_rule=_names.KEEP,
    function=False)
def bernoulli_tensor_(self, p, generator=None):
    """Set each element to 1 with probability ``p`` (a tensor broadcast to ``self``), else 0."""
    if p.dtype.kind != "f":
        raise not_implemented("bernoulli_tensor_cpu_p_", p.dtype)
    pb = np.broadcast_to(p, self.shape)
    if pb.size and not ((pb >= 0) & (pb <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = D.bernoulli_tensor(get_generator(generator), in_memory_order(self, pb))
    return shaped_like(self, draws).astype(self.dtype)


@op("bernoulli_.float(Tensor self, float p=0.5, *, Generator? generator=None) -> Tensor", kind=INPLACE,
    name_rule=_names.KEEP,
    function=False)
def bernoulli_float_(self, p=0.5, generator=None):
    """Set each element to 1 with probability ``p``, else 0. Bit-exact with PyTorch except on Intel CPUs,
    where PyTorch draws from MKL's stream instead."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
    return shaped_like(self, D.bernoulli_scalar(get_generator(generator), self.size, p)).astype(self.dtype)


def _check_range(low: int, high_inclusive: int, dtype: np.dtype) -> None:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return
    info = (0, 1) if dtype == np.bool_ else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    if not info[0] <= low <= info[1]:
        raise RuntimeError(f"from is out of bounds for {_dt.cpp_name(dtype)}")
    if not info[0] <= high_inclusive <= info[1]:
        raise RuntimeError(f"to - 1 is out of bounds for {_dt.cpp_name(dtype)}")


def sample_random(shape, dtype, low, high, generator) -> np.ndarray:
    """``random_`` semantics: [low, high) when ``high`` is given, [low, dtype max] otherwise."""
    dtype = np.dtype(dtype)
    gen = get_generator(generator)
    n = int(np.prod(shape))
    if high is not None:
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        _check_range(low, high - 1, dtype)
        return D.random_range(gen, n, dtype, low, high - low)
    if low == -(1 << 63):
        return D.random_int64_full(gen, n, dtype)
    if dtype.kind == "f":
        top = 1 << {"float16": 11, "float32": 24, "float64": 53}[dtype.name]
    else:
        top = 1 if dtype == np.bool_ else int(np.iinfo(dtype).max)
    _check_range(low, top, dtype)
    return D.random_range(gen, n, dtype, low, top - low + 1)


@op("random_.from(Tensor self, int from, int? to, *, Generator? generator=None) -> Tensor", kind=INPLACE,
    name_rule=_names.KEEP,
    function=False)
def random_from_(self, low, high, generator=None):
    """Fill with integers drawn uniformly from [from, to) (to the dtype's maximum when ``to`` is None).
    Bit-exact with PyTorch except for float16/float32 ranges beyond their exact integers (2**11, 2**24),
    where PyTorch also adjusts the bounds."""
    return shaped_like(self, sample_random(self.shape, self.dtype, low, high, generator))


@op("random_.to(Tensor self, int to, *, Generator? generator=None) -> Tensor", kind=INPLACE,
    name_rule=_names.KEEP, function=False)
def random_to_(self, high, generator=None):
    """Fill with integers drawn uniformly from [0, to)."""
    return shaped_like(self, sample_random(self.shape, self.dtype, 0, high, generator))


@op("random_(Tensor self, *, Generator? generator=None) -> Tensor", kind=INPLACE, name_rule=_names.KEEP,
    function=False)
def random_(self, generator=None):
    """Fill with integers from [0, dtype max] (from [0, 2**mantissa] for floating dtypes)."""
    return shaped_like(self, D.random_full(get_generator(generator), self.size, self.dtype))


@op("cauchy_(Tensor self, float median=0, float sigma=1, *, Generator? generator=None) -> Tensor",
    kind=INPLACE, name_rule=_names.KEEP,
    function=False)
def cauchy_(self, median=0.0, sigma=1.0, generator=None):
    """Fill with Cauchy samples, ``median + sigma * tan(pi * (u - 1/2))``, drawn as PyTorch's CPU kernel
    draws them (one 53-bit uniform per element, in double)."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    if self.dtype.kind != "f":
        name = _dt.cpp_name(self.dtype)
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {name}")
    return shaped_like(self, D.cauchy(get_generator(generator), self.size, self.dtype, median, sigma))


@op("log_normal_(Tensor self, float mean=1, float std=2, *, Generator? generator=None) -> Tensor",
    kind=INPLACE, name_rule=_names.KEEP, function=False)
def log_normal_(self, mean=1.0, std=2.0, generator=None):
    """Fill with ``exp(N(mean, std))`` samples from PyTorch's scalar normal sampler (``mean`` and ``std``
    are those of the underlying normal)."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    check_floating("log_normal_cpu", self.dtype)
    return shaped_like(self, D.log_normal(get_generator(generator), self.size, self.dtype, mean, std))


@op("geometric_(Tensor self, float p, *, Generator? generator=None) -> Tensor", kind=INPLACE,
    name_rule=_names.KEEP, function=False)
def geometric_(self, p, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...); integer dtypes
    too, as in PyTorch."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    if self.dtype == np.bool_:
        raise not_implemented("geometric_cpu", self.dtype)
    return shaped_like(self, D.geometric(get_generator(generator), self.size, self.dtype, p))


for _o in (uniform_, normal_, exponential_, bernoulli_tensor_, bernoulli_float_, random_from_, random_to_, random_,
           cauchy_, log_normal_, geometric_):
    _o.meta_rule(_self_meta)
    if _o is not bernoulli_tensor_:
        _o.grad(_zero_grad)


@bernoulli_tensor_.grad
def _(grad, p):
    return api.zeros_like(grad), api.zeros_like(p)
