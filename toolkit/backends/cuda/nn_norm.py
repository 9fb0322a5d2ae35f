"""Normalization, losses and glu on the device, composed from map kernels and row reductions.

Normalizations gather their statistics with :func:`.reduce.row_reduce` (the
normalized dims moved last, one block per row) and apply them with one map
kernel whose operands broadcast the per-row sums back; ``batch_norm`` in
training mode also updates ``running_mean``/``running_var`` in place, on the
device. Losses are one map kernel for the pointwise loss and, for 'mean' and
'sum', one row reduction. Checks, output shapes and dtypes come from the CPU
ops' own helpers and meta rules, so errors read the same on both devices.
Logarithms of values outside their domain are guarded in the formulas, so
the kernels give what numpy gives (``-inf`` clamped, ``nan``) on the GPU and
under the simulator (whose Python ``math`` raises instead).
"""

from __future__ import annotations

import math

import numpy as np

from ...ops import registry as R
from ...ops.elementwise import not_implemented
from ...ops.loss import check_loss_input
from .array import CudaArray, fill
from .codegen import run_map, typed_scalar
from .reduce import row_reduce
from .registration import meta_of, register_table

NONE, MEAN, SUM = 0, 1, 2


def _work(dtype: np.dtype) -> np.dtype:
    """The dtype statistics are computed in: the input's when floating, else float64 (as numpy's mean)."""
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _affine(expr: str, weight, bias) -> str:
    """``expr`` scaled by ``w`` and shifted by ``b`` where those operands are given."""
    if weight is not None:
        expr = f"({expr}) * w"
    if bias is not None:
        expr = f"{expr} + b"
    return expr


def _operands(x: CudaArray, weight, bias, wshape: tuple) -> dict:
    ops = {"x": x}
    if weight is not None:
        ops["w"] = weight.reshape(wshape)
    if bias is not None:
        ops["b"] = bias.reshape(wshape)
    return ops


def _row_stats(x: CudaArray, dims: tuple, kept_shape: tuple, count: int, work: np.dtype) -> tuple:
    """Sums of ``x`` and of its squared deviations from the mean over ``dims``, shaped ``kept_shape``."""
    s, _ = row_reduce(x, dims, "sum", work)
    s = s.reshape(kept_shape)
    kk = typed_scalar(count, work)
    sq = run_map("(x - s / kk) * (x - s / kk)", CudaArray.empty(x.shape, work), {"x": x, "s": s}, {"kk": kk})
    q, _ = row_reduce(sq, dims, "sum", work)
    return s, q.reshape(kept_shape)


# ----------------------------------------------------------------------------- normalization
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    meta_of(R.get("layer_norm"), [input, normalized_shape, weight, bias, eps])
    k = math.prod(normalized_shape)
    if input.size == 0:
        return CudaArray.empty(input.shape, input.dtype)
    rows = input.size // k
    work = _work(input.dtype)
    x = input.reshape((rows, k))
    s, q = _row_stats(x, (1,), (rows, 1), k, work)
    expr = _affine("(x - s / kk) / math.sqrt(q / kk + eps)", weight, bias)
    ops = _operands(x, weight, bias, (k,))
    ops.update(s=s, q=q)
    out = CudaArray.empty((rows, k), input.dtype)
    run_map(expr, out, ops, {"kk": typed_scalar(k, work), "eps": typed_scalar(eps, work)})
    return out.reshape(input.shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    meta_of(R.get("group_norm"), [input, num_groups, weight, bias, eps])
    if input.size == 0:
        return CudaArray.empty(input.shape, input.dtype)
    n, c = input.shape[:2]
    cg = c // num_groups
    rest = input.size // (n * c)
    k = cg * rest
    work = _work(input.dtype)
    x = input.reshape((n, num_groups, cg, rest))
    s, q = _row_stats(x, (2, 3), (n, num_groups, 1, 1), k, work)
    expr = _affine("(x - s / kk) / math.sqrt(q / kk + eps)", weight, bias)
    ops = _operands(x, weight, bias, (num_groups, cg, 1))
    ops.update(s=s, q=q)
    out = CudaArray.empty(x.shape, input.dtype)
    run_map(expr, out, ops, {"kk": typed_scalar(k, work), "eps": typed_scalar(eps, work)})
    return out.reshape(input.shape)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-05):
    meta_of(R.get("batch_norm"), [input, running_mean, running_var, weight, bias, training, momentum, eps])
    n, c = input.shape[:2]
    count = input.size // max(c, 1)
    work = _work(input.dtype)
    x = input.reshape((n, c, count // max(n, 1) if n else 0))
    out = CudaArray.empty(x.shape, input.dtype)
    params = {"eps": typed_scalar(eps, work)}
    if training:
        if count == 0:
            for r in (running_mean, running_var):
                if r is not None:
                    fill(r, np.nan)
            return out.reshape(input.shape)
        s, q = _row_stats(x, (0, 2), (1, c, 1), count, work)
        _update_running(running_mean, running_var, s.reshape((c,)), q.reshape((c,)), count, momentum)
        stats = {"s": s, "q": q}
        params["kk"] = typed_scalar(count, work)
        expr = "(x - s / kk) * (1.0 / math.sqrt(q / kk + eps)" + (" * w)" if weight is not None else ")")
    else:
        stats = {"rm": running_mean.reshape((1, c, 1)), "rv": running_var.reshape((1, c, 1))}
        expr = "(x - rm) * (1.0 / math.sqrt(rv + eps)" + (" * w)" if weight is not None else ")")
    if bias is not None:
        expr += " + b"
    ops = _operands(x, weight, bias, (1, c, 1))
    ops.update(stats)
    run_map(expr, out, ops, params)
    return out.reshape(input.shape)


def _update_running(running_mean, running_var, s, q, count: int, momentum: float) -> None:
    """``running = (1 - momentum) * running + momentum * batch statistic``, in place (the variance unbiased)."""
    mom = {"mom": float(momentum), "kk": float(count)}
    if running_mean is not None:
        run_map("(1.0 - mom) * r + mom * (s / kk)", running_mean, {"r": running_mean, "s": s}, mom)
    if running_var is not None:
        corr = count / (count - 1) if count > 1 else float("nan")
        run_map("(1.0 - mom) * r + mom * (q / kk * corr)", running_var, {"r": running_var, "q": q},
                dict(mom, corr=corr))


# ----------------------------------------------------------------------------- losses
def _reduced(loss: CudaArray, reduction: int) -> CudaArray:
    """The pointwise loss reduced as aten does: kept, summed, or averaged (the mean of nothing is nan)."""
    if reduction == NONE:
        return loss
    total, _ = row_reduce(loss, tuple(range(loss.ndim)), "sum")
    total = total.reshape(())
    if reduction == SUM:
        return total
    out = CudaArray.empty((), loss.dtype)
    if loss.size == 0:
        return fill(out, np.nan)
    return run_map("t / kk", out, {"t": total}, {"kk": typed_scalar(loss.size, loss.dtype)})


def _pointwise_loss(expr: str, shape: tuple, dtype, inputs: dict, params: dict, reduction: int,
                    weight=None) -> CudaArray:
    """``expr`` over the broadcast ``inputs`` (``shape`` is the full, unreduced shape), times ``weight`` when
    given, then reduced."""
    if weight is not None:
        expr, inputs = f"({expr}) * w", dict(inputs, w=weight)
    loss = run_map(expr, CudaArray.empty(shape, dtype), inputs, params)
    return _reduced(loss, reduction)


def _full_shape(*arrays) -> tuple:
    return tuple(np.broadcast_shapes(*[a.shape for a in arrays if a is not None]))


def _regression(name: str, cpu_name: str, expr_of):
    """A loss ``expr_of(params) -> formula`` over ``a = self``, ``b = target`` (already promoted)."""
    def kernel(self, target, reduction=MEAN, *rest):
        check_loss_input(cpu_name, self, reduction)
        meta = meta_of(R.get(name), [self, target, reduction, *rest])
        expr, params = expr_of(self, target, *rest)
        dtype = meta.dtype.np
        params = {k: typed_scalar(v, dtype) for k, v in params.items()}
        return _pointwise_loss(expr, _full_shape(self, target), dtype, {"a": self, "b": target}, params, reduction)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def _smooth_l1(self, target, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return "abs(a - b)", {}
    return "0.5 * abs(a - b) * abs(a - b) / beta if abs(a - b) < beta else abs(a - b) - 0.5 * beta", {"beta": beta}


def _huber(self, target, delta=1.0):
    check_loss_input("huber", target, MEAN)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return "0.5 * abs(a - b) * abs(a - b) if abs(a - b) < delta else delta * (abs(a - b) - 0.5 * delta)", \
        {"delta": delta}


def _any_outside_unit(x: CudaArray) -> bool:
    """Whether some element is not in [0, 1] (nan included): one count read back, as aten's check does."""
    if x.size == 0:
        return False
    flags = run_map("0 if (x >= 0 and x <= 1) else 1", CudaArray.empty(x.shape, np.int64), {"x": x}, {})
    total, _ = row_reduce(flags, tuple(range(flags.ndim)), "sum")
    return bool(total.item())


def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    check_loss_input("binary_cross_entropy", self, reduction)
    meta_of(R.get("binary_cross_entropy"), [self, target, weight, reduction])
    if _any_outside_unit(self):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if _any_outside_unit(target):
        raise RuntimeError("all elements of target should be between 0 and 1")
    expr = ("(t - 1) * max(math.log1p(-x) if x < 1 else -100.0, -100.0) "
            "- t * max(math.log(x) if x > 0 else -100.0, -100.0)")
    return _pointwise_loss(expr, _full_shape(self, target, weight), self.dtype, {"x": self, "t": target}, {},
                           reduction, weight)


def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=MEAN):
    meta = meta_of(R.get("binary_cross_entropy_with_logits"), [self, target, weight, pos_weight, reduction])
    log_sig = "(min(x, 0.0) - math.log1p(math.exp(-abs(x))))"
    inputs = {"x": self, "t": target}
    if pos_weight is not None:
        log_sig = f"{log_sig} * ((p - 1) * t + 1)"
        inputs["p"] = pos_weight
    expr = f"(1 - t) * x - {log_sig}"
    shape = _full_shape(self, target, weight, pos_weight)
    return _pointwise_loss(expr, shape, meta.dtype.np, inputs, {}, reduction, weight)


def kl_div(self, target, reduction=MEAN, log_target=False):
    check_loss_input("kl_div", self, reduction)
    meta_of(R.get("kl_div"), [self, target, reduction, log_target])
    if log_target:
        expr = "math.exp(t) * (t - x)"
    else:
        expr = "(0.0 if t == 0 else (t * math.log(t) if t > 0 else nan)) - t * x"
    params = {"nan": typed_scalar(np.nan, self.dtype)} if not log_target else {}
    return _pointwise_loss(expr, _full_shape(self, target), self.dtype, {"x": self, "t": target}, params, reduction)


# ----------------------------------------------------------------------------- glu
def glu(self, dim=-1):
    meta = meta_of(R.get("glu"), [self, dim])
    if self.dtype.kind != "f":
        raise not_implemented("glu", "glu_cpu", self.dtype)
    d = dim % self.ndim
    half = tuple(meta.shape)
    a = self.view_of(half, self.strides, self.offset)
    b = self.view_of(half, self.strides, self.offset + half[d] * self.estrides[d])
    return run_map("a / (1.0 + math.exp(-b))", CudaArray.empty(half, self.dtype), {"a": a, "b": b}, {})


def register() -> list:
    table = {
        "layer_norm": layer_norm, "group_norm": group_norm, "batch_norm": batch_norm,
        "mse_loss": _regression("mse_loss", "mse", lambda s, t: ("(a - b) * (a - b)", {})),
        "l1_loss": _regression("l1_loss", "l1", lambda s, t: ("abs(a - b)", {})),
        "smooth_l1_loss": _regression("smooth_l1_loss", "smooth_l1", _smooth_l1),
        "huber_loss": _regression("huber_loss", "huber", _huber),
        "binary_cross_entropy": binary_cross_entropy,
        "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
        "kl_div": kl_div, "glu": glu,
    }
    return register_table(table)
