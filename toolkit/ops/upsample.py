"""Upsampling: aten's upsample_nearest/_upsample_nearest_exact 1d-3d, upsample_linear1d, upsample_bilinear2d,
upsample_bicubic2d, upsample_trilinear3d (each with its ``.vec`` overload) and their backward ops.

Every mode is separable: along each spatial dimension the output is a fixed
(out, in) matrix of interpolation weights applied to the input, so the forward
is one small matmul per dimension (a gather for the nearest modes), the backward
the transposed matmul, and the backward's own derivative the forward again, so
double backward works. The weights follow PyTorch's CPU kernels: source index
``scale * (dst + 0.5) - 0.5`` (or ``scale * dst`` with ``align_corners``), nearest
indices computed in float32 as PyTorch does, and the cubic kernel with A = -0.75.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import NN, op

_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}
_CUBIC_A = -0.75


# ---------------------------------------------------------------------------------------------
# Interpolation along one dimension
# ---------------------------------------------------------------------------------------------
def nearest_index(in_size: int, out_size: int, scale, exact: bool) -> np.ndarray:
    """Input position of each output position for 'nearest' (``exact``: 'nearest-exact'), in float32 as PyTorch."""
    dst = np.arange(out_size, dtype=np.float32)
    if out_size == in_size and not exact:
        return np.arange(out_size, dtype=np.int64)
    if out_size == 2 * in_size and not exact:
        return np.arange(out_size, dtype=np.int64) >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(in_size) / np.float32(out_size)
    src = np.floor((dst + np.float32(0.5)) * s if exact else dst * s).astype(np.int64)
    return np.minimum(src, in_size - 1)


def _area_scale(in_size: int, out_size: int, align_corners: bool, scale) -> float:
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _cubic_coefficients(t: np.ndarray) -> list:
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def interpolation_matrix(mode: str, in_size: int, out_size: int, align_corners: bool, scale) -> np.ndarray:
    """The (out, in) float64 weights of ``mode`` ('nearest', 'nearest-exact', 'linear', 'cubic') on one dim."""
    w = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    if mode in ("nearest", "nearest-exact"):
        w[rows, nearest_index(in_size, out_size, scale, mode == "nearest-exact")] = 1.0
        return w
    s = _area_scale(in_size, out_size, align_corners, scale)
    dst = rows.astype(np.float64)
    real = s * dst if align_corners else s * (dst + 0.5) - 0.5
    if mode == "linear":
        real = np.maximum(real, 0.0)
    index = np.minimum(np.floor(real).astype(np.int64), in_size - 1)
    lam = np.clip(real - index, 0.0, 1.0)
    if mode == "linear":
        nxt = np.where(index < in_size - 1, index + 1, index)
        np.add.at(w, (rows, index), 1.0 - lam)
        np.add.at(w, (rows, nxt), lam)
        return w
    for j, c in enumerate(_cubic_coefficients(lam)):
        np.add.at(w, (rows, np.clip(index - 1 + j, 0, in_size - 1)), c)
    return w


def _apply(x: np.ndarray, mats, dtype) -> np.ndarray:
    """Contract each of ``x``'s last ``len(mats)`` dimensions with its (out, in) matrix."""
    first = x.ndim - len(mats)
    for k, m in enumerate(mats):
        d = first + k
        x = np.moveaxis(np.moveaxis(x, d, -1) @ m.T.astype(dtype, copy=False), -1, d)
    return np.ascontiguousarray(x)


def upsample(x: np.ndarray, mode: str, out_size, align_corners: bool, scales) -> np.ndarray:
    """``x`` (N, C, *in) resampled to (N, C, *out_size)."""
    in_size = x.shape[2:]
    if mode in ("nearest", "nearest-exact"):
        for k, (i, o, s) in enumerate(zip(in_size, out_size, scales)):
            x = np.take(x, nearest_index(i, o, s, mode == "nearest-exact"), axis=2 + k)
        return np.ascontiguousarray(x)
    work = np.float32 if x.dtype == np.float16 else x.dtype
    mats = [interpolation_matrix(mode, i, o, align_corners, s) for i, o, s in zip(in_size, out_size, scales)]
    return _apply(x.astype(work, copy=False), mats, work).astype(x.dtype, copy=False)


def upsample_adjoint(g: np.ndarray, mode: str, out_size, in_size, align_corners: bool, scales) -> np.ndarray:
    """The transpose of ``upsample``: (N, C, *out_size) gradients summed onto (N, C, *in_size)."""
    work = np.float32 if g.dtype == np.float16 else g.dtype
    mats = [interpolation_matrix(mode, i, o, align_corners, s).T for i, o, s in zip(in_size, out_size, scales)]
    return _apply(g.astype(work, copy=False), mats, work).astype(g.dtype, copy=False)


# ---------------------------------------------------------------------------------------------
# Checks and output sizes, as PyTorch's upsample_common_check and compute_output_size
# ---------------------------------------------------------------------------------------------
def check_sizes(nd: int, input_size, output_size) -> None:
    """PyTorch's upsample_common_check."""
    if len(output_size) != nd:
        raise RuntimeError(f"It is expected output_size equals to {nd}, but got size {len(output_size)}")
    if len(input_size) != nd + 2:
        raise RuntimeError(f"It is expected input_size equals to {nd + 2}, but got size {len(input_size)}")
    names = ("D", "H", "W")[3 - nd:]
    if any(n <= 0 for n in tuple(input_size[2:]) + tuple(output_size)):
        ins = ", ".join(f"{a}: {b}" for a, b in zip(names, input_size[2:]))
        outs = ", ".join(f"{a}: {b}" for a, b in zip(names, output_size))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins}) output ({outs})")


def vec_output_size(nd: int, input_size, output_size, scale_factors) -> list:
    """PyTorch's compute_output_size for the ``.vec`` overloads."""
    if output_size is not None and scale_factors is not None:
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        return list(output_size)
    if scale_factors is None:
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if len(scale_factors) != nd:
        raise RuntimeError(f"It is expected scale_factors equals to {nd}, but got size {len(scale_factors)}")
    return [int(math.floor(float(i) * s)) for i, s in zip(input_size[-nd:], scale_factors)]


def _check_input(nd: int, shape) -> None:
    if len(shape) != nd + 2:
        raise RuntimeError(f"Expected {nd + 2}D input (got {len(shape)}D input)")
    if any(n == 0 for n in shape[1:]):
        raise RuntimeError(f"Non-empty {nd + 2}D data tensor expected but got a tensor with sizes {list(shape)}")


# ---------------------------------------------------------------------------------------------
# ONNX lowering (read by toolkit.onnx; see OpDef.symbolic): one Resize
# ---------------------------------------------------------------------------------------------
# (ONNX mode, coordinate_transformation_mode, nearest_mode) of each mode; 'nearest' is PyTorch's legacy
# floor(dst * in / out), 'nearest-exact' floor((dst + 0.5) * in / out), rounding half up.
_ONNX_RESIZE = {"nearest": ("nearest", "asymmetric", "floor"),
                "nearest-exact": ("nearest", "half_pixel", "round_prefer_ceil"),
                "linear": ("linear", "half_pixel", None), "cubic": ("cubic", "half_pixel", None)}


def onnx_resize(g, x, mode: str, align_corners: bool, output_size, scales):
    """ONNX Resize of ``x``'s spatial dims to ``output_size``, or by ``scales`` (the output size then follows a
    dynamic input size, as the scales do in PyTorch)."""
    from .view import onnx_ints  # defined beside the view ops, imported after them

    onnx_mode, coordinates, nearest = _ONNX_RESIZE[mode]
    if align_corners:
        coordinates = "align_corners"
    attrs = {"mode": onnx_mode, "coordinate_transformation_mode": coordinates, "nearest_mode": nearest,
             "cubic_coeff_a": _CUBIC_A if mode == "cubic" else None}
    if scales is not None:
        factors = g.constant([1.0, 1.0, *scales], _dt.float32)
        return g.op("Resize", x, None, factors, **attrs)
    batch_channels = g.op("Slice", g.op("Shape", x), g.constant([0]), g.constant([2]))
    sizes = g.op("Concat", batch_channels, onnx_ints(g, output_size), axis=0)
    return g.op("Resize", x, None, None, sizes, **attrs)


# ---------------------------------------------------------------------------------------------
# The op families
# ---------------------------------------------------------------------------------------------
def _make_family(name: str, nd: int, mode: str, align: bool):
    scale_names = _SCALE_NAMES[nd]
    scales_sig = ", ".join(f"float? {s}=None" for s in scale_names)
    ac_sig = ", bool align_corners" if align else ""

    def split(rest):
        """(align_corners, scales) from the arguments after output_size / input_size."""
        if align:
            return bool(rest[0]), list(rest[1:]) + [None] * (nd - len(rest) + 1)
        return False, list(rest) + [None] * (nd - len(rest))

    @op(f"{name}(Tensor self, SymInt[{nd}] output_size{ac_sig}, {scales_sig}) -> Tensor", kind=NN,
        method=False, function=False)
    def forward(self, output_size, *rest):
        align_corners, scales = split(rest)
        _check_input(nd, self.shape)
        check_sizes(nd, self.shape, output_size)
        return upsample(self, mode, tuple(output_size), align_corners, scales)

    @op(f"{name}.vec(Tensor input, SymInt[]? output_size{ac_sig}, float[]? scale_factors) -> Tensor", kind=NN,
        method=False, function=False)
    def forward_vec(input, output_size, *rest):
        align_corners, factors = (bool(rest[0]), rest[1]) if align else (False, rest[0])
        _check_input(nd, input.shape)
        out = vec_output_size(nd, input.shape, output_size, factors)
        check_sizes(nd, input.shape, out)
        scales = list(factors) if factors is not None else [None] * nd
        return upsample(input, mode, tuple(out), align_corners, scales)

    @op(f"{name}_backward(Tensor grad_output, SymInt[{nd}] output_size, SymInt[{nd + 2}] input_size{ac_sig}, "
        f"{scales_sig}) -> Tensor", kind=NN, method=False, function=False)
    def backward(grad_output, output_size, input_size, *rest):
        align_corners, scales = split(rest)
        check_sizes(nd, input_size, output_size)
        expected = tuple(input_size[:2]) + tuple(output_size)
        if tuple(grad_output.shape) != expected:
            raise RuntimeError(f"Expected grad_output to have the same shape as output; output.size({2}) = "
                               f"{expected[2]} but got grad_output.size({2}) = {grad_output.shape[2]}")
        return upsample_adjoint(grad_output, mode, tuple(output_size), tuple(input_size[2:]), align_corners, scales)

    what = {"nearest": "nearest neighbour", "nearest-exact": "nearest neighbour (pixel centres, as PIL)",
            "linear": "linear", "cubic": "bicubic (A = -0.75)"}[mode]
    forward.doc = f"Resample a (N, C, *{nd} spatial) input to ``output_size`` by {what} interpolation."
    forward_vec.doc = f"``{name}`` given ``output_size`` or per-dimension ``scale_factors``."
    backward.doc = f"Gradient of ``{name}``: the transposed interpolation, summing onto the input positions."

    @forward.meta_rule
    def _(self, output_size, *rest):
        _check_input(nd, tuple(self.shape))
        check_sizes(nd, tuple(self.shape), output_size)
        return TensorMeta(tuple(self.shape[:2]) + tuple(output_size), self.dtype, self.device)

    @forward_vec.meta_rule
    def _(input, output_size, *rest):
        _check_input(nd, tuple(input.shape))
        out = vec_output_size(nd, tuple(input.shape), output_size, rest[-1])
        check_sizes(nd, tuple(input.shape), out)
        return TensorMeta(tuple(input.shape[:2]) + tuple(out), input.dtype, input.device)

    @backward.meta_rule
    def _(grad_output, output_size, input_size, *rest):
        check_sizes(nd, input_size, output_size)
        return TensorMeta(tuple(input_size), grad_output.dtype, grad_output.device)

    @forward.symbolic
    def _(g, self, output_size, *rest):
        align_corners, scales = split(rest)
        if all(s is not None for s in scales):  # the coordinates follow the scales, as PyTorch's kernel
            return onnx_resize(g, self, mode, align_corners, None, scales)
        return onnx_resize(g, self, mode, align_corners, output_size, None)

    @forward_vec.symbolic
    def _(g, input, output_size, *rest):
        align_corners, factors = (bool(rest[0]), rest[1]) if align else (False, rest[0])
        return onnx_resize(g, input, mode, align_corners, output_size, factors)

    bwd = getattr(api, f"{name}_backward")
    fwd = getattr(api, name)

    def extra(align_corners, scales) -> tuple:
        """Positional align_corners and keyword scales (a positional float would bind to the ``.vec`` overload)."""
        return [align_corners] if align else [], dict(zip(scale_names, scales))

    @forward.grad
    def _(grad, self_shape, output_size, align_corners=False, scales=None, scales_d=None, scales_h=None,
          scales_w=None):
        sc = {"scales": scales, "scales_d": scales_d, "scales_h": scales_h, "scales_w": scales_w}
        a, k = extra(align_corners, [sc[s] for s in scale_names])
        return bwd(grad, list(output_size), list(self_shape), *a, **k)

    @forward_vec.grad
    def _(grad, input_shape, output_size, scale_factors, align_corners=False):
        out = vec_output_size(nd, input_shape, output_size, scale_factors)
        scales = list(scale_factors) if scale_factors is not None else [None] * nd
        a, k = extra(align_corners, scales)
        return bwd(grad, out, list(input_shape), *a, **k)

    @backward.grad
    def _(grad, output_size, align_corners=False, scales=None, scales_d=None, scales_h=None, scales_w=None):
        sc = {"scales": scales, "scales_d": scales_d, "scales_h": scales_h, "scales_w": scales_w}
        a, k = extra(align_corners, [sc[s] for s in scale_names])
        return fwd(grad, list(output_size), *a, **k)

    in_shapes = {1: (2, 3, 5), 2: (1, 2, 3, 4), 3: (1, 2, 2, 3, 2)}[nd]
    outs = {1: ([9], [3]), 2: ([5, 7], [2, 3]), 3: ([3, 5, 4], [1, 2, 3])}[nd]
    factors = {1: [1.7], 2: [1.5, 2.0], 3: [2.0, 1.4, 1.6]}[nd]

    def samples(with_align: bool, as_grad: bool):
        def gen(rng):
            for out in outs:
                for ac in ([False, True] if align else [False]):
                    args = [out] + ([ac] if align else [])
                    if as_grad:
                        yield (rng.uniform(-1, 1, in_shapes[:2] + tuple(out)), out, list(in_shapes), *args[1:]), {}
                    else:
                        yield (rng.uniform(-1, 1, in_shapes), *args), {}
            scaled = [int(math.floor(i * f)) for i, f in zip(in_shapes[2:], factors)]
            tail = [False] if align else []
            kw = dict(zip(scale_names, factors))
            if as_grad:
                yield (rng.uniform(-1, 1, in_shapes[:2] + tuple(scaled)), scaled, list(in_shapes), *tail), kw
            else:
                yield (rng.uniform(-1, 1, in_shapes), scaled, *tail), kw
        return gen

    forward.sample_inputs(samples(align, False))
    backward.sample_inputs(samples(align, True))

    @forward_vec.sample_inputs
    def _(rng):
        ac = [True] if align else []
        yield (rng.uniform(-1, 1, in_shapes), None, *ac, factors), {}
        yield (rng.uniform(-1, 1, in_shapes), outs[0], *ac, None), {}

    return forward, forward_vec, backward


FAMILIES = {}
for _name, _nd, _mode, _align in (
        ("upsample_nearest1d", 1, "nearest", False),
        ("upsample_nearest2d", 2, "nearest", False),
        ("upsample_nearest3d", 3, "nearest", False),
        ("_upsample_nearest_exact1d", 1, "nearest-exact", False),
        ("_upsample_nearest_exact2d", 2, "nearest-exact", False),
        ("_upsample_nearest_exact3d", 3, "nearest-exact", False),
        ("upsample_linear1d", 1, "linear", True),
        ("upsample_bilinear2d", 2, "linear", True),
        ("upsample_trilinear3d", 3, "linear", True),
        ("upsample_bicubic2d", 2, "cubic", True)):
    FAMILIES[_name] = _make_family(_name, _nd, _mode, _align)
