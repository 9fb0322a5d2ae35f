"""Memory formats (``toolkit.channels_last``...): strides, contiguity checks and conversions, against PyTorch."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import toolkit

from .conftest import assert_close

FORMATS = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return toolkit.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("name", FORMATS)
def test_formats_are_named_objects(name):
    fmt = getattr(toolkit, name)
    assert isinstance(fmt, toolkit.memory_format)
    assert repr(fmt) == repr(getattr(torch, name)).replace("torch", "toolkit")
    assert pickle.loads(pickle.dumps(fmt)) is fmt


# Views whose layouts differ: plain, NHWC-permuted, sliced, expanded, transposed in H/W, channels of size 1.
VIEWS = {
    "plain": lambda x: x,
    "nhwc_permuted": lambda x: x.permute(0, 2, 3, 1),
    "sliced": lambda x: x[:, ::2],
    "expanded": lambda x: x[:, :, :1].expand(2, 3, 4, 5),
    "hw_transposed": lambda x: x.transpose(2, 3),
    "one_channel": lambda x: x[:, :1],
}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", ["contiguous_format", "channels_last"])
def test_contiguous_in_a_format(view, name):
    t, r = _pair((2, 3, 4, 5))
    t, r = VIEWS[view](t), VIEWS[view](r)
    out_t = t.contiguous(memory_format=getattr(toolkit, name))
    out_r = r.contiguous(memory_format=getattr(torch, name))
    assert out_t.stride() == out_r.stride()
    assert_close(out_t, out_r)
    for other in ("contiguous_format", "channels_last", "channels_last_3d"):
        assert t.is_contiguous(memory_format=getattr(toolkit, other)) == \
            r.is_contiguous(memory_format=getattr(torch, other))
        assert out_t.is_contiguous(memory_format=getattr(toolkit, other)) == \
            out_r.is_contiguous(memory_format=getattr(torch, other))


def test_channels_last_3d():
    t, r = _pair((2, 3, 2, 4, 5))
    out_t, out_r = t.contiguous(memory_format=toolkit.channels_last_3d), r.contiguous(memory_format=torch.channels_last_3d)
    assert out_t.stride() == out_r.stride() == (120, 1, 60, 15, 3)
    assert_close(out_t, out_r)
    assert out_t.is_contiguous(memory_format=toolkit.channels_last_3d)


def test_contiguous_returns_self_when_already_in_the_format():
    t, _ = _pair((2, 3, 4, 5))
    cl = t.contiguous(memory_format=toolkit.channels_last)
    assert cl.contiguous(memory_format=toolkit.channels_last) is cl
    assert t.contiguous(memory_format=toolkit.contiguous_format) is t


@pytest.mark.parametrize("shape,name", [((2, 3, 4), "channels_last"), ((2, 3, 4, 5), "channels_last_3d")])
def test_wrong_rank_is_an_error(shape, name):
    t, r = _pair(shape)
    with pytest.raises(RuntimeError) as expected:
        r.contiguous(memory_format=getattr(torch, name))
    with pytest.raises(RuntimeError, match=str(expected.value)):
        t.contiguous(memory_format=getattr(toolkit, name))
    assert t.is_contiguous(memory_format=getattr(toolkit, name)) is False


def test_contiguous_preserve_format_is_an_error():
    t, r = _pair((3, 4))
    assert t.contiguous(memory_format=toolkit.preserve_format) is t  # already contiguous: itself, as in PyTorch
    with pytest.raises(RuntimeError) as expected:
        r.t().contiguous(memory_format=torch.preserve_format)
    with pytest.raises(RuntimeError, match=str(expected.value)):
        t.t().contiguous(memory_format=toolkit.preserve_format)
    assert t.t().is_contiguous(memory_format=toolkit.preserve_format) == r.t().is_contiguous(
        memory_format=torch.preserve_format)


def test_contiguous_channels_last_is_differentiable():
    t, r = _pair((2, 3, 4, 5))
    t.requires_grad_(True)
    r.requires_grad_(True)
    w = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    (t.contiguous(memory_format=toolkit.channels_last) * toolkit.tensor(w)).sum().backward()
    (r.contiguous(memory_format=torch.channels_last) * torch.tensor(w)).sum().backward()
    assert_close(t.grad, r.grad)


@pytest.mark.parametrize("kwargs", [{}, {"dtype": "float64"}])
def test_tensor_to_memory_format(kwargs):
    t, r = _pair((2, 3, 4, 5))
    tk = {k: getattr(toolkit, v) for k, v in kwargs.items()}
    rk = {k: getattr(torch, v) for k, v in kwargs.items()}
    out_t = t.to(memory_format=toolkit.channels_last, **tk)
    out_r = r.to(memory_format=torch.channels_last, **rk)
    assert out_t.stride() == out_r.stride()
    assert_close(out_t, out_r)
    assert t.to(memory_format=toolkit.preserve_format) is t


@pytest.mark.parametrize("factory", ["empty_like", "zeros_like", "ones_like", "full_like"])
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", [None, "preserve_format", "contiguous_format", "channels_last"])
def test_like_factories_lay_out_as_asked(factory, view, name):
    t, r = _pair((2, 3, 4, 5))
    t, r = VIEWS[view](t), VIEWS[view](r)
    args = (2.5,) if factory == "full_like" else ()
    kw_t = {} if name is None else {"memory_format": getattr(toolkit, name)}
    kw_r = {} if name is None else {"memory_format": getattr(torch, name)}
    out_t = getattr(toolkit, factory)(t, *args, **kw_t)
    out_r = getattr(torch, factory)(r, *args, **kw_r)
    assert out_t.shape == out_r.shape
    assert out_t.stride() == out_r.stride()
    if factory != "empty_like":
        assert_close(out_t, out_r)


@pytest.mark.parametrize("view", [lambda x: x.t(), lambda x: x[:, ::2], lambda x: x[:1].expand(4, 6)])
def test_like_factories_preserve_2d_layouts(view):
    t, r = _pair((4, 6))
    assert toolkit.zeros_like(view(t)).stride() == torch.zeros_like(view(r)).stride()


def test_module_to_memory_format():
    t_conv = toolkit.nn.Conv2d(3, 4, 3)
    r_conv = torch.nn.Conv2d(3, 4, 3)
    assert t_conv.to(memory_format=toolkit.channels_last) is t_conv
    r_conv.to(memory_format=torch.channels_last)
    assert t_conv.weight.stride() == r_conv.weight.stride() == (27, 1, 9, 3)
    assert t_conv.bias.stride() == r_conv.bias.stride()
    assert t_conv.weight.is_leaf and t_conv.weight.requires_grad
    x = toolkit.ones(1, 3, 5, 5).contiguous(memory_format=toolkit.channels_last)
    assert t_conv(x).shape == (1, 4, 3, 3)


def test_module_to_memory_format_with_dtype():
    t_lin = toolkit.nn.Conv2d(2, 2, 1)
    t_lin.to(toolkit.float64, memory_format=toolkit.channels_last)
    assert t_lin.weight.dtype is toolkit.float64
    assert t_lin.weight.is_contiguous(memory_format=toolkit.channels_last)


@pytest.mark.parametrize("shape,name", [((2, 3, 4, 5), "channels_last"), ((2, 3, 2, 4, 5), "channels_last_3d")])
def test_clone_lays_out_as_asked(shape, name):
    a = np.random.default_rng(0).standard_normal(shape)
    x, y = toolkit.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    cx, cy = x.clone(memory_format=getattr(toolkit, name)), y.clone(memory_format=getattr(torch, name))
    assert cx.stride() == cy.stride()
    assert_close(cx, cy)
    cx.sum().backward()
    cy.sum().backward()
    assert_close(x.grad, y.grad)
