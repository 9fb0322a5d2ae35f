"""View ops against PyTorch: values, dtypes, storage sharing, strides, autograd and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import toolkit

from ..conftest import assert_close, to_torch

DTYPES = [np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_]


def _pair(a: np.ndarray):
    """The same data as a toolkit tensor and a torch tensor."""
    return toolkit.tensor(a), torch.from_numpy(np.array(a, copy=True))


def _data(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 10).astype(dtype)


# (method name, args, kwargs) applied to a (2, 3, 4) tensor; every one is a view in PyTorch.
VIEW_CALLS = [
    ("view", (6, 4), {}),
    ("view", (-1,), {}),
    ("reshape", ((4, -1),), {}),
    ("flatten", (), {}),
    ("flatten", (1,), {}),
    ("flatten", (), {"start_dim": 0, "end_dim": -2}),
    ("unflatten", (2, (2, 2)), {}),
    ("unsqueeze", (-1,), {}),
    ("squeeze", (), {}),
    ("permute", (2, 0, 1), {}),
    ("permute", ((1, 2, 0),), {}),
    ("movedim", (0, -1), {}),
    ("moveaxis", ((0, 1), (2, 0)), {}),
    ("transpose", (0, 2), {}),
    ("swapaxes", (1, -1), {}),
    ("swapdims", (0, 1), {}),
    ("expand", (3, 2, 3, 4), {}),
    ("narrow", (2, 1, 2), {}),
    ("narrow", (1, -2, 2), {}),
    ("diagonal", (), {}),
    ("diagonal", (1, 1, 2), {}),
    ("diagonal", (), {"offset": -1, "dim1": 2, "dim2": 0}),
    ("unfold", (2, 2, 1), {}),
    ("unfold", (1, 2, 2), {}),
    ("split", (2, 2), {}),
    ("split", ([1, 3], 2), {}),
    ("split_with_sizes", ([1, 1], 0), {}),
    ("chunk", (3, 1), {}),
    ("unbind", (1,), {}),
]


def _call(x, name, args, kwargs):
    return getattr(x, name)(*args, **kwargs)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,args,kwargs", VIEW_CALLS, ids=lambda v: str(v))
def test_view_values_match_torch(name, args, kwargs, dtype):
    tk, th = _pair(_data((2, 3, 4), dtype))
    assert_close(_call(tk, name, args, kwargs), _call(th, name, args, kwargs))


@pytest.mark.parametrize("name,args,kwargs", [c for c in VIEW_CALLS if c[0] != "view"], ids=lambda v: str(v))
def test_view_of_noncontiguous_input_matches_torch(name, args, kwargs):
    a = _data((4, 2, 3))
    tk = toolkit.tensor(a).permute(1, 2, 0)
    th = torch.from_numpy(a.copy()).permute(1, 2, 0)
    assert not tk.is_contiguous()
    assert_close(_call(tk, name, args, kwargs), _call(th, name, args, kwargs))


@pytest.mark.parametrize("name,args,kwargs", VIEW_CALLS, ids=lambda v: str(v))
def test_views_share_storage_and_strides_like_torch(name, args, kwargs):
    tk, th = _pair(_data((2, 3, 4), np.float64))
    out, ref = _call(tk, name, args, kwargs), _call(th, name, args, kwargs)
    outs = out if isinstance(out, (list, tuple)) else [out]
    refs = ref if isinstance(ref, (list, tuple)) else [ref]
    for o, r in zip(outs, refs):
        assert o._storage is tk._storage
        assert o._base is tk
        assert _strides(o) == _strides(r)
        assert o.storage_offset() == r.storage_offset()
        assert o.is_contiguous() == r.is_contiguous()
        assert o.data_ptr() - tk.data_ptr() == (r.data_ptr() - th.data_ptr())


def test_write_through_view_changes_base_and_shares_version():
    x = toolkit.arange(12.0).view(3, 4)
    v = x.t()
    before = x._version
    v.add_(1)
    assert x._version == v._version == before + 1
    assert_close(x, torch.arange(12.0).view(3, 4) + 1)
    n = x.narrow(1, 1, 2)
    n.mul_(0)
    assert x[:, 1:3].abs().sum().item() == 0
    assert x._version == n._version
    d = x.diagonal()
    d.copy_(toolkit.tensor([7.0, 8.0, 9.0]))
    assert [x[i, i].item() for i in range(3)] == [7.0, 8.0, 9.0]
    parts = x.split(2, 1)
    parts[1].mul_(0)
    assert x[:, 2:].abs().sum().item() == 0
    w = x.unfold(1, 2, 2)
    w.add_(100)
    assert (x.numpy() >= 99).all()


def test_base_change_shows_in_views():
    x = toolkit.zeros(2, 3)
    views = [x.view(6), x.reshape(3, 2), x.flatten(), x.unsqueeze(0), x.t(), x.expand(2, 2, 3), x.unbind(0)[1],
             x.movedim(0, 1), x.diagonal(), x.unfold(1, 2, 1), x.chunk(3, 1)[2]]
    x.add_(5)
    for v in views:
        assert (v.numpy() == 5).all()
        assert v._version == x._version


def test_contiguity_and_offsets():
    x = toolkit.zeros(4, 5)
    assert not x.t().is_contiguous()
    assert not x.unsqueeze(1).expand(4, 3, 5).is_contiguous()
    assert x.expand(1, 4, 5).is_contiguous()
    assert x.narrow(0, 2, 2).storage_offset() == 10
    assert x.narrow(1, 3, 2).storage_offset() == 3
    assert x.narrow(1, 3, 2).data_ptr() == x.data_ptr() + 3 * x.element_size()
    assert x.unsqueeze(1).expand(4, 3, 5).stride() == (5, 0, 1)
    assert x.diagonal(2).storage_offset() == 2
    assert x.diagonal(-1).storage_offset() == 5
    assert x.split(2)[1].storage_offset() == 10
    assert x.unbind(1)[4].storage_offset() == 4
    assert x.t().reshape(20).storage_offset() == 0  # a copy
    assert x.t().reshape(20)._storage is not x._storage
    assert x.reshape(20)._storage is x._storage


def test_reshape_copies_only_when_needed():
    x = toolkit.arange(6.0).view(2, 3)
    r = x.t().reshape(6)
    r.add_(1)
    assert_close(x, torch.arange(6.0).view(2, 3))
    f = x.t().flatten()
    assert f._storage is not x._storage
    assert x.flatten()._storage is x._storage


def test_view_dtype():
    tk, th = _pair(_data((3, 4), np.float32))
    for d, td in ((toolkit.int32, torch.int32), (toolkit.float64, torch.float64), (toolkit.int16, torch.int16),
                  (toolkit.uint8, torch.uint8)):
        assert_close(tk.view(d), th.view(td))
        assert tk.view(d)._storage is tk._storage
    assert not toolkit.ones(2, requires_grad=True).view(toolkit.float32).requires_grad
    with pytest.raises(RuntimeError, match=r"self.size\(-1\) must be divisible by 2 to view Float as Double"):
        toolkit.zeros(3, 3).view(toolkit.float64)
    with pytest.raises(RuntimeError, match="self.dim\\(\\) cannot be 0 to view Float as Double"):
        toolkit.tensor(1.0).view(toolkit.float64)
    with pytest.raises(RuntimeError, match=r"self.stride\(-1\) must be 1"):
        toolkit.zeros(4, 4).t().view(toolkit.float64)


def test_zero_dim_and_zero_size():
    s_tk, s_th = _pair(np.array(3.0, dtype=np.float32))
    for name, args in [("view", (1, 1)), ("reshape", (-1,)), ("flatten", ()), ("unsqueeze", (0,)), ("squeeze", (0,)),
                       ("permute", ((),)), ("transpose", (0, -1)), ("t", ()), ("expand", (2, 3)),
                       ("movedim", (0, 0)), ("unfold", (0, 1, 1))]:
        assert_close(_call(s_tk, name, args, {}), _call(s_th, name, args, {}))
    e_tk, e_th = _pair(np.zeros((2, 0, 3), np.float32))
    for name, args in [("view", (0, 6)), ("flatten", ()), ("permute", (2, 0, 1)), ("narrow", (2, 1, 2)),
                       ("split", (1, 0)), ("chunk", (2, 1)), ("unbind", (1,)), ("diagonal", (0, 0, 2)),
                       ("unfold", (2, 2, 1)), ("expand", (4, 2, 0, 3)), ("unflatten", (2, (3, 1)))]:
        assert_close(_call(e_tk, name, args, {}), _call(e_th, name, args, {}))


def test_function_and_method_exposure_matches_torch():
    names = ["view", "view_as", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "movedim",
             "moveaxis", "transpose", "swapaxes", "swapdims", "t", "expand", "expand_as", "narrow", "diagonal",
             "unfold", "split", "split_with_sizes", "chunk", "unbind"]
    for n in names:
        assert hasattr(toolkit, n) == hasattr(torch, n), n
        assert hasattr(toolkit.Tensor, n) == hasattr(torch.Tensor, n), n


def test_functional_forms_and_keywords():
    tk, th = _pair(_data((2, 3, 4)))
    assert_close(toolkit.flatten(tk, start_dim=1), torch.flatten(th, start_dim=1))
    assert_close(toolkit.permute(tk, (2, 1, 0)), torch.permute(th, (2, 1, 0)))
    assert_close(toolkit.narrow(tk, dim=2, start=1, length=3), torch.narrow(th, dim=2, start=1, length=3))
    assert_close(toolkit.narrow(tk, 2, toolkit.tensor(1), 3), torch.narrow(th, 2, torch.tensor(1), 3))
    assert_close(toolkit.split(tk, [1, 2], dim=1), torch.split(th, [1, 2], dim=1))
    assert_close(toolkit.unbind(tk, dim=2), torch.unbind(th, dim=2))
    assert_close(toolkit.chunk(tk, 2, dim=-1), torch.chunk(th, 2, dim=-1))
    assert_close(toolkit.diagonal(tk, offset=1, dim1=-1, dim2=-2), torch.diagonal(th, offset=1, dim1=-1, dim2=-2))
    assert_close(tk.view_as(toolkit.zeros(6, 4)), th.view_as(torch.zeros(6, 4)))
    assert_close(tk[:, :1].expand_as(tk), th[:, :1].expand_as(th))
    assert_close(tk.squeeze((0, 1)), th.squeeze((0, 1)))
    assert_close(toolkit.unsqueeze(tk, dim=1), torch.unsqueeze(th, dim=1))
    assert_close(tk.T, th.permute(2, 1, 0))
    assert_close(tk.mT, th.mT)


# ---------------------------------------------------------------------------------------------
# autograd through views (beyond the registry's gradcheck): against torch's gradients
# ---------------------------------------------------------------------------------------------
GRAD_CHAINS = [
    lambda x: x.t().reshape(-1) * toolkit.arange(12.0, dtype=x.dtype) if isinstance(x, toolkit.Tensor) else
    x.t().reshape(-1) * torch.arange(12.0, dtype=x.dtype),
    lambda x: x.unfold(1, 2, 1).sum(-1) * x.narrow(1, 0, 3),
    lambda x: x.diagonal(1).sum() * x,
    lambda x: x.split(1, 0)[2] * 3,
    lambda x: x.chunk(2, 1)[0] - x.chunk(2, 1)[1],
    lambda x: x.unbind(1)[3] * x.unbind(0)[0][:3],
    lambda x: x.unsqueeze(0).expand(2, 3, 4).movedim(0, -1).flatten(1) ** 2,
    lambda x: x.unflatten(1, (2, 2)).permute(2, 0, 1).swapaxes(0, 1).squeeze(),
]


@pytest.mark.parametrize("k", range(len(GRAD_CHAINS)))
def test_gradients_through_views_match_torch(k):
    a = _data((3, 4), np.float64)
    tk = toolkit.tensor(a).requires_grad_()
    th = torch.from_numpy(a.copy()).requires_grad_()
    out, ref = GRAD_CHAINS[k](tk), GRAD_CHAINS[k](th)
    assert_close(out, ref)
    g = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    out.backward(toolkit.tensor(g))
    ref.backward(torch.from_numpy(g))
    assert_close(tk.grad, th.grad)


def test_split_grad_with_unused_outputs():
    x = toolkit.arange(6.0, dtype=toolkit.float64).requires_grad_()
    a, b, c = x.split(2)
    (b * 2).sum().backward()
    assert x.grad.tolist() == [0, 0, 2, 2, 0, 0]


def test_double_backward_through_unfold_and_diagonal():
    for fn in (lambda x: (x.unfold(0, 3, 2) ** 2).sum(), lambda x: (x.view(3, 3).diagonal(1) ** 3).sum()):
        a = np.linspace(-1, 1, 9)
        tk = toolkit.tensor(a).requires_grad_()
        th = torch.from_numpy(a.copy()).requires_grad_()
        (g_tk,) = toolkit.autograd.grad(fn(tk), tk, create_graph=True)
        (g_th,) = torch.autograd.grad(fn(th), th, create_graph=True)
        assert_close(g_tk, g_th)
        g_tk.sum().backward()
        g_th.sum().backward()
        assert_close(tk.grad, th.grad)


# ---------------------------------------------------------------------------------------------
# errors: PyTorch's types and wording, with the op named
# ---------------------------------------------------------------------------------------------
ERRORS = [
    (lambda x: x.view(3, 5), RuntimeError, r"view: shape '\[3, 5\]' is invalid for input of size 12"),
    (lambda x: x.t().view(12), RuntimeError, "view size is not compatible with input tensor's size and stride"),
    (lambda x: x.permute(0, 1, 2), RuntimeError, r"permute\(sparse_coo\): number of dimensions in the tensor input "
     r"does not match the length of the desired ordering of dimensions i.e. input.dim\(\) = 2 is not equal to "
     r"len\(dims\) = 3"),
    (lambda x: x.permute(0, 0), RuntimeError, "permute\\(\\): duplicate dims are not allowed"),
    (lambda x: x.permute(0, 2), IndexError, r"permute: Dimension out of range \(expected to be in range of \[-2, 1\], "
     r"but got 2\)"),
    (lambda x: x.flatten(1, 0), RuntimeError, "flatten\\(\\) has invalid args: start_dim cannot come after end_dim"),
    (lambda x: x.flatten(0, 2), IndexError, "flatten: Dimension out of range"),
    (lambda x: x.unflatten(1, (3, 2)), RuntimeError,
     r"unflatten: Provided sizes \[3, 2\] don't multiply up to the size of dim 1 \(4\) in the input tensor"),
    (lambda x: x.unflatten(1, ()), RuntimeError, "unflatten: sizes must be non-empty"),
    (lambda x: x.unflatten(1, (-1, -1)), RuntimeError, "unflatten: only one dimension can be inferred"),
    (lambda x: x.squeeze(2), IndexError, "squeeze: Dimension out of range"),
    (lambda x: x.squeeze((0, 0)), RuntimeError, "squeeze: dim 0 appears multiple times in the list of dims"),
    (lambda x: x.unsqueeze(3), IndexError, r"unsqueeze: Dimension out of range \(expected to be in range of \[-3, 2\]"),
    (lambda x: x.transpose(0, 2), IndexError, "transpose: Dimension out of range"),
    (lambda x: x.unsqueeze(0).t(), RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"),
    (lambda x: x.expand(2, 4), RuntimeError, r"expand: The expanded size of the tensor \(2\) must match the existing "
     r"size \(3\) at non-singleton dimension 0.  Target sizes: \[2, 4\].  Tensor sizes: \[3, 4\]"),
    (lambda x: x.expand(4), RuntimeError, r"expand: the number of sizes provided \(1\) must be greater or equal to the "
     r"number of dimensions in the tensor \(2\)"),
    (lambda x: x.expand(-1, 3, 4), RuntimeError, "isn't allowed in a leading, non-existing dimension 0"),
    (lambda x: x.view_as(x.new_zeros(5)), RuntimeError, r"view_as: shape '\[5\]' is invalid for input of size 12"),
    (lambda x: x.movedim((0, 1), (1,)), RuntimeError, r"movedim: Invalid source or destination dims: source \(\[0, 1\] "
     r"dims\) should contain the same number of dims as destination \(\[1\] dims\)"),
    (lambda x: x.movedim((0, 0), (1, 0)), RuntimeError, r"movedim: repeated dim in `source` \(\[0, 0\]\)"),
    (lambda x: x.narrow(1, 2, 3), RuntimeError, r"narrow\(\): start \(2\) \+ length \(3\) exceeds dimension size \(4\)"),
    (lambda x: x.narrow(1, 5, 0), IndexError, r"start out of range \(expected to be in range of \[-4, 4\], but got 5\)"),
    (lambda x: x.narrow(1, 1, -1), RuntimeError, "narrow\\(\\): length must be non-negative"),
    (lambda x: x.sum().narrow(0, 0, 1), RuntimeError, "narrow\\(\\) cannot be applied to a 0-dim tensor"),
    (lambda x: x.diagonal(0, 1, 1), RuntimeError, "diagonal: diagonal dimensions cannot be identical 1, 1"),
    (lambda x: x.diagonal(0, 1, 2), IndexError, "diagonal: Dimension out of range"),
    (lambda x: x.unfold(1, 5, 1), RuntimeError, "unfold: maximum size for tensor at dimension 1 is 4 but size is 5"),
    (lambda x: x.unfold(1, 2, 0), RuntimeError, "unfold: step is 0 but must be > 0"),
    (lambda x: x.unfold(1, -1, 1), RuntimeError, "unfold: size is -1 but must be >= 0"),
    (lambda x: x.split(0), RuntimeError, "split_size can only be 0 if dimension size is 0, but got dimension size of 3"),
    (lambda x: x.split(-1), RuntimeError, "split expects split_size be non-negative, but got split_size=-1"),
    (lambda x: x.split([1, 1]), RuntimeError, r"split_with_sizes expects split_sizes to sum exactly to 3 \(input "
     r"tensor's size at dimension 0\), but got split_sizes=\[1, 1\]"),
    (lambda x: x.split([4, -1]), RuntimeError, "split_with_sizes expects split_sizes have only non-negative entries"),
    (lambda x: x.sum().split(1), RuntimeError, "split expects at least a 1-dimensional tensor"),
    (lambda x: x.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda x: x.sum().chunk(1), RuntimeError, "chunk expects at least a 1-dimensional tensor"),
    (lambda x: x.sum().unbind(), IndexError, "unbind: Dimension specified as 0 but tensor has no dimensions"),
    (lambda x: x.unbind(2), IndexError, "unbind: Dimension out of range"),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_match_torch(k):
    fn, exc, pattern = ERRORS[k]
    with pytest.raises(exc, match=pattern):
        fn(toolkit.zeros(3, 4))
    with pytest.raises(exc):
        fn(torch.zeros(3, 4))


def test_meta_rules_raise_the_kernels_errors():
    from toolkit._core.meta import TensorMeta
    from toolkit.ops import registry

    m = TensorMeta((3, 4), toolkit.float32)
    with pytest.raises(RuntimeError, match="permute\\(\\): duplicate dims"):
        registry.get("permute").infer(m, (0, 0))
    with pytest.raises(RuntimeError, match="unfold: maximum size"):
        registry.get("unfold").infer(m, 1, 5, 1)
    assert [t.shape for t in registry.get("split", "Tensor").infer(m, 2, 1)] == [(3, 2), (3, 2)]
    assert registry.get("diagonal").infer(m, 1, 0, 1).shape == (3,)
    assert registry.get("unfold_backward").infer(TensorMeta((3, 3, 2), toolkit.float32), (3, 4), 1, 2, 1).shape == (3, 4)


# ---------------------------------------------------------------------------------------------
# property test: random shapes through permute / transpose / reshape / flatten agree with torch
# ---------------------------------------------------------------------------------------------
@st.composite
def _shape_and_ops(draw):
    """A shape and a few view steps, each with its own seeded ``random.Random`` for the step's arguments."""
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["permute", "transpose", "reshape", "flatten", "unsqueeze", "squeeze",
                                     "narrow"]))
        steps.append((kind, draw(st.randoms(use_true_random=False))))
    return shape, steps


def _apply(kind, rnd, tk, th):
    n = th.dim()
    if kind == "permute":
        perm = list(range(n))
        rnd.shuffle(perm)
        perm = [p - n if rnd.random() < 0.5 else p for p in perm]
        return (tk.permute(*perm), th.permute(*perm)) if perm else (tk.permute(()), th.permute(()))
    if kind == "transpose" and n:
        a, b = rnd.randrange(-n, n), rnd.randrange(-n, n)
        return tk.transpose(a, b), th.transpose(a, b)
    if kind == "reshape":
        numel = th.numel()
        divs = [d for d in range(1, numel + 1) if numel % d == 0] or [1]
        d = rnd.choice(divs)
        shape = (d, -1) if numel else (0, rnd.randint(1, 3))
        return tk.reshape(shape), th.reshape(shape)
    if kind == "flatten" and n:
        s = rnd.randrange(-n, n)
        e = rnd.randrange(s % n, n)
        return tk.flatten(s, e), th.flatten(s, e)
    if kind == "unsqueeze":
        d = rnd.randrange(-n - 1, n + 1)
        return tk.unsqueeze(d), th.unsqueeze(d)
    if kind == "squeeze":
        return tk.squeeze(), th.squeeze()
    if kind == "narrow" and n:
        d = rnd.randrange(n)
        size = th.shape[d]
        start = rnd.randint(0, size)
        length = rnd.randint(0, size - start)
        return tk.narrow(d, start, length), th.narrow(d, start, length)
    return tk, th


def _strides(t) -> tuple:
    """Strides of the dims that have more than one element (the others' strides carry no meaning)."""
    return tuple(s for n, s in zip(t.shape, t.stride()) if n > 1)


@settings(max_examples=150, deadline=None)
@given(_shape_and_ops())
def test_random_view_chains_agree_with_torch(case):
    shape, steps = case
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    tk, th = toolkit.tensor(a), torch.from_numpy(a.copy())
    base_tk = tk
    for kind, rnd in steps:
        tk, th = _apply(kind, rnd, tk, th)
        assert tuple(tk.shape) == tuple(th.shape)
        assert tk.is_contiguous() == th.is_contiguous()
        assert_close(tk, th)
        if tk._storage is base_tk._storage and th.numel():
            assert tk.storage_offset() == th.storage_offset()
            assert _strides(tk) == _strides(th)
    assert_close(to_torch(tk), th)


def test_split_keyword_names_match_torch():
    """``torch.split(tensor, split_size_or_sections, dim)`` but ``Tensor.split(split_size, dim)``: each refuses the other's."""
    tk, th = _pair(_data((4, 5)))
    for size in (2, [1, 3], (4,)):
        d = 0 if size != 2 else 1
        assert_close(toolkit.split(tk, split_size_or_sections=size, dim=d), torch.split(th, split_size_or_sections=size, dim=d))
        assert_close(toolkit.split(tensor=tk, split_size_or_sections=size), torch.split(tensor=th, split_size_or_sections=size))
        assert_close(tk.split(split_size=size, dim=d), th.split(split_size=size, dim=d))
        assert_close(toolkit.split(tk, size, d), torch.split(th, size, d))
    assert isinstance(toolkit.split(tk, 2), tuple) and isinstance(tk.split(2), tuple)
    for lib, x in ((torch, th), (toolkit, tk)):
        with pytest.raises(TypeError):
            lib.split(x, split_size=2)
        with pytest.raises(TypeError):
            x.split(split_size_or_sections=2)
        with pytest.raises(TypeError):
            lib.split(x, 2, axis=0)
        with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 4"):
            lib.split(x, [1, 2])
