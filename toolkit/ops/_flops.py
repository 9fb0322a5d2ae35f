"""FLOP estimates from input shapes, by PyTorch's formulas (``torch/csrc/profiler/util.cpp``).

Ops name their formula with the ``flops=`` option of ``@op``; the profiler asks ``OpDef.flops``.

Matrix products count a multiply and an add per term (``2*M*N*K``), convolutions
``2 * output elements * input channels per group * kernel size``, elementwise
``mul``/``add`` one per output element.
"""

from __future__ import annotations

import math

import numpy as np


def _shape(v) -> tuple:
    return tuple(getattr(v, "shape", ()))


def mm(bound) -> int:
    (m, k), (_, n) = _shape(bound[0]), _shape(bound[1])
    return 2 * m * n * k


def addmm(bound) -> int:
    (m, k), (_, n) = _shape(bound[1]), _shape(bound[2])
    return 2 * m * n * k


def bmm(bound) -> int:
    (b, m, k), (_, _, n) = _shape(bound[0]), _shape(bound[1])
    return 2 * b * m * n * k


def linear(bound) -> int:
    x, w = _shape(bound[0]), _shape(bound[1])
    return 2 * math.prod(x) * w[0]


def matmul(bound) -> int:
    a, b = _shape(bound[0]), _shape(bound[1])
    if not a or not b:
        return 0
    k = a[-1]
    n = b[-1] if len(b) > 1 else 1
    batch_m = math.prod(a[:-1])
    batch_b = math.prod(b[:-2]) if len(b) > 2 else 1
    return 2 * max(batch_m, batch_m * batch_b) * n * k


def conv(bound) -> int:
    x, w = _shape(bound[0]), _shape(bound[1])
    if len(x) < 3 or len(w) < 3:
        return 0
    stride, padding, dilation = bound[3], bound[4], bound[5]
    groups = bound[-1] if isinstance(bound[-1], int) else 1
    out = [x[0], w[0]]
    same = padding == "same"
    if isinstance(padding, str):
        padding = 0
    stride, padding, dilation = (t if isinstance(t, (tuple, list)) else (t,) for t in (stride, padding, dilation))
    for i, size in enumerate(x[2:]):
        s, p, d = (t[i] if len(t) > i else t[0] for t in (stride, padding, dilation))
        out.append(size if same else (size + 2 * p - d * (w[2 + i] - 1) - 1) // s + 1)
    return 2 * math.prod(out) * (x[1] // max(groups, 1)) * math.prod(w[2:])


def elementwise(bound) -> int:
    shapes = [_shape(v) for v in bound[:2]]
    try:
        return math.prod(np.broadcast_shapes(*shapes))
    except ValueError:
        return 0
