"""Tensor printing in PyTorch's format: ``tensor([...], dtype=..., requires_grad=True)``."""

from __future__ import annotations

import numpy as np

from ._core import dtypes as _dt


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set printing options as ``torch.set_printoptions``."""
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 2**63 - 1, 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def tensor_repr(t) -> str:
    data = t._data
    body = np.array2string(data, separator=", ", precision=PRINT_OPTS.precision, threshold=PRINT_OPTS.threshold)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default_float = _dt.get_default_dtype()
    d = t.dtype
    if not (d is default_float or d is _dt.int64 or d is _dt.bool) or data.size == 0:
        if not (data.size == 0 and d is default_float):
            suffixes.append(f"dtype={d}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    prefix = "tensor("
    body = body.replace("\n", "\n" + " " * len(prefix))
    return prefix + body + "".join(", " + s for s in suffixes) + ")"
