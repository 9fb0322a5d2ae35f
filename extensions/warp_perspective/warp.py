"""The slides' just-in-time route: ``extension.cpp`` built with ``cpp_extension.load``, then
``output = module.compute(image, warp)``.

``compute`` warps a float32 image with a 3x3 homography by ``cv::warpPerspective`` (bilinear, zero border)
into a 64x64 image. ``reference`` is the same warp written in numpy, and the check compares with OpenCV's own
Python binding where ``cv2`` is installed, else with ``reference``.

```
python extensions/warp_perspective/warp.py   # builds (or reuses) the extension, warps an image, checks it
```
"""

from __future__ import annotations

import functools
import os
import sys

import numpy as np

import toolkit
from toolkit.utils.cpp_extension import load

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from opencv_flags import opencv_flags  # noqa: E402 - beside this file

#: The output size the slides' code fixes (cv::Size{64, 64}).
OUT = 64
#: OpenCV's sub-pixel grid for INTER_LINEAR warps: source coordinates are rounded to 1/32 of a pixel.
INTER_TAB_SIZE = 32


@functools.cache
def build(**kwargs):
    """The compiled extension (cached: a second call with unchanged sources runs no compiler)."""
    includes, library_dirs, libraries = opencv_flags()
    ldflags = [f"-L{d}" for d in library_dirs] + [f"-l{lib}" for lib in libraries]
    return load(name="extension", sources=os.path.join(HERE, "extension.cpp"), extra_cflags=["-O2"],
                extra_include_paths=includes, extra_ldflags=ldflags, **kwargs)


def synthesized_image(height: int = 128, width: int = 128) -> np.ndarray:
    """A smooth float32 test image in [0, 1]: two gratings and a ramp (smooth, so bilinear rounding is small)."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    image = 0.4 + 0.25 * np.sin(x / 9.0) * np.cos(y / 13.0) + 0.3 * (x + y) / (height + width)
    return image.astype(np.float32)


def homography() -> np.ndarray:
    """A known 3x3 warp (source to destination): about half scale, a slight rotation, shift and perspective."""
    return np.array([[0.45, 0.06, 3.0],
                     [-0.04, 0.48, 5.0],
                     [2e-4, 3e-4, 1.0]], dtype=np.float32)


def reference(image: np.ndarray, warp: np.ndarray, size: tuple[int, int] = (OUT, OUT)) -> np.ndarray:
    """``cv2.warpPerspective(image, warp, size)`` in numpy: bilinear, constant 0 border, float32.

    Each output pixel (x, y) reads the source at inverse(warp) @ (x, y, 1), as OpenCV does without
    WARP_INVERSE_MAP, with the coordinates rounded to OpenCV's 1/32-pixel grid; taps outside the image are 0.
    """
    width, height = size
    inverse = np.linalg.inv(warp.astype(np.float64))
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    sx, sy, sw = (inverse @ np.stack([xs.ravel(), ys.ravel(), np.ones(xs.size)])).reshape(3, height, width)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(sw != 0, INTER_TAB_SIZE / sw, 0.0)
    fx = np.clip(np.rint(sx * scale), -2**31, 2**31 - 1) / INTER_TAB_SIZE
    fy = np.clip(np.rint(sy * scale), -2**31, 2**31 - 1) / INTER_TAB_SIZE
    x0, y0 = np.floor(fx), np.floor(fy)
    ax, ay = fx - x0, fy - y0
    padded = np.pad(image.astype(np.float64), 1)  # one zero pixel all round: taps outside read 0

    def tap(dy: int, dx: int) -> np.ndarray:
        r, c = y0 + dy, x0 + dx
        inside = (r >= -1) & (r <= image.shape[0]) & (c >= -1) & (c <= image.shape[1])
        values = padded[np.where(inside, r + 1, 0).astype(np.int64), np.where(inside, c + 1, 0).astype(np.int64)]
        return np.where(inside, values, 0.0)

    out = ((1 - ay) * ((1 - ax) * tap(0, 0) + ax * tap(0, 1)) + ay * ((1 - ax) * tap(1, 0) + ax * tap(1, 1)))
    return out.astype(np.float32)


def opencv_reference(image: np.ndarray, warp: np.ndarray) -> tuple[np.ndarray, str]:
    """The expected output and where it came from: OpenCV's Python binding if installed, else :func:`reference`."""
    try:
        import cv2  # optional: OpenCV's own Python binding
    except ImportError:
        return reference(image, warp), "numpy reference"
    return cv2.warpPerspective(image, warp, (OUT, OUT)), f"cv2 {cv2.__version__}"


def main() -> None:
    module = build(verbose=True)
    image = toolkit.from_numpy(synthesized_image())
    warp = toolkit.from_numpy(homography())
    output = module.compute(image, warp)
    expected, source = opencv_reference(image.numpy(), warp.numpy())
    error = float(np.abs(output.numpy() - expected).max())
    print(f"compute({tuple(image.shape)} image, 3x3 warp) -> {type(output).__name__} {tuple(output.shape)} "
          f"{output.dtype}; max |difference| from the {source}: {error:.2e}")
    assert error < 1e-4, error


if __name__ == "__main__":
    main()
