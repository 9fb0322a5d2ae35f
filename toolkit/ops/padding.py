"""Padding: constant_pad_nd, reflection_pad1d/2d/3d, replication_pad1d/2d/3d, _pad_circular and aten's ``pad``.

Every non-constant pad is a gather along each padded dimension through an index
array (reflected, clamped or wrapped source positions), so negative padding
(cropping) falls out of the same rule. The backward ops scatter-add through the
same index arrays; they are linear in the gradient, so their own derivative is
the forward pad again and double backward works.

Example::

    y = toolkit.nn.functional.pad(x, (1, 2), mode="reflect")
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import NN, get, op


# ---------------------------------------------------------------------------------------------
# Source positions per padded dimension
# ---------------------------------------------------------------------------------------------
def source_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """Input position each output position reads along one dimension of size ``n`` padded by ``(lo, hi)``."""
    o = np.arange(n + lo + hi, dtype=np.int64) - lo
    if mode == "reflect":
        o = np.abs(o)
        o = np.where(o >= n, 2 * (n - 1) - o, o)
    elif mode == "replicate":
        o = np.clip(o, 0, n - 1)
    else:  # circular: negative padding crops first, positive padding wraps within what is left
        kept = n + min(lo, 0) + min(hi, 0)
        o = max(-lo, 0) + (np.arange(n + lo + hi, dtype=np.int64) - max(lo, 0)) % kept
    return o


def _pairs(pad) -> list:
    """``pad`` (last dimension first, as PyTorch writes it) as (lo, hi) pairs from the first padded dim on."""
    pad = list(pad)
    return [(pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)][::-1]


def gather_pad(x: np.ndarray, pad, mode: str) -> np.ndarray:
    """``x`` padded on its last ``len(pad) // 2`` dimensions by gathering through ``source_index``."""
    pairs = _pairs(pad)
    first = x.ndim - len(pairs)
    for k, (lo, hi) in enumerate(pairs):
        d = first + k
        x = np.take(x, source_index(x.shape[d], lo, hi, mode), axis=d)
    return x


def scatter_pad(grad: np.ndarray, in_shape, pad, mode: str) -> np.ndarray:
    """The adjoint of ``gather_pad``: sum ``grad`` back onto the input positions each output read."""
    pairs = _pairs(pad)
    first = len(in_shape) - len(pairs)
    g = grad
    for k in reversed(range(len(pairs))):
        d = first + k
        n = in_shape[d]
        idx = source_index(n, *pairs[k], mode)
        moved = np.moveaxis(g, d, -1)
        onehot = np.zeros((len(idx), n), dtype=g.dtype)
        onehot[np.arange(len(idx)), idx] = 1
        g = np.moveaxis(moved @ onehot, -1, d)
    return np.ascontiguousarray(g)


def _padded_shape(shape, pad) -> tuple:
    pairs = _pairs(pad)
    first = len(shape) - len(pairs)
    return tuple(shape[:first]) + tuple(shape[first + k] + lo + hi for k, (lo, hi) in enumerate(pairs))


# ---------------------------------------------------------------------------------------------
# constant_pad_nd
# ---------------------------------------------------------------------------------------------
def _constant_shape(shape, pad) -> tuple:
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * len(shape):
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)}while the input has {len(shape)}dimensions.")
    out = _padded_shape(shape, pad)
    first = len(shape) - len(pad) // 2
    for d in range(first, len(shape)):
        lo, hi = _pairs(pad)[d - first]
        if shape[d] + min(lo, 0) + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    if any(n < 0 for n in out):
        raise RuntimeError(f"The input size {shape[first:]}, plus negative padding {list(pad)} resulted in a "
                           f"negative output size, which is invalid. Check dimension of your input.")
    return out


@op("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor", kind=NN, method=False)
def constant_pad_nd(self, pad, value=0):
    """Pad the last ``len(pad) // 2`` dimensions with ``value``; negative entries crop."""
    out_shape = _constant_shape(self.shape, pad)
    out = np.full(out_shape, value).astype(self.dtype) if self.dtype != np.bool_ else np.full(out_shape, bool(value))
    src, dst = [slice(None)] * self.ndim, [slice(None)] * self.ndim
    first = self.ndim - len(pad) // 2
    for k, (lo, hi) in enumerate(_pairs(pad)):
        d, n = first + k, self.shape[first + k]
        src[d] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[d] = slice(max(lo, 0), max(lo, 0) + max(n - max(-lo, 0) - max(-hi, 0), 0))
    out[tuple(dst)] = self[tuple(src)]
    return out


@constant_pad_nd.meta_rule
def _(self, pad, value=0):
    return TensorMeta(_constant_shape(tuple(self.shape), pad), self.dtype, self.device)


@constant_pad_nd.grad
def _(grad, pad):
    return api.constant_pad_nd(grad, [-p for p in pad])


@constant_pad_nd.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3)), [1, 2]), {}
    yield (u(-1, 1, (2, 3, 4)), [1, 0, -1, 2]), {"value": 1.5}
    yield (u(-1, 1, (2, 3)), [1, 1, 2, -1]), {}
    yield (u(-1, 1, (2, 3, 2, 2)), [1, 1, 1, 1, 1, 1, 1, 1]), {}
    yield (u(-1, 1, (2, 3)), [-3, 1]), {}
    yield (rng.integers(-3, 3, (2, 3)), [1, 1]), {"value": 2}


# ---------------------------------------------------------------------------------------------
# reflection_pad / replication_pad and their backward ops
# ---------------------------------------------------------------------------------------------
def _check_pad(name: str, mode: str, nd: int, shape, padding, backward: bool = False) -> tuple:
    """PyTorch's checks of an n-d reflection/replication pad; returns the output shape."""
    shape = tuple(shape)
    if len(padding) != 2 * nd:
        if mode == "reflect":
            raise RuntimeError(f"padding size is expected to be {2 * nd}, but got: {len(padding)}")
        raise RuntimeError(f"padding size is expected to be {2 * nd}")
    non_batch = shape[1:] if len(shape) == nd + 2 else shape  # the batch dimension alone may be empty
    if len(shape) not in (nd + 1, nd + 2) or 0 in non_batch:
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(shape)}")
    if mode == "reflect":
        for k, (lo, hi) in enumerate(_pairs(padding)):
            d = len(shape) - nd + k
            if lo >= shape[d] or hi >= shape[d]:
                raise RuntimeError(f"Argument #{2 * nd + 2}: Padding size should be less than the corresponding "
                                   f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                                   f"{list(shape)}")
    out = _padded_shape(shape, padding)
    if any(n < 1 for n in out[-nd:]):
        if any(n < 0 for n in out[-nd:]) and (mode == "replicate" or nd == 3):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {list(out)}")
        if nd == 1:
            raise RuntimeError(f"input (W: {shape[-1]}) is too small. Calculated output W: {out[-1]}")
        if mode == "replicate" or nd == 3:
            raise RuntimeError(f"input is too small: output size is {list(out[-nd:])}")
    return out


def _make_pad(mode: str, name: str, nd: int):
    @op(f"{name}(Tensor self, SymInt[{2 * nd}] padding) -> Tensor", kind=NN, method=False, function=False)
    def forward(self, padding):
        _check_pad(name, mode, nd, self.shape, padding)
        return np.ascontiguousarray(gather_pad(self, padding, mode))

    forward.doc = (f"Pad the last {nd} dimension(s) of a {nd + 1}-d or batched {nd + 2}-d input by "
                   f"{'reflecting at' if mode == 'reflect' else 'repeating'} its edges; negative padding crops.")

    @op(f"{name}_backward(Tensor grad_output, Tensor self, SymInt[{2 * nd}] padding) -> Tensor", kind=NN,
        method=False, function=False, nondiff_args=("self",))
    def backward(grad_output, self, padding):
        return scatter_pad(np.asarray(grad_output, dtype=self.dtype), self.shape, padding, mode)

    backward.doc = f"Gradient of ``{name}``: each output gradient summed onto the input position it read."

    @forward.meta_rule
    def _(self, padding):
        return TensorMeta(_check_pad(name, mode, nd, self.shape, padding), self.dtype, self.device)

    @backward.meta_rule
    def _(grad_output, self, padding):
        return TensorMeta(tuple(self.shape), self.dtype, self.device)

    @forward.grad
    def _(grad, self, padding):
        return getattr(api, f"{name}_backward")(grad, self, padding)

    @backward.grad
    def _(grad, padding):
        return getattr(api, name)(grad, padding), None

    shapes = {1: [(2, 5), (2, 3, 4)], 2: [(2, 4, 5), (1, 2, 3, 4)], 3: [(1, 3, 3, 4), (1, 1, 3, 3, 4)]}[nd]
    pads = {1: [[2, 1], [-1, 2]], 2: [[1, 2, 2, 0], [2, -1, 1, 1]], 3: [[1, 2, 0, 1, 2, 1], [1, -1, 1, 2, 0, 1]]}[nd]

    @forward.sample_inputs
    def _(rng):
        for s, p in zip(shapes, pads):
            yield (rng.uniform(-1, 1, s), p), {}
        yield (rng.uniform(-1, 1, shapes[0]).swapaxes(-1, -2).copy().swapaxes(-1, -2), pads[0]), {}

    @backward.sample_inputs
    def _(rng):
        for s, p in zip(shapes, pads):
            out = _padded_shape(s, p)
            yield (rng.uniform(-1, 1, out), rng.uniform(-1, 1, s), p), {}

    return forward, backward


reflection_pad1d, reflection_pad1d_backward = _make_pad("reflect", "reflection_pad1d", 1)
reflection_pad2d, reflection_pad2d_backward = _make_pad("reflect", "reflection_pad2d", 2)
reflection_pad3d, reflection_pad3d_backward = _make_pad("reflect", "reflection_pad3d", 3)
replication_pad1d, replication_pad1d_backward = _make_pad("replicate", "replication_pad1d", 1)
replication_pad2d, replication_pad2d_backward = _make_pad("replicate", "replication_pad2d", 2)
replication_pad3d, replication_pad3d_backward = _make_pad("replicate", "replication_pad3d", 3)


# ---------------------------------------------------------------------------------------------
# _pad_circular
# ---------------------------------------------------------------------------------------------
def _circular_shape(shape, pad) -> tuple:
    ndim, k = len(shape), len(pad) // 2
    if ndim - k not in (1, 2):
        raise RuntimeError("Invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent "
                           f"to padding of length {(ndim - 1) * 2} or {(ndim - 2) * 2} respectively but got "
                           f"{len(pad)}")
    for (lo, hi), n in zip(_pairs(pad[:2 * k]), shape[ndim - k:]):
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi <= 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    return _padded_shape(shape, pad[:2 * k])


@op("_pad_circular(Tensor self, SymInt[] pad) -> Tensor", kind=NN, method=False, function=False)
def _pad_circular(self, pad):
    """Pad the dimensions after the first one or two by wrapping around; negative padding crops."""
    _circular_shape(self.shape, pad)
    return np.ascontiguousarray(gather_pad(self, pad[:len(pad) // 2 * 2], "circular"))


@_pad_circular.meta_rule
def _(self, pad):
    return TensorMeta(_circular_shape(tuple(self.shape), pad), self.dtype, self.device)


@_pad_circular.grad
def _(grad, self, pad):
    """The adjoint gather is a sum of index_adds along each padded dimension (differentiable again)."""
    g = grad
    pairs = _pairs(pad[:len(pad) // 2 * 2])
    first = self.ndim - len(pairs)
    for k in reversed(range(len(pairs))):
        d = first + k
        n = self.shape[d]
        lo, hi = pairs[k]
        kept = n + min(lo, 0) + min(hi, 0)
        idx = api.arange(n + lo + hi, dtype=_dt.int64, device=g.device).sub(max(lo, 0)).remainder(kept)
        idx = idx.add(max(-lo, 0))
        shape = list(g.shape)
        shape[d] = n
        g = api.zeros(shape, dtype=g.dtype, device=g.device).index_add(d, idx, g)
    return g


@_pad_circular.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 4)), [1, 2]), {}
    yield (u(-1, 1, (1, 2, 3, 4)), [2, -1, 1, 3]), {}
    yield (u(-1, 1, (1, 2, 3, 2, 3)), [1, 1, 0, 2, 1, 1]), {}
    yield (u(-1, 1, (3, 4)), [1, 2]), {}


# ---------------------------------------------------------------------------------------------
# aten::pad: the mode switch behind F.pad
# ---------------------------------------------------------------------------------------------
_SUPPORTED = ("\nSupported combinations for non-constant padding:\n"
              "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
              "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
              "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad_op_for(ndim: int, pad, mode: str, value) -> tuple:
    """The op F.pad runs for ``mode`` on an ``ndim``-d input, and its extra arguments, checked as PyTorch does."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {ndim}")
    if mode == "constant":
        return "constant_pad_nd", (0 if value is None else value,)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    if k in (1, 2, 3) and ndim in (k + 1, k + 2):
        if mode == "circular":
            return "_pad_circular", ()
        return f"{'reflection' if mode == 'reflect' else 'replication'}_pad{k}d", ()
    raise NotImplementedError(f"Padding size {len(pad)} is not supported for {ndim}D input tensor.{_SUPPORTED}")


@op('pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor', kind=NN, method=False,
    function=False, composite=True)
def pad(self, pad, mode="constant", value=None):
    """Pad with ``mode`` 'constant', 'reflect', 'replicate' or 'circular': the op of that mode, per PyTorch."""
    name, extra = pad_op_for(self.ndim, pad, mode, value)
    return getattr(api, name)(self, list(pad), *extra)


@pad.meta_rule
def _(self, pad, mode="constant", value=None):
    name, extra = pad_op_for(len(self.shape), pad, mode, value)
    return get(name).infer(self, list(pad), *extra)


@pad.grad
def _(grad, self, pad, mode="constant", value=None):
    """The derivative of the op ``mode`` picks (eager autograd records that op itself; compiled graphs keep
    ``pad`` one node and use this rule)."""
    name, _ = pad_op_for(self.ndim, pad, mode, value)
    pad = list(pad)
    if name == "constant_pad_nd":
        return constant_pad_nd.derivative(grad, pad=pad)
    if name == "_pad_circular":
        return _pad_circular.derivative(grad, self=self, pad=pad)
    return getattr(api, f"{name}_backward")(grad, self, pad)


@pad.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 3, 4)), [1, 2]), {}
    yield (u(-1, 1, (2, 3, 4)), [1, 2]), {"mode": "reflect"}
    yield (u(-1, 1, (1, 2, 3, 4)), [1, 2, 2, -1]), {"mode": "replicate"}
    yield (u(-1, 1, (1, 2, 3, 4)), [1, 2, 2, 1]), {"mode": "circular"}
    yield (u(-1, 1, (2, 3)), [1, 1, 1, 1]), {"value": -2.0}


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
_ONNX_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}


def _onnx_pad(g, self, pad, mode: str, value=None):
    """ONNX Pad of the last ``len(pad) // 2`` dims (PyTorch lists them last dim first, ONNX all begins then all
    ends). Negative entries crop: padded by the positive ones first, then sliced, so reflections and edges
    are those of the whole input as in PyTorch."""
    from .view import onnx_ints  # defined beside the view ops, imported after them

    rank = g.rank(self)
    if rank is None or g.is_value(pad):
        raise g.unsupported("padding a tensor of unknown rank or by a list computed at run time")
    pairs = _pairs(pad)
    lead = [0] * (rank - len(pairs))
    grow = [[p if g.is_value(p) else max(p, 0) for p in pair] for pair in pairs]
    pads = onnx_ints(g, lead + [lo for lo, _ in grow] + lead + [hi for _, hi in grow])
    if value is not None and mode == "constant":
        value = g.op("CastLike", value, self) if g.is_value(value) else g.constant(value, g.dtype(self))
    out = g.op("Pad", self, pads, value if mode == "constant" else None, mode=_ONNX_MODES[mode])
    crops = [(rank - len(pairs) + i, lo, hi) for i, (lo, hi) in enumerate(pairs)
             if not g.is_value(lo) and not g.is_value(hi) and (lo < 0 or hi < 0)]
    if not crops:
        return out
    axes, starts, ends = zip(*((a, -min(lo, 0), hi if hi < 0 else 2 ** 63 - 1) for a, lo, hi in crops))
    return g.op("Slice", out, g.constant(list(starts)), g.constant(list(ends)), g.constant(list(axes)))


def _onnx_circular(g, self, pad):
    """Circular padding as slices of the input concatenated around it (ONNX's ``wrap`` mode needs opset 19)."""
    rank = g.rank(self)
    if rank is None or g.is_value(pad) or any(g.is_value(p) or p < 0 for p in pad):
        raise g.unsupported("circular padding by negative or run-time amounts")
    pairs = _pairs(pad[:len(pad) // 2 * 2])
    for i, (lo, hi) in enumerate(pairs):
        dim = rank - len(pairs) + i
        axis = g.constant([dim])
        parts = [g.op("Slice", self, g.constant([-lo]), g.constant([2 ** 63 - 1]), axis)] if lo else []
        parts.append(self)
        if hi:
            parts.append(g.op("Slice", self, g.constant([0]), g.constant([hi]), axis))
        self = g.op("Concat", *parts, axis=dim) if len(parts) > 1 else self
    return self


@constant_pad_nd.symbolic
def _(g, self, pad, value=0):
    return _onnx_pad(g, self, pad, "constant", value)


for _mode, _ops in (("reflect", (reflection_pad1d, reflection_pad2d, reflection_pad3d)),
                    ("replicate", (replication_pad1d, replication_pad2d, replication_pad3d))):
    for _o in _ops:
        _o.symbolic(lambda g, self, padding, _mode=_mode: _onnx_pad(g, self, padding, _mode))
_pad_circular.symbolic(_onnx_circular)


@pad.symbolic
def _(g, self, pad, mode="constant", value=None):
    if g.rank(self) is None or g.is_value(pad):
        raise g.unsupported("padding a tensor of unknown rank or by a list computed at run time")
    name, extra = pad_op_for(g.rank(self), pad, mode, value)
    if name == "_pad_circular":
        return _onnx_circular(g, self, pad)
    return _onnx_pad(g, self, pad, mode, *extra)
