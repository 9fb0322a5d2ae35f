"""Linear maps of ``toolkit.nn``: linear, bilinear and embedding.

``linear`` is one BLAS matmul plus a bias add over any leading dims;
``bilinear`` one ``einsum``; ``embedding`` a row gather whose weight
gradient accumulates rows with ``index_add`` (the padding row gets none).
Derivatives are written with registered ops, so double backward works.
"""

from __future__ import annotations

import numpy as np

from .._core import blas_threads as _blas
from .._core import dtypes as _dt
from .._core import names as _names
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes
from . import _flops, api
from .registry import NN, op


def _api():
    return api


def _fmt(shape) -> str:
    return "x".join(str(s) for s in shape)


def _linear_check(input_shape, weight_shape, bias_shape, in_dtype, w_dtype, b_dtype):
    if len(input_shape) == 0 or len(weight_shape) not in (1, 2):
        raise RuntimeError(f"linear: both arguments to linear need to be at least 1D, but they are "
                           f"{len(input_shape)}D and {len(weight_shape)}D")
    if in_dtype != w_dtype or (b_dtype is not None and b_dtype != in_dtype):
        other = w_dtype if in_dtype != w_dtype else b_dtype
        raise RuntimeError(f"linear: expected m1 and m2 to have the same dtype, but got: "
                           f"{_dt.cpp_name(in_dtype)} != {_dt.cpp_name(other)}")
    k = weight_shape[-1]
    if input_shape[-1] != k:
        rows = int(np.prod(input_shape[:-1])) if len(input_shape) > 1 else 1
        wt = (k, weight_shape[0]) if len(weight_shape) == 2 else (k,)
        raise RuntimeError(f"linear: mat1 and mat2 shapes cannot be multiplied "
                           f"({rows}x{input_shape[-1]} and {_fmt(wt)})")
    out = tuple(input_shape[:-1]) + (tuple(weight_shape[:1]) if len(weight_shape) == 2 else ())
    if bias_shape is not None:
        try:
            b = broadcast_shapes(tuple(bias_shape), out)
        except RuntimeError as e:
            raise RuntimeError(f"linear: bias of shape {tuple(bias_shape)} does not fit the output "
                               f"{out}: {e}") from None
        if tuple(b) != out:
            raise RuntimeError(f"linear: bias of shape {tuple(bias_shape)} does not fit the output {out}")
    return out


def _linear_node(bound, outputs) -> str:
    """PyTorch's linear is ``addmm`` (``mm`` without bias) on a matrix input; other inputs are folded into a
    matrix and the product viewed back (``SqueezeBackward4``: a vector times the matrix, without bias)."""
    dim, bias = bound[0].dim(), bound[2] is not None
    if dim == 2:
        return "AddmmBackward0" if bias else "MmBackward0"
    return "ViewBackward0" if bias else "SqueezeBackward4" if dim == 1 else "UnsafeViewBackward0"


@op("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", kind=NN, name_rule=_names.linear,
    autocast="lower", method=False,
    namespace="nn.functional", flops=_flops.linear, grad_fn=_linear_node)
def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` over any leading dims of ``input``: one matmul."""
    _linear_check(input.shape, weight.shape, None if bias is None else bias.shape, input.dtype, weight.dtype,
                  None if bias is None else bias.dtype)
    if input.ndim > 2 and weight.ndim == 2:
        out = _blas.matmul(input.reshape(-1, input.shape[-1]), weight.T).reshape(input.shape[:-1] + (weight.shape[0],))
    else:
        out = _blas.matmul(input, weight.T)
    if bias is not None:
        out = np.add(out, bias, out=out) if isinstance(out, np.ndarray) and out.ndim else out + bias
    return np.asarray(out, dtype=input.dtype)


@linear.meta_rule
def _(input, weight, bias=None):
    shape = _linear_check(tuple(input.shape), tuple(weight.shape), None if bias is None else tuple(bias.shape),
                          input.dtype, weight.dtype, None if bias is None else bias.dtype)
    return TensorMeta(shape, input.dtype, input.device)


@linear.grad
def _(grad, input, weight, bias, needs_input_grad):
    gi = gw = gb = None
    grad = grad.contiguous()  # a broadcast grad (from sum's backward) would keep BLAS out of the matmuls
    if needs_input_grad[0]:
        gi = grad.unsqueeze(-1) * weight if weight.ndim == 1 else grad.matmul(weight)
    if needs_input_grad[1]:
        if weight.ndim == 1:
            gw = (grad.unsqueeze(-1) * input).reshape(-1, weight.shape[0]).sum(0)
        elif input.ndim == 1:
            gw = grad.unsqueeze(-1) * input.unsqueeze(0)
        elif input.ndim == 2:  # a batch of rows: no reshapes to dispatch
            gw = grad.t().matmul(input)
        else:
            gw = grad.reshape(-1, weight.shape[0]).t().matmul(input.reshape(-1, weight.shape[1]))
    if bias is not None and needs_input_grad[2]:
        gb = grad  # the engine sums the broadcast dims back to bias's shape
    return gi, gw, gb


@linear.symbolic
def _(g, input, weight, bias=None):
    if g.rank(input) == 2 and g.rank(weight) == 2:
        return g.op("Gemm", input, weight, bias, transB=1)
    out = g.op("MatMul", input, g.op("Transpose", weight, perm=[1, 0]) if g.rank(weight) == 2 else weight)
    return out if bias is None else g.op("Add", out, bias)


@op("bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor", kind=NN,
    method=False, grad_fn=lambda bound, outputs: "ViewBackward0" if bound[3] is None else "AddBackward0")
def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``."""
    _bilinear_check(input1.shape, input2.shape, weight.shape, None if bias is None else bias.shape)
    out = np.einsum("...i,oij,...j->...o", input1, weight, input2, optimize=True)
    if bias is not None:
        out = out + bias
    return np.asarray(out, dtype=np.result_type(input1.dtype, weight.dtype))


def _bilinear_check(s1, s2, sw, sb):
    s1, s2, sw = tuple(s1), tuple(s2), tuple(sw)
    if len(s1) != len(s2):
        raise RuntimeError(f"bilinear: input1 and input2 must have the same number of dimensions, "
                           f"but got {len(s1)} and {len(s2)}")
    if s1[:-1] != s2[:-1]:
        raise RuntimeError(f"bilinear: input1 and input2 must have the same size except the last dimension, "
                           f"but got {s1} and {s2}")
    if len(sw) != 3:
        raise RuntimeError(f"bilinear: weight must be 3-dimensional, but got {len(sw)} dimensions")
    if not s1 or s1[-1] != sw[1]:
        raise RuntimeError(f"bilinear: input1 size does not match weight size: got {s1[-1] if s1 else None} "
                           f"but expected {sw[1]}")
    if s2[-1] != sw[2]:
        raise RuntimeError(f"bilinear: input2 size does not match weight size: got {s2[-1]} but expected {sw[2]}")
    if sb is not None and tuple(sb)[-1:] != (sw[0],):
        raise RuntimeError(f"bilinear: bias size does not match weight size: got {tuple(sb)} but expected "
                           f"({sw[0]},)")
    return s1[:-1] + (sw[0],)


@bilinear.meta_rule
def _(input1, input2, weight, bias=None):
    shape = _bilinear_check(input1.shape, input2.shape, weight.shape, None if bias is None else bias.shape)
    return TensorMeta(shape, input1.dtype, input1.device)


@bilinear.grad
def _(grad, input1, input2, weight, bias, needs_input_grad):
    es = _api().einsum
    grad = grad.contiguous()
    g1 = es("...o,oij,...j->...i", grad, weight, input2) if needs_input_grad[0] else None
    g2 = es("...o,oij,...i->...j", grad, weight, input1) if needs_input_grad[1] else None
    gw = None
    if needs_input_grad[2]:
        o, i, j = weight.shape
        gw = es("no,ni,nj->oij", grad.reshape(-1, o), input1.reshape(-1, i), input2.reshape(-1, j))
    gb = grad if bias is not None and needs_input_grad[3] else None
    return g1, g2, gw, gb


# ----------------------------------------------------------------------------- embedding
def _embedding_check(weight_shape, indices_dtype):
    if len(weight_shape) != 2:
        raise RuntimeError(f"embedding: 'weight' must be 2-D, but got {len(weight_shape)}-D")
    if np.dtype(indices_dtype.name).name not in ("int64", "int32"):
        raise RuntimeError(f"embedding: Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got torch.{_dt.title(indices_dtype)}Tensor instead "
                           f"(while checking arguments for embedding)")


@op("embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, "
    "bool sparse=False) -> Tensor", kind=NN, method=False, nondiff_args=("indices",))
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by ``indices``: output shape ``indices.shape + (embedding_dim,)``."""
    _embedding_check(weight.shape, indices.dtype)
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("embedding: index out of range in self")
    return np.take(weight, indices, axis=0)


@embedding.meta_rule
def _(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    _embedding_check(tuple(weight.shape), indices.dtype)
    return TensorMeta(tuple(indices.shape) + (weight.shape[1],), weight.dtype, weight.device)


@embedding.grad
def _(grad, weight, indices, padding_idx, scale_grad_by_freq):
    api = _api()
    n, dim = weight.shape
    flat = indices.reshape(-1)
    rows = grad.reshape(-1, dim)
    if padding_idx is not None and padding_idx >= 0:
        rows = rows * (flat != padding_idx).unsqueeze(1).to(rows.dtype)
    if scale_grad_by_freq:
        counts = api.zeros((n,), dtype=rows.dtype).index_add(0, flat, api.ones(flat.shape, dtype=rows.dtype))
        rows = rows / counts.index_select(0, flat).unsqueeze(1)
    return api.zeros((n, dim), dtype=rows.dtype).index_add(0, flat, rows)


# ----------------------------------------------------------------------------- samples
@linear.sample_inputs
def _(rng):
    yield (rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2,))), {}
    yield (rng.uniform(-1, 1, (2, 3, 3)), rng.uniform(-1, 1, (2, 3))), {}
    yield (rng.uniform(-1, 1, (3, 4)).T, rng.uniform(-1, 1, (3, 2)).T, rng.uniform(-1, 1, (2,))), {}
    yield (rng.uniform(-1, 1, (3,)), rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2,))), {}
    yield (rng.uniform(-1, 1, (0, 3)), rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2,))), {}
    yield (rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3,))), {}


@bilinear.sample_inputs
def _(rng):
    yield (rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (2, 2, 4)),
           rng.uniform(-1, 1, (2,))), {}
    yield (rng.uniform(-1, 1, (2, 2, 3)), rng.uniform(-1, 1, (2, 2, 2)), rng.uniform(-1, 1, (3, 3, 2))), {}
    yield (rng.uniform(-1, 1, (2, 3)).T, rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (2, 2, 2))), {}


@embedding.sample_inputs
def _(rng):
    """padding_idx and scale_grad_by_freq change the gradient on purpose (no true Jacobian to check):
    tests/nn/test_embedding.py compares them with PyTorch's gradients instead."""
    yield (rng.uniform(-1, 1, (5, 3)), np.array([[0, 2, 4], [2, 2, 1]])), {}
    yield (rng.uniform(-1, 1, (5, 3)), np.array([1, 2, 1, 0])), {}
    yield (rng.uniform(-1, 1, (4, 2)), np.array(2)), {}
    yield (rng.uniform(-1, 1, (4, 2)), np.zeros((0, 2), dtype=np.int64)), {}


@embedding.symbolic
def _(g, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return g.op("Gather", weight, indices, axis=0)
