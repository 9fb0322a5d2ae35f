"""Tensor printing, character for character as PyTorch prints (``torch/_tensor_str.py``).

One formatter per tensor decides, from the values shown, between integer
mode (``1.``), fixed point with ``precision`` digits and scientific notation,
and a common width; rows wrap at ``linewidth``; tensors with more than
``threshold`` elements show ``edgeitems`` from each end with ``...``.
Suffixes follow: ``device=``, ``size=``, ``dtype=`` (for dtypes other than the
default float, int64 and bool), ``grad_fn=<...>`` or ``requires_grad=True``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import numpy as np

from ._core import dtypes as _dt


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """Set printing options as ``torch.set_printoptions`` (``sci_mode`` is always reset to the given value)."""
    if profile is not None:
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current printing options, as a dict of ``set_printoptions`` arguments."""
    return {k: getattr(PRINT_OPTS, k) for k in ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")}


@contextlib.contextmanager
def printoptions(**kwargs) -> Iterator[None]:
    """Print with other options inside a ``with`` block."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---------------------------------------------------------------------------------------------
# The formatter
# ---------------------------------------------------------------------------------------------
class _Formatter:
    """Chooses the number format and the common width from the values that will be shown."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        flat = values.reshape(-1)
        if not self.floating:
            if flat.size:
                self.max_width = max(len(str(v)) for v in np.unique(flat).tolist())
        else:
            vals = flat.astype(np.float64)
            shown = vals[np.isfinite(vals) & (vals != 0)]
            if shown.size:
                mags = np.abs(shown)
                lo, hi = float(mags.min()), float(mags.max())
                uniq = np.unique(shown).tolist()
                self.int_mode = bool(np.all(shown == np.ceil(shown)))
                if PRINT_OPTS.sci_mode is None:
                    self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                else:
                    self.sci_mode = PRINT_OPTS.sci_mode
                if self.sci_mode:
                    self.max_width = max(self.max_width, *(len(f"{v:.{p}e}") for v in uniq))
                elif self.int_mode:
                    self.max_width = max(self.max_width, *(len(f"{v:.0f}") + 1 for v in uniq))
                else:
                    self.max_width = max(self.max_width, *(len(f"{v:.{p}f}") for v in uniq))

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


class _ComplexFormatter:
    """Complex values print as ``real+imagj``, each part with its own formatter (chosen from all real parts and
    all imaginary parts shown), as PyTorch prints them: ``tensor([1.+2.j, 3.-1.j])``."""

    def __init__(self, values: np.ndarray):
        self.real = _Formatter(values.real)
        self.imag = _Formatter(values.imag)

    def width(self) -> int:
        return self.real.width() + self.imag.width() + 1

    def format(self, value) -> str:
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _formatter(values: np.ndarray):
    return _ComplexFormatter(values) if values.dtype.kind == "c" else _Formatter(values)


# ---------------------------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------------------------
def _vector_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.width() + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [fmt.format(v) for v in a[:e].tolist()] + [" ..."] + [fmt.format(v) for v in a[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    dim = a.ndim
    if dim == 0:
        return fmt.format(a.item())
    if dim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = ([_tensor_str_with_formatter(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
                  + [_tensor_str_with_formatter(a[i], indent + 1, summarize, fmt)
                     for i in range(a.shape[0] - e, a.shape[0])])
    else:
        slices = [_tensor_str_with_formatter(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized_data(a: np.ndarray) -> np.ndarray:
    """The values a summarized print shows (``edgeitems`` from each end of every dim)."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return np.empty([0] * a.ndim, dtype=a.dtype)
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) if a.shape[0] > 2 * e else range(a.shape[0])
    return np.stack([_summarized_data(a[i]) for i in rows])


def tensor_str(a: np.ndarray, indent: int) -> str:
    """The bracketed body of a tensor's repr."""
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    fmt = _formatter(_summarized_data(a) if summarize else a)
    return _tensor_str_with_formatter(a, indent, summarize, fmt)


def repr_with_suffixes(values: np.ndarray, suffixes: list) -> str:
    """``tensor(<values>, <suffixes>)`` wrapped as PyTorch wraps it: the repr of a tensor kind that prints its own
    suffixes (a quantized tensor: its dequantized values, then size, dtype and quantization parameters)."""
    return _add_suffixes("tensor(" + tensor_str(values, 7), suffixes, 7)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        # Lines wrap where PyTorch's do: ``toolkit.float64`` counts as long as ``torch.float64``.
        n = len(suffix) - 2 * suffix.count("toolkit.")
        if last_line_len + n + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + n
        else:
            parts.append(", " + suffix)
            last_line_len += n + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, tensor_contents: str | None = None) -> str:
    """``repr`` of a Tensor: ``tensor([...], <suffixes>)`` exactly as PyTorch writes it (subclasses other
    than ``Parameter`` print their class name instead of ``tensor``)."""
    cls = type(t).__name__
    prefix = "tensor(" if cls in ("Tensor", "Parameter") else f"{cls}("
    data = t._values() if t.device.type == "cpu" else t._data.get()
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    d = t.dtype
    default = _dt.get_default_dtype()
    if data.size == 0:
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        body = "[]" if tensor_contents is None else tensor_contents
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")
        if d not in (default, _dt.int64, _dt.bool) and not (d.is_complex and d.to_real() is default):
            suffixes.append(f"dtype={d!r}")
        body = tensor_str(np.asarray(data), indent) if tensor_contents is None else tensor_contents
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    if t._extra and t._extra.get("names"):
        suffixes.append(f"names={t._extra['names']}")
    return _add_suffixes(prefix + body, suffixes, indent)
