"""Spatial sampling: grid_sampler, grid_sampler_2d, grid_sampler_3d and affine_grid_generator.

These are compositions of registered ops (gathers, floors, clamps and weighted
sums), as PyTorch's kernels compute them: grid coordinates in [-1, 1] are
unnormalized to pixel positions, folded by the padding mode ('zeros', 'border',
'reflection'), and sampled by 'bilinear' (trilinear in 3-d), 'nearest' or
'bicubic' (A = -0.75) weights. Autograd records the parts, so the gradients for
both the input and the grid, and their second derivatives, come from the parts'
derivative rules.

Example::

    grid = toolkit.nn.functional.affine_grid(theta, (1, 3, 8, 8), align_corners=False)
    y = toolkit.nn.functional.grid_sample(x, grid, align_corners=False)
"""

from __future__ import annotations

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import NN, op

MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}
_CUBIC_A = -0.75


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------
def check_grid_sampler(input, grid, interpolation_mode: int, nd: int | None = None) -> tuple:
    """PyTorch's grid sampler checks; returns the output shape."""
    i_shape, g_shape = list(input.shape), list(grid.shape)
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if len(i_shape) != len(g_shape) or (nd is not None and len(i_shape) != nd + 2):
        raise RuntimeError(f"grid_sampler(): expected {len(i_shape)}D input and grid with same number of dimensions, "
                           f"but got input with sizes {i_shape} and grid with sizes {g_shape}")
    if i_shape[0] != g_shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {i_shape} and grid with sizes {g_shape}")
    k = len(i_shape) - 2
    if g_shape[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, but got grid with "
                           f"sizes {g_shape}")
    if len(i_shape) not in (4, 5):
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {i_shape} and grid with sizes {g_shape}")
    for d in range(2, len(i_shape)):
        if i_shape[d] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {i_shape} with dimension {d} being empty")
    if interpolation_mode == 2 and k == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if interpolation_mode not in MODES:
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {interpolation_mode}")
    return tuple(i_shape[:2]) + tuple(g_shape[1:-1])


# ---------------------------------------------------------------------------------------------
# Coordinates
# ---------------------------------------------------------------------------------------------
def _unnormalize(coord, size: int, align_corners: bool) -> tuple:
    """Pixel position of a [-1, 1] coordinate, and its derivative (a constant)."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _reflect(coord, twice_low: int, twice_high: int) -> tuple:
    """PyTorch's reflect_coordinates, and its derivative (+1 or -1)."""
    if twice_low == twice_high:
        return coord * 0, coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = coord - low
    sign = api.where(shifted < 0, -1.0, 1.0).to(coord.dtype)
    c = shifted.abs()
    extra = c.fmod(span)
    even = (c / span).floor().remainder(2) == 0
    return api.where(even, extra + low, span - extra + low), api.where(even, sign, -sign)


def _clip(coord, size: int) -> tuple:
    inside = (coord > 0).logical_and(coord < size - 1).to(coord.dtype)
    return coord.clamp(0, size - 1), inside


def _fold(coord, size: int, padding_mode: int, align_corners: bool) -> tuple:
    """PyTorch's compute_coordinates (the padding mode's position of an unnormalized coordinate) and its
    derivative."""
    if padding_mode == 1:
        return _clip(coord, size)
    if padding_mode == 2:
        r, dr = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        c, dc = _clip(r, size)
        return c, dc * dr
    return coord, None


class _Sampler:
    """Reads input values at integer positions (one per output point), zero outside the input; and its adjoint."""

    def __init__(self, input_shape, like):
        self.sizes = tuple(input_shape[2:])
        self.n, self.c = input_shape[:2]
        self.like = like

    def _index(self, positions):
        inside = None
        index = None
        for pos, size in zip(positions, self.sizes):
            ok = (pos >= 0).logical_and(pos <= size - 1)
            inside = ok if inside is None else inside.logical_and(ok)
            p = pos.clamp(0, size - 1).to(_dt.int64)
            index = p if index is None else index * size + p
        idx = index.reshape(self.n, 1, -1).expand(self.n, self.c, -1)
        return idx, inside.unsqueeze(1)

    def read(self, input, positions):
        """``positions``: one integer-valued float tensor (N, *out) per spatial dim, outermost first."""
        idx, inside = self._index(positions)
        out_shape = (self.n, self.c) + tuple(positions[0].shape[1:])
        vals = input.reshape(self.n, self.c, -1).gather(2, idx).reshape(out_shape)
        return vals * inside.to(vals.dtype)

    def write(self, values, positions):
        """The adjoint of ``read``: (N, C, *out) values summed onto the (N, C, *sizes) input positions."""
        idx, inside = self._index(positions)
        flat = (values * inside.to(values.dtype)).reshape(self.n, self.c, -1)
        total = 1
        for s in self.sizes:
            total *= s
        zeros = api.zeros((self.n, self.c, total), dtype=values.dtype, device=values.device)
        return zeros.scatter_add(2, idx, flat).reshape((self.n, self.c) + self.sizes)


def _cubic(t) -> tuple:
    """The four cubic convolution weights (A = -0.75) of fraction ``t`` and their derivatives in ``t``."""
    a = _CUBIC_A

    def near(x):
        return ((x * (a + 2) - (a + 3)) * x) * x + 1

    def far(x):
        return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a

    def d_near(x):
        return (x * (3 * (a + 2)) - 2 * (a + 3)) * x

    def d_far(x):
        return (x * (3 * a) - 10 * a) * x + 8 * a

    return ([far(t + 1), near(t), near(1 - t), far(2 - t)],
            [d_far(t + 1), d_near(t), -d_near(1 - t), -d_far(2 - t)])


def _terms(sizes, grid, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """The sum the sampler computes, term by term: (positions, weight, d weight / d grid per spatial dim).

    Positions and derivatives list the spatial dims outermost first; grid's last dim lists x (innermost) first.
    """
    k = len(sizes)
    coords = [grid.select(-1, k - 1 - d) for d in range(k)]
    if interpolation_mode == 2:
        raw = [_unnormalize(c, s, align_corners) for c, s in zip(coords, sizes)]
        base = [r.floor() for r, _ in raw]
        cubic = [_cubic(r - b) for (r, _), b in zip(raw, base)]
        for i in range(4):
            y, _ = _fold(base[0] + (i - 1), sizes[0], padding_mode, align_corners)
            for j in range(4):
                x, _ = _fold(base[1] + (j - 1), sizes[1], padding_mode, align_corners)
                wy, wx = cubic[0][0][i], cubic[1][0][j]
                dwy, dwx = cubic[0][1][i] * raw[0][1], cubic[1][1][j] * raw[1][1]
                yield [y, x], wy * wx, [dwy * wx, wy * dwx]
        return
    folded = []
    for c, s in zip(coords, sizes):
        u, du = _unnormalize(c, s, align_corners)
        pos, dpos = _fold(u, s, padding_mode, align_corners)
        folded.append((pos, du if dpos is None else dpos * du))
    if interpolation_mode == 1:
        yield [p.round() for p, _ in folded], None, [None] * k
        return
    lows = [p.floor() for p, _ in folded]
    fracs = [p - lo for (p, _), lo in zip(folded, lows)]
    for corner in range(2 ** k):
        bits = [(corner >> (k - 1 - d)) & 1 for d in range(k)]
        ws = [fracs[d] if b else 1 - fracs[d] for d, b in enumerate(bits)]
        weight = None
        for w in ws:
            weight = w if weight is None else weight * w
        dweights = []
        for d in range(k):
            others = None
            for e in range(k):
                if e != d:
                    others = ws[e] if others is None else others * ws[e]
            sign_d = folded[d][1] if bits[d] else -folded[d][1]
            dweights.append(sign_d if others is None else others * sign_d)
        yield [lo + b for lo, b in zip(lows, bits)], weight, dweights


def grid_sample_composite(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """The sampled (N, C, *out) tensor, written with registered ops."""
    sampler = _Sampler(tuple(input.shape), input)
    out = None
    for positions, weight, _ in _terms(tuple(input.shape[2:]), grid, interpolation_mode, padding_mode,
                                       align_corners):
        term = sampler.read(input, positions)
        if weight is not None:
            term = term * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def grid_sample_vjp(grad, input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool) -> tuple:
    """Gradients of ``grid_sample_composite`` for input and grid, written with registered ops."""
    sizes = tuple(input.shape[2:])
    k = len(sizes)
    sampler = _Sampler(tuple(input.shape), input)
    g_input = None
    g_coords = [None] * k
    for positions, weight, dweights in _terms(sizes, grid, interpolation_mode, padding_mode, align_corners):
        part = sampler.write(grad if weight is None else grad * weight.unsqueeze(1), positions)
        g_input = part if g_input is None else g_input + part
        if interpolation_mode == 1:
            continue
        along = (grad * sampler.read(input, positions)).sum(1)
        for d in range(k):
            t = along * dweights[d]
            g_coords[d] = t if g_coords[d] is None else g_coords[d] + t
    if interpolation_mode == 1:
        return g_input, grid * 0
    return g_input, api.stack([g_coords[k - 1 - d] for d in range(k)], -1)


def _make_sampler(name: str, nd: int | None):
    @op(f"{name}(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor",
        kind=NN, method=False, composite=True)
    def sampler(input, grid, interpolation_mode, padding_mode, align_corners):
        check_grid_sampler(input, grid, interpolation_mode, nd)
        return grid_sample_composite(input, grid, interpolation_mode, padding_mode, align_corners)

    @sampler.grad
    def _(grad, input, grid, interpolation_mode, padding_mode, align_corners):
        """Eager autograd differentiates the composite's parts; compiled graphs, which keep it one node, use this
        rule (the same sum, differentiated term by term)."""
        return grid_sample_vjp(grad, input, grid, interpolation_mode, padding_mode, align_corners)

    sampler.doc = ("Sample ``input`` at the [-1, 1] positions of ``grid`` (x first); modes 0 bilinear, 1 nearest, "
                   "2 bicubic; padding 0 zeros, 1 border, 2 reflection.")

    @sampler.meta_rule
    def _(input, grid, interpolation_mode, padding_mode, align_corners):
        return TensorMeta(check_grid_sampler(input, grid, interpolation_mode, nd), input.dtype, input.device)

    @sampler.sample_inputs
    def _(rng):
        u = rng.uniform
        if nd != 3:
            for mode, pad, ac in ((0, 0, False), (0, 1, True), (0, 2, False), (1, 0, True), (2, 0, False),
                                  (2, 2, True), (2, 1, False), (0, 2, True)):
                yield (u(-1, 1, (2, 2, 3, 4)), u(-1.3, 1.3, (2, 3, 2, 2)), mode, pad, ac), {}
        if nd != 2:
            for mode, pad, ac in ((0, 0, False), (0, 1, True), (0, 2, False), (1, 2, True)):
                yield (u(-1, 1, (1, 2, 2, 3, 3)), u(-1.3, 1.3, (1, 2, 2, 1, 3)), mode, pad, ac), {}

    return sampler


grid_sampler = _make_sampler("grid_sampler", None)
grid_sampler_2d = _make_sampler("grid_sampler_2d", 2)
grid_sampler_3d = _make_sampler("grid_sampler_3d", 3)


# ---------------------------------------------------------------------------------------------
# affine_grid_generator
# ---------------------------------------------------------------------------------------------
def _affine_shape(theta, size) -> tuple:
    size = list(size)
    if len(size) not in (4, 5):
        raise RuntimeError(f"AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs, got {len(size)}")
    k = len(size) - 2
    if len(theta.shape) != 3 or tuple(theta.shape[1:]) != (k, k + 1):
        raise RuntimeError(f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for size {size}. "
                           f"Got {list(theta.shape)}.")
    return (size[0],) + tuple(size[2:]) + (k,)


def _base_axis(n: int, align_corners: bool, like):
    if n <= 1:
        return api.zeros((n,), dtype=like.dtype, device=like.device)
    line = api.linspace(-1, 1, n, dtype=like.dtype, device=like.device)
    return line if align_corners else line * ((n - 1) / n)


def _base_grid(size, align_corners: bool, like):
    """The (1, prod(spatial), k + 1) homogeneous [-1, 1] coordinates (x first) of an output ``size``."""
    spatial = list(size[2:])
    k = len(spatial)
    axes = [_base_axis(n, align_corners, like) for n in spatial]
    parts = []
    for d in range(k):  # x (innermost dim) first
        axis = axes[k - 1 - d]
        view = [1] * k
        view[k - 1 - d] = spatial[k - 1 - d]
        parts.append(axis.reshape(view).expand(spatial))
    parts.append(api.ones(spatial, dtype=like.dtype, device=like.device))
    return api.stack(parts, -1).reshape(1, -1, k + 1)


@op("affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor", kind=NN, method=False,
    composite=True)
def affine_grid_generator(theta, size, align_corners):
    """The (N, *spatial, k) grid of ``theta`` applied to the [-1, 1] base grid of ``size`` (x first)."""
    out = _affine_shape(theta, size)
    base = _base_grid(size, align_corners, theta).expand(size[0], -1, -1)
    return base.bmm(theta.transpose(1, 2)).reshape(out)


@affine_grid_generator.grad
def _(grad, size, align_corners):
    """``grad^T @ base`` per batch (compiled graphs keep the composite one node and use this rule)."""
    k = len(size) - 2
    base = _base_grid(size, align_corners, grad).expand(size[0], -1, -1)
    return grad.reshape(size[0], -1, k).transpose(1, 2).bmm(base)


@affine_grid_generator.meta_rule
def _(theta, size, align_corners):
    return TensorMeta(_affine_shape(theta, size), theta.dtype, theta.device)


@affine_grid_generator.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 3)), [2, 3, 4, 5], False), {}
    yield (u(-1, 1, (1, 2, 3)), [1, 1, 3, 1], True), {}
    yield (u(-1, 1, (2, 3, 4)), [2, 1, 2, 3, 4], False), {}
    yield (u(-1, 1, (1, 3, 4)), [1, 1, 3, 2, 2], True), {}
