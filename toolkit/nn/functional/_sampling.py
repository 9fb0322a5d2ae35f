"""``F.interpolate`` (and the deprecated ``F.upsample*``), ``F.grid_sample`` and ``F.affine_grid``.

As in PyTorch these are Python: they check and normalise the arguments, then
call one registry op (an ``upsample_*`` op, an adaptive average pool for
'area', ``grid_sampler`` or ``affine_grid_generator``), whose derivative rules
give the gradients.
"""

from __future__ import annotations

import math
import warnings

from ...ops import api as _api
from ...tensor import Tensor

__all__ = ["affine_grid", "grid_sample", "interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]



def _output_and_scales(input: Tensor, size, scale_factor, dim: int) -> tuple:
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            return list(size), None
        return [size] * dim, None
    if scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            return None, [float(s) for s in scale_factor]
        return None, [float(scale_factor)] * dim
    raise ValueError("either size or scale_factor should be defined")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dimensions of a (N, C, *spatial) input to ``size`` or by ``scale_factor``.

    Modes: 'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' / 'bicubic' (4-D), 'trilinear' (5-D), 'area'.
    Example: ``F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)``.
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    output_size, scale_factors = _output_and_scales(input, size, scale_factor, dim)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias:
        raise NotImplementedError(f"interpolate: antialias=True is not supported for mode '{mode}' yet; "
                                  "use antialias=False")
    nd = input.dim()
    if mode == "area" and output_size is not None:  # 'area' always has an output size by now
        if nd == 3:
            return _api.adaptive_avg_pool1d(input, output_size)
        if nd == 4:
            return _api.adaptive_avg_pool2d(input, output_size)
        if nd == 5:
            return _api.adaptive_avg_pool3d(input, output_size)
    # One branch per (mode, dims), as PyTorch writes it, so that compiled code calls the op directly.
    if mode == "nearest":
        if nd == 3:
            return _api.upsample_nearest1d(input, output_size, scale_factors)
        if nd == 4:
            return _api.upsample_nearest2d(input, output_size, scale_factors)
        if nd == 5:
            return _api.upsample_nearest3d(input, output_size, scale_factors)
    if mode == "nearest-exact":
        if nd == 3:
            return _api._upsample_nearest_exact1d(input, output_size, scale_factors)
        if nd == 4:
            return _api._upsample_nearest_exact2d(input, output_size, scale_factors)
        if nd == 5:
            return _api._upsample_nearest_exact3d(input, output_size, scale_factors)
    corners = align_corners is not None and align_corners
    if mode == "linear" and nd == 3:
        return _api.upsample_linear1d(input, output_size, corners, scale_factors)
    if mode == "bilinear" and nd == 4:
        return _api.upsample_bilinear2d(input, output_size, corners, scale_factors)
    if mode == "bicubic" and nd == 4:
        return _api.upsample_bicubic2d(input, output_size, corners, scale_factors)
    if mode == "trilinear" and nd == 5:
        return _api.upsample_trilinear3d(input, output_size, corners, scale_factors)
    if mode in ("linear", "bilinear", "trilinear") and nd in (3, 4, 5):
        needs = 3 if mode == "linear" else 4 if mode == "bilinear" else 5
        raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {needs}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: "
                              f"nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
                              f"(got {mode})")


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of ``interpolate``."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at ``grid``'s [-1, 1] positions (x first).

    Example: ``F.grid_sample(x, F.affine_grid(theta, x.shape, align_corners=False), align_corners=False)``.
    """
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    paddings = {"zeros": 0, "border": 1, "reflection": 2}
    if mode not in modes:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in paddings:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return _api.grid_sampler(input, grid, modes[mode], paddings[padding_mode], align_corners)


def affine_grid(theta: Tensor, size: list, align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) or (N, D, H, W, 3) sampling grid of affine matrices ``theta`` for an output ``size``."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(spatial) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _api.affine_grid_generator(theta, size, align_corners)
