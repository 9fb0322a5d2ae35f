"""Convolutions: conv1d/2d/3d (int or 'same'/'valid' padding), conv_transpose1d/2d/3d, conv_tbc and convolution.

Kernels are im2col + one batched BLAS matmul (see ``_conv_kernels``). Every
derivative is itself a ``convolution`` call (the input gradient is the
transposed convolution, the weight gradient a convolution of the input by the
output gradient with stride and dilation swapped), so double backward works.

Example::

    y = toolkit.conv2d(x, w, b, stride=1, padding="same")  # also toolkit.nn.functional.conv2d
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from . import api
from ._conv_kernels import (
    check_dims,
    conv_forward,
    conv_output_shape,
    conv_transpose_forward,
    expand_param,
    same_padding,
)
from ._flops import conv as _conv_flops
from .registry import NN, op


# ---------------------------------------------------------------------------------------------
# Argument normalisation shared by kernels and meta rules
# ---------------------------------------------------------------------------------------------
def _params(nd, stride, padding, dilation):
    stride = expand_param(stride, nd, "stride")
    dilation = expand_param(dilation, nd, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            lo = hi = None
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        lo = hi = expand_param(padding, nd, "padding")
    return stride, lo, hi, dilation


def conv_setup(name, nd, input, weight, bias, stride, padding, dilation, groups):
    """Check a conv call; return (batched, stride, pad_lo, pad_hi, dilation, batched output shape)."""
    batched = check_dims(name, input.shape, nd)
    x_shape = tuple(input.shape) if batched else (1,) + tuple(input.shape)
    stride, lo, hi, dilation = _params(nd, stride, padding, dilation)
    if lo is None:
        lo, hi = same_padding(weight.shape, dilation)
    out = conv_output_shape(x_shape, tuple(weight.shape), None if bias is None else tuple(bias.shape), stride,
                            lo, hi, dilation, groups, x_dtype=input.dtype, w_dtype=weight.dtype,
                            b_dtype=None if bias is None else bias.dtype)
    return batched, stride, lo, hi, dilation, out


def _conv_kernel(name, nd):
    def kernel(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
        batched, stride, lo, hi, dilation, _ = conv_setup(name, nd, input, weight, bias, stride, padding,
                                                          dilation, groups)
        x = input if batched else input[None]
        out = conv_forward(x, weight, bias, stride, lo, hi, dilation, groups)
        return out if batched else out[0]

    return kernel


def _conv_meta(name, nd):
    def meta(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
        batched, *_, out = conv_setup(name, nd, input, weight, bias, stride, padding, dilation, groups)
        return TensorMeta(out if batched else out[1:], input.dtype, input.device)

    return meta


# ---------------------------------------------------------------------------------------------
# Derivatives, written with registered ops
# ---------------------------------------------------------------------------------------------
def _narrow_to(t, shape):
    """``t`` cut down to ``shape`` along the spatial dimensions where it is larger."""
    for d in range(2, t.ndim):
        if t.shape[d] != shape[d]:
            t = t.narrow(d, 0, shape[d])
    return t


def _weight_grad(grad_out, input, w_shape, stride, padding, dilation, groups):
    """d(loss)/d(weight) of a convolution: a grouped convolution of the input by the output gradient."""
    n, c = input.shape[:2]
    o = grad_out.shape[1]
    g = groups
    cg, og = c // g, o // g
    nd = input.ndim - 2
    sp, osp = tuple(input.shape[2:]), tuple(grad_out.shape[2:])
    if g == 1:  # the same views as below, in two ops instead of six (each op costs its dispatch)
        x, go = input.transpose(0, 1), grad_out.transpose(0, 1)
    else:
        rest = tuple(range(3, 3 + nd))
        x = input.reshape((n, g, cg) + sp).permute((2, 1, 0) + rest).reshape((cg, g * n) + sp)
        go = grad_out.reshape((n, g, og) + osp).permute((1, 2, 0) + rest).reshape((g * og, n) + osp)
    r = api.convolution(x, go, None, dilation, padding, stride, False, (0,) * nd, g)
    r = _narrow_to(r, (cg, o) + tuple(w_shape[2:]))
    return r.transpose(0, 1)


def _conv_grads(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups, needs):
    """Gradients (input, weight, bias) of a batched ``convolution`` with symmetric padding."""
    nd = input.ndim - 2
    stride = expand_param(stride, nd, "stride")
    padding = expand_param(padding, nd, "padding")
    dilation = expand_param(dilation, nd, "dilation")
    gi = gw = gb = None
    if not transposed:
        if needs[0]:
            op_ = tuple(i - ((o - 1) * s - 2 * p + d * (k - 1) + 1) for i, o, s, p, d, k in zip(
                input.shape[2:], grad.shape[2:], stride, padding, dilation, weight.shape[2:]))
            gi = api.convolution(grad, weight, None, stride, padding, dilation, True, op_, groups)
        if needs[1]:
            gw = _weight_grad(grad, input, weight.shape, stride, padding, dilation, groups)
    else:
        if needs[0]:
            gi = api.convolution(grad, weight, None, stride, padding, dilation, False, (0,) * nd, groups)
            gi = _narrow_to(gi, input.shape)
        if needs[1]:
            gw = _weight_grad(input, grad, weight.shape, stride, padding, dilation, groups)
    if len(needs) > 2 and needs[2]:
        gb = grad.sum((0,) + tuple(range(2, grad.ndim)))
    return gi, gw, gb


def _public_conv_grad(nd, name):
    def grad_rule(grad, input, weight, stride, padding, dilation, groups, needs_input_grad):
        batched = input.ndim == nd + 2
        x = input if batched else input.unsqueeze(0)
        g = grad if batched else grad.unsqueeze(0)
        stride_, lo, hi, dilation_ = _params(nd, stride, padding, dilation)
        if lo is None:
            lo, hi = same_padding(weight.shape, dilation_)
        if lo != hi:  # 'same' with an even total: pad the end explicitly, then pad symmetrically
            xp = x
            for d, (a, b) in enumerate(zip(lo, hi)):
                if b > a:
                    shape = list(xp.shape)
                    shape[2 + d] = b - a
                    xp = api.cat([xp, api.zeros(shape, dtype=xp.dtype)], 2 + d)
            gi, gw, gb = _conv_grads(g, xp, weight, stride_, lo, dilation_, False, None, groups, needs_input_grad)
            if gi is not None:
                gi = _narrow_to(gi, x.shape)
        else:
            gi, gw, gb = _conv_grads(g, x, weight, stride_, lo, dilation_, False, None, groups, needs_input_grad)
        if gi is not None and not batched:
            gi = gi.squeeze(0)
        return gi, gw, gb

    return grad_rule


# ---------------------------------------------------------------------------------------------
# aten::convolution: the one op the derivatives call
# ---------------------------------------------------------------------------------------------
@op("convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
    "bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor", kind=NN, method=False,
    flops=_conv_flops)
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """A batched 1-d, 2-d or 3-d convolution or transposed convolution (what the conv functions call)."""
    nd, stride, padding, dilation, output_padding = _conv_args(input, stride, padding, dilation, output_padding)
    conv_output_shape(input.shape, weight.shape, None if bias is None else bias.shape, stride, padding, padding,
                      dilation, groups, transposed, output_padding, input.dtype, weight.dtype,
                      None if bias is None else bias.dtype)
    if transposed:
        return conv_transpose_forward(input, weight, bias, stride, padding, output_padding, dilation, groups)
    return conv_forward(input, weight, bias, stride, padding, padding, dilation, groups)


def _conv_args(input, stride, padding, dilation, output_padding):
    nd = len(input.shape) - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a batched 1-d, 2-d or 3-d input (3 to 5 dimensions), got input of "
                           f"size: {list(input.shape)}")
    return (nd, expand_param(stride, nd, "stride"), expand_param(padding, nd, "padding"),
            expand_param(dilation, nd, "dilation"), expand_param(output_padding, nd, "output_padding"))


@convolution.meta_rule
def _(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    nd, stride, padding, dilation, output_padding = _conv_args(input, stride, padding, dilation, output_padding)
    out = conv_output_shape(tuple(input.shape), tuple(weight.shape), None if bias is None else tuple(bias.shape),
                            stride, padding, padding, dilation, groups, transposed, output_padding,
                            input.dtype, weight.dtype, None if bias is None else bias.dtype)
    return TensorMeta(out, input.dtype, input.device)


@convolution.grad
def _(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups, needs_input_grad):
    return _conv_grads(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                       needs_input_grad)


@convolution.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4)), u(-1, 1, (3, 2, 2, 2)), u(-1, 1, 3), [1, 1], [0, 0], [1, 1], False, [0, 0], 1), {}
    yield (u(-1, 1, (1, 4, 5, 5)), u(-1, 1, (2, 2, 3, 2)), None, [2, 1], [1, 0], [1, 2], False, [0, 0], 2), {}
    yield (u(-1, 1, (1, 2, 3, 3)), u(-1, 1, (2, 2, 2, 2)), u(-1, 1, 2), [2, 2], [1, 1], [1, 1], True, [1, 0], 1), {}
    yield (u(-1, 1, (2, 2, 5)), u(-1, 1, (3, 2, 3)), None, [2], [1], [1], False, [0], 1), {}
    yield (u(-1, 1, (1, 4, 3)), u(-1, 1, (4, 1, 2)), None, [2], [0], [2], True, [1], 2), {}


# ---------------------------------------------------------------------------------------------
# Public convolutions (torch.conv1d / conv2d / conv3d, also in torch.nn.functional)
# ---------------------------------------------------------------------------------------------
# Their grad_fn is ConvolutionBackward0, as PyTorch's: it runs one derivative formula, convolution's, for all.
_NF = dict(kind=NN, method=False, grad_fn=convolution)

conv1d = op("conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, "
            "SymInt[1] dilation=1, SymInt groups=1) -> Tensor", **_NF, autocast="lower",
            doc="1-d convolution over a (N, C, L) or (C, L) input.")(_conv_kernel("conv1d", 1))
conv1d_padding = op("conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, "
                    "str padding=\"valid\", SymInt[1] dilation=1, SymInt groups=1) -> Tensor", **_NF, autocast="lower",
                    doc="1-d convolution with padding='same' or 'valid'.")(_conv_kernel("conv1d", 1))
conv2d = op("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, "
            "SymInt[2] dilation=1, SymInt groups=1) -> Tensor", **_NF, autocast="lower",
            doc="2-d convolution over a (N, C, H, W) or (C, H, W) input.")(_conv_kernel("conv2d", 2))
conv2d_padding = op("conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
                    "str padding=\"valid\", SymInt[2] dilation=1, SymInt groups=1) -> Tensor", **_NF, autocast="lower",
                    doc="2-d convolution with padding='same' or 'valid'.")(_conv_kernel("conv2d", 2))
conv3d = op("conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, "
            "SymInt[3] dilation=1, SymInt groups=1) -> Tensor", **_NF, autocast="lower",
            doc="3-d convolution over a (N, C, D, H, W) or (C, D, H, W) input.")(_conv_kernel("conv3d", 3))
conv3d_padding = op("conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
                    "str padding=\"valid\", SymInt[3] dilation=1, SymInt groups=1) -> Tensor", **_NF, autocast="lower",
                    doc="3-d convolution with padding='same' or 'valid'.")(_conv_kernel("conv3d", 3))

for _o, _nd, _name in ((conv1d, 1, "conv1d"), (conv1d_padding, 1, "conv1d"), (conv2d, 2, "conv2d"),
                       (conv2d_padding, 2, "conv2d"), (conv3d, 3, "conv3d"), (conv3d_padding, 3, "conv3d")):
    _o.flops = _conv_flops
    _o.meta_rule(_conv_meta(_name, _nd))
    _o.grad(_public_conv_grad(_nd, _name))


@conv1d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 6)), u(-1, 1, (3, 2, 3)), u(-1, 1, 3)), {}
    yield (u(-1, 1, (1, 4, 7)), u(-1, 1, (2, 2, 2))), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}
    yield (u(-1, 1, (2, 5)), u(-1, 1, (2, 2, 3)), None, 1, 1), {}


@conv1d_padding.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (1, 2, 5)), u(-1, 1, (2, 2, 4)), u(-1, 1, 2)), {"padding": "same"}
    yield (u(-1, 1, (1, 2, 5)), u(-1, 1, (2, 2, 2))), {"padding": "valid"}


@conv2d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4, 4)), u(-1, 1, (3, 2, 2, 2)), u(-1, 1, 3)), {}
    yield (u(-1, 1, (1, 2, 5, 4)), u(-1, 1, (2, 2, 3, 2))), {"stride": (2, 1), "padding": (1, 0)}
    yield (u(-1, 1, (1, 4, 5, 5)), u(-1, 1, (2, 2, 2, 2)), None, 1, 1, 2, 2), {}
    yield (u(-1, 1, (2, 4, 4)), u(-1, 1, (2, 2, 3, 3)), u(-1, 1, 2)), {"padding": 1}
    yield (u(-1, 1, (1, 2, 6, 6)).transpose(0, 1, 3, 2), u(-1, 1, (2, 2, 2, 2))), {"stride": 2}


@conv3d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 3, 4, 4)), u(-1, 1, (3, 2, 2, 2, 2)), u(-1, 1, 3)), {}
    yield (u(-1, 1, (1, 2, 4, 5, 4)), u(-1, 1, (2, 2, 3, 3, 2))), {"stride": (1, 2, 1), "padding": (1, 1, 0)}
    yield (u(-1, 1, (1, 4, 5, 5, 5)), u(-1, 1, (2, 2, 2, 2, 2)), None, 1, 1, 2, 2), {}
    yield (u(-1, 1, (2, 3, 4, 4)), u(-1, 1, (2, 2, 3, 3, 3)), u(-1, 1, 2)), {"padding": 1}


@conv3d_padding.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (1, 2, 3, 4, 5)), u(-1, 1, (2, 2, 2, 2, 3)), u(-1, 1, 2)), {"padding": "same"}
    yield (u(-1, 1, (1, 2, 4, 4, 3)), u(-1, 1, (2, 2, 3, 3, 2))), {"padding": "valid"}


@conv2d_padding.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (1, 2, 4, 5)), u(-1, 1, (2, 2, 2, 3)), u(-1, 1, 2)), {"padding": "same"}
    yield (u(-1, 1, (2, 4, 4)), u(-1, 1, (2, 2, 3, 3))), {"padding": "same", "dilation": 2}
    yield (u(-1, 1, (1, 2, 4, 4)), u(-1, 1, (2, 2, 3, 3))), {"padding": "valid"}


# ---------------------------------------------------------------------------------------------
# Transposed convolutions
# ---------------------------------------------------------------------------------------------
def conv_transpose_setup(name, nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    """Check a transposed conv call; return (batched, stride, padding, output_padding, dilation,
    batched output shape)."""
    batched = check_dims(name, input.shape, nd)
    x_shape = tuple(input.shape) if batched else (1,) + tuple(input.shape)
    stride = expand_param(stride, nd, "stride")
    padding = expand_param(padding, nd, "padding")
    output_padding = expand_param(output_padding, nd, "output_padding")
    dilation = expand_param(dilation, nd, "dilation")
    out = conv_output_shape(x_shape, tuple(weight.shape), None if bias is None else tuple(bias.shape), stride,
                            padding, padding, dilation, groups, True, output_padding, input.dtype, weight.dtype,
                            None if bias is None else bias.dtype)
    return batched, stride, padding, output_padding, dilation, out


def _convt_kernel(name, nd):
    def kernel(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,), groups=1, dilation=(1,)):
        batched, stride, padding, output_padding, dilation, _ = conv_transpose_setup(
            name, nd, input, weight, bias, stride, padding, output_padding, groups, dilation)
        x = input if batched else input[None]
        out = conv_transpose_forward(x, weight, bias, stride, padding, output_padding, dilation, groups)
        return out if batched else out[0]

    return kernel


def _convt_meta(name, nd):
    def meta(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,), groups=1, dilation=(1,)):
        batched, *_, out = conv_transpose_setup(name, nd, input, weight, bias, stride, padding,
                                                output_padding, groups, dilation)
        return TensorMeta(out if batched else out[1:], input.dtype, input.device)

    return meta


def _convt_grad(nd):
    def grad_rule(grad, input, weight, stride, padding, output_padding, groups, dilation, needs_input_grad):
        batched = input.ndim == nd + 2
        x = input if batched else input.unsqueeze(0)
        g = grad if batched else grad.unsqueeze(0)
        gi, gw, gb = _conv_grads(g, x, weight, stride, padding, dilation, True, output_padding, groups,
                                 needs_input_grad)
        if gi is not None and not batched:
            gi = gi.squeeze(0)
        return gi, gw, gb

    return grad_rule


conv_transpose1d = op(
    "conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, "
    "SymInt[1] output_padding=0, SymInt groups=1, SymInt[1] dilation=1) -> Tensor", **_NF, autocast="lower",
    doc="1-d transposed convolution (the gradient of conv1d with respect to its input).",
)(_convt_kernel("conv_transpose1d", 1))
conv_transpose2d = op(
    "conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
    "SymInt[2] padding=0, SymInt[2] output_padding=0, SymInt groups=1, SymInt[2] dilation=1) -> Tensor", **_NF, autocast="lower",
    doc="2-d transposed convolution (the gradient of conv2d with respect to its input).",
)(_convt_kernel("conv_transpose2d", 2))
conv_transpose3d = op(
    "conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
    "SymInt[3] padding=0, SymInt[3] output_padding=0, SymInt groups=1, SymInt[3] dilation=1) -> Tensor", **_NF, autocast="lower",
    doc="3-d transposed convolution (the gradient of conv3d with respect to its input).",
)(_convt_kernel("conv_transpose3d", 3))

for _o, _nd, _name in ((conv_transpose1d, 1, "conv_transpose1d"), (conv_transpose2d, 2, "conv_transpose2d"),
                       (conv_transpose3d, 3, "conv_transpose3d")):
    _o.meta_rule(_convt_meta(_name, _nd))
    _o.grad(_convt_grad(_nd))


@conv_transpose1d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (2, 2, 4)), u(-1, 1, (2, 3, 3)), u(-1, 1, 3)), {}
    yield (u(-1, 1, (1, 4, 3)), u(-1, 1, (4, 1, 2))), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}


@conv_transpose2d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (1, 2, 3, 3)), u(-1, 1, (2, 3, 2, 2)), u(-1, 1, 3)), {}
    yield (u(-1, 1, (1, 2, 3, 2)), u(-1, 1, (2, 2, 3, 2))), {"stride": 2, "padding": 1, "output_padding": 1}
    yield (u(-1, 1, (4, 2, 2)), u(-1, 1, (4, 1, 2, 2))), {"groups": 2, "dilation": 2, "stride": (1, 2)}
    yield (u(-1, 1, (1, 2, 2, 2)), u(-1, 1, (2, 2, 2, 2))), {"stride": 1, "dilation": 3, "output_padding": 2}



@conv_transpose3d.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (1, 2, 2, 3, 3)), u(-1, 1, (2, 3, 2, 2, 2)), u(-1, 1, 3)), {}
    yield (u(-1, 1, (1, 2, 2, 3, 2)), u(-1, 1, (2, 2, 3, 2, 2))), {"stride": 2, "padding": 1, "output_padding": 1}
    yield (u(-1, 1, (4, 2, 2, 2)), u(-1, 1, (4, 1, 2, 2, 2))), {"groups": 2, "dilation": 2, "stride": (1, 2, 1)}


# ---------------------------------------------------------------------------------------------
# conv_tbc: a 1-d convolution over (time, batch, channel) inputs
# ---------------------------------------------------------------------------------------------
def _tbc_check(x_shape, w_shape, b_shape, pad) -> tuple:
    """Check a conv_tbc call as PyTorch does; return the output shape."""
    if len(x_shape) != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if len(w_shape) != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if len(b_shape) != 1:
        raise RuntimeError("Bias must be 1-D")
    if x_shape[2] != w_shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if w_shape[2] != b_shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    t = x_shape[0] + 2 * pad - w_shape[0] + 1
    out = (t, x_shape[1], w_shape[2])
    if t < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {t}: {list(out)}")
    return out


@op("conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor", kind=NN, autocast="lower", method=False)
def conv_tbc(self, weight, bias, pad=0):
    """1-d convolution of a (time, batch, in_channels) input by a (width, in_channels, out_channels) weight."""
    out = _tbc_check(self.shape, weight.shape, bias.shape, pad)
    if out[0] == 0:
        return np.zeros(out, np.result_type(self.dtype, weight.dtype))
    y = conv_forward(self.transpose(1, 2, 0), weight.transpose(2, 1, 0), bias, (1,), (pad,), (pad,), (1,), 1)
    return np.ascontiguousarray(y.transpose(2, 0, 1))


@conv_tbc.meta_rule
def _(self, weight, bias, pad=0):
    return TensorMeta(_tbc_check(tuple(self.shape), tuple(weight.shape), tuple(bias.shape), pad), self.dtype,
                      self.device)


@conv_tbc.grad
def _(grad, self, weight, pad, needs_input_grad):
    gi, gw, gb = _conv_grads(grad.permute(1, 2, 0), self.permute(1, 2, 0), weight.permute(2, 1, 0), (1,), (pad,),
                             (1,), False, None, 1, needs_input_grad)
    return (None if gi is None else gi.permute(2, 0, 1), None if gw is None else gw.permute(2, 1, 0), gb)


@conv_tbc.sample_inputs
def _(rng):
    u = rng.uniform
    yield (u(-1, 1, (5, 2, 3)), u(-1, 1, (3, 3, 4)), u(-1, 1, 4)), {}
    yield (u(-1, 1, (4, 1, 2)), u(-1, 1, (2, 2, 3)), u(-1, 1, 3), 1), {}


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_conv(g, input, weight, bias, stride, padding, dilation, groups, transposed=False, output_padding=0):
    kernel = g.shape(weight)
    if kernel is None:
        raise g.unsupported("a convolution whose weight's shape is not known")
    n = len(kernel) - 2

    def spatial(v):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return v * n if len(v) == 1 else v

    dilation = spatial(dilation)
    if padding == "valid":
        pads = [0] * (2 * n)
    elif padding == "same":  # PyTorch puts the odd padding at the end
        total = [d * (k - 1) for d, k in zip(dilation, kernel[2:])]
        pads = [t // 2 for t in total] + [t - t // 2 for t in total]
    else:
        pads = spatial(padding) * 2
    unbatched = g.rank(input) == n + 1
    if unbatched:
        input = g.op("Unsqueeze", input, g.constant([0]))
    attrs = dict(strides=spatial(stride), pads=pads, dilations=dilation, group=groups)
    if transposed:
        out = g.op("ConvTranspose", input, weight, bias, output_padding=spatial(output_padding), **attrs)
    else:
        out = g.op("Conv", input, weight, bias, **attrs)
    return g.op("Squeeze", out, g.constant([0])) if unbatched else out


for _conv in (conv1d, conv2d, conv1d_padding, conv2d_padding):
    _conv.symbolic(_onnx_conv)


@convolution.symbolic
def _(g, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    return _onnx_conv(g, input, weight, bias, stride, padding, dilation, groups, transposed, output_padding)
