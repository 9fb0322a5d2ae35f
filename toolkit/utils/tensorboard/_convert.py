"""Turning what users log (tensors, arrays, numbers, figures) into numpy arrays and HWC images."""

from __future__ import annotations

import numpy as np

from ...tensor import Tensor


def make_np(x) -> np.ndarray:
    """A numpy array of ``x``: a toolkit Tensor (detached), a numpy array, or a Python/numpy scalar (as shape (1,))."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])

    if isinstance(x, Tensor):
        return np.asarray(x.detach().numpy())
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # another framework's tensor
        return np.asarray(x.detach().cpu().numpy())
    raise NotImplementedError(f"Got {type(x)}, but numpy array or toolkit tensor are expected.")


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Tile NCHW images (1 or 3 channels) into one CHW image, ``ncols`` per row."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = int(np.ceil(float(n) / ncols))
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = images[i]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:  # noqa: N802  (PyTorch's name)
    """Reorder an image (``CHW``, ``HWC``, ``HW``) or a batch (``NCHW``, ``NHWC``, tiled into a grid) to HWC."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {tensor.shape}, "
                             f"input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        nchw = tensor.transpose([input_format.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc, hwc, hwc], 2)
        return hwc
    if len(input_format) == 2:
        hw = tensor.transpose([input_format.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    raise AssertionError(f"input_format must have 2, 3 or 4 letters, got {input_format!r}")


def figure_to_image(figures, close: bool = True) -> np.ndarray:
    """Render a matplotlib figure (CHW uint8) or a list of them (NCHW) with the Agg backend."""
    import matplotlib.backends.backend_agg as agg  # optional: matplotlib
    import matplotlib.pyplot as plt  # optional: matplotlib

    def render(figure) -> np.ndarray:
        canvas = agg.FigureCanvasAgg(figure)
        canvas.draw()
        data = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
        w, h = figure.canvas.get_width_height()
        chw = np.moveaxis(data.reshape([h, w, 4])[:, :, :3], 2, 0)
        if close:
            plt.close(figure)
        return chw

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)
