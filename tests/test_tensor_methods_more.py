"""Tensor methods that are not single ops, against PyTorch: predicates, Python protocols, storages,
``set_``/``resize_``, pinning and streams, ``dim_order``, per-element Python callables, ``fill_diagonal_``,
and the in-place reducing writes (``put_``, ``index_reduce_``, ``scatter_reduce_``) under autograd."""

from __future__ import annotations

import pickle
import warnings
from multiprocessing import shared_memory

import numpy as np
import pytest
import torch

import toolkit

from .conftest import assert_close


def _pair(a: np.ndarray):
    return toolkit.tensor(a), torch.from_numpy(a.copy())


# ---------------------------------------------------------------------------------------------- predicates
@pytest.mark.parametrize("data", [np.zeros(1), np.array([2]), np.array(True), np.ones((1, 1))])
def test_is_nonzero_matches_torch(data):
    t, r = _pair(data)
    assert t.is_nonzero() == r.is_nonzero() == toolkit.is_nonzero(t)


@pytest.mark.parametrize("data", [np.zeros(0), np.ones(3)])
def test_is_nonzero_refuses_other_sizes(data):
    t, r = _pair(data)
    with pytest.raises(RuntimeError) as theirs:
        r.is_nonzero()
    with pytest.raises(RuntimeError, match=str(theirs.value)):
        t.is_nonzero()


def test_flag_predicates_match_torch():
    for data in (np.ones((2, 3), np.float32), np.arange(3), np.ones(2, np.uint8), np.array(True)):
        t, r = _pair(data)
        for name in ("is_signed", "is_complex", "is_neg", "is_conj", "is_distributed", "is_inference",
                     "get_device", "is_pinned", "is_shared"):
            assert getattr(t, name)() == getattr(r, name)(), name
        for name in ("is_signed", "is_complex", "is_neg", "is_conj", "is_distributed", "is_inference", "get_device"):
            assert getattr(toolkit, name)(t) == getattr(torch, name)(r), name


def test_backend_flags_and_sizes_match_torch():
    t, r = _pair(np.zeros((2, 3), np.float32))
    for name in ("is_ipu", "is_maia", "is_meta", "is_mps", "is_mtia", "is_nested", "is_quantized", "is_vulkan",
                 "is_xla", "is_xpu", "itemsize", "nbytes"):
        assert getattr(t, name) == getattr(r, name), name
    assert t[:, :2].nbytes == r[:, :2].nbytes


def test_is_same_size():
    a, b = toolkit.zeros(2, 3), toolkit.zeros(3, 2)
    assert a.is_same_size(toolkit.ones(2, 3)) and not a.is_same_size(b)
    assert toolkit.is_same_size(a, a)
    with pytest.raises(TypeError, match="is_same_size"):
        a.is_same_size(3)


# ---------------------------------------------------------------------------------------------- protocols
def test_contains_and_reversed():
    t, r = _pair(np.arange(6.0).reshape(2, 3))
    for element in (2, 2.0, 7, toolkit.tensor([3.0, 4.0, 5.0])):
        expected = (torch.tensor(element.numpy()) if isinstance(element, toolkit.Tensor) else element) in r
        assert (element in t) == expected
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        "a" in t  # noqa: B015
    assert_close(reversed(t), reversed(r))
    s = toolkit.tensor(3.0)
    assert reversed(s) is s


def test_long_nonzero_and_array_wrap():
    t, r = _pair(np.array(3.5))
    assert t.__long__() == r.__long__() == 3
    assert t.__nonzero__() is r.__nonzero__() is True
    x, y = _pair(np.array([0.5, -1.0]))
    assert_close(np.sin(x), np.sin(y))
    assert_close(x.__array_wrap__(np.array([True, False])), y.__array_wrap__(np.array([True, False])))


def test_setstate_restores_legacy_states():
    t = toolkit.zeros(2)
    t.__setstate__((True, None, None))
    assert t.requires_grad
    u = toolkit.zeros(1)
    u.__setstate__((toolkit.ones(3), None, None, False, None))
    assert u.tolist() == [1.0, 1.0, 1.0] and not u.requires_grad
    src = toolkit.arange(6.0)
    v = toolkit.zeros(1)
    v.__setstate__((src.untyped_storage(), 1, (2, 2), (2, 1)))
    assert v.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError, match="leaf"):
        (toolkit.ones(2, requires_grad=True) * 2).__setstate__((False, None, None))
    assert pickle.loads(pickle.dumps(src)).tolist() == src.tolist()


# ---------------------------------------------------------------------------------------------- storages
def test_typed_storage_reads_and_writes_the_tensor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, r = _pair(np.arange(4.0, dtype=np.float32))
        s, rs = t.storage(), r.storage()
        assert (len(s), s.size(), s.element_size(), s.nbytes()) == (len(rs), rs.size(), rs.element_size(), rs.nbytes())
        assert s.tolist() == rs.tolist() and s[1] == rs[1] and s[-1] == rs[-1] and list(s) == list(rs)
        assert s.dtype is toolkit.float32 and s.data_ptr() == t.data_ptr() and not s.is_shared()
        assert s.type() == "toolkit.FloatStorage" and t.storage_type().__name__ == r.storage_type().__name__
        s[0] = 7.0
        assert t.tolist()[0] == 7.0
        assert t[1:].storage().size() == 4  # the whole storage, as in PyTorch
        with pytest.raises(IndexError, match="out of range for storage of size 4"):
            s[7]
        with pytest.raises(RuntimeError, match="slices are only supported"):
            s[1:3]
        assert s.fill_(2.0) is s and t.tolist() == [2.0] * 4
        assert "TypedStorage(dtype=toolkit.float32, device=cpu) of size 4" in repr(s)


def test_untyped_storage_is_bytes():
    t, r = _pair(np.arange(4.0, dtype=np.float32))
    u, ru = t.untyped_storage(), r.untyped_storage()
    assert (u.size(), len(u), u.element_size(), u.tolist()) == (ru.size(), len(ru), ru.element_size(), ru.tolist())
    assert u[3] == ru[3]


def test_is_shared_sees_shared_memory():
    block = shared_memory.SharedMemory(create=True, size=32)
    try:
        t = toolkit.from_numpy(np.ndarray((4,), np.float64, buffer=block.buf))
        assert t.is_shared() and t[1:].is_shared() and t.untyped_storage().is_shared()
        assert not t.clone().is_shared()
        del t
    finally:
        block.close()
        block.unlink()


def test_storage_warns_once_like_torch():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        toolkit.zeros(1).storage()  # the warning, if still due, goes here
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        toolkit.zeros(1).storage()


def test_const_data_ptr_and_is_set_to():
    t = toolkit.arange(6.0)
    assert t.const_data_ptr() == t.data_ptr()
    assert t.is_set_to(t) and t.is_set_to(t[:]) and t.is_set_to(t.detach())
    assert not t.is_set_to(t[1:]) and not t.is_set_to(t.clone()) and not t.is_set_to(t.view(2, 3))


# ---------------------------------------------------------------------------------------------- set_
def test_set_to_tensor_storage_and_view():
    src, rsrc = _pair(np.arange(6.0, dtype=np.float32))
    t, r = toolkit.zeros(2), torch.zeros(2)
    assert t.set_(src) is t and r.set_(rsrc) is r
    assert_close(t, r)
    assert t.is_set_to(src)
    t.set_(src.untyped_storage(), 1, (2, 2), (2, 1))
    r.set_(rsrc.untyped_storage(), 1, (2, 2), (2, 1))
    assert_close(t, r)
    assert t.storage_offset() == r.storage_offset() == 1 and t.stride() == r.stride()
    t[0, 0] = 9.0
    assert src.tolist()[1] == 9.0  # a view of the same memory
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t.set_(src.storage())
    assert t.tolist() == src.tolist()
    t.set_()
    assert tuple(t.shape) == (0,) and t.dtype is toolkit.float32


def test_set_refuses_what_torch_refuses():
    with pytest.raises(RuntimeError, match="Could not set tensor of type"):
        toolkit.zeros(2).set_(toolkit.arange(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Expected a Storage of type"):
            toolkit.zeros(2).set_(toolkit.arange(3).storage())
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        toolkit.zeros(2, requires_grad=True).set_(toolkit.zeros(3))
    with pytest.raises(RuntimeError, match="set_"):
        toolkit.zeros(2).set_(toolkit.zeros(3).untyped_storage(), 2, (4,))


# ---------------------------------------------------------------------------------------------- resize
def test_resize_keeps_the_flattened_prefix():
    for shape in ((2,), (2, 2), (3, 2), (6,)):
        base, rbase = toolkit.arange(6.0), torch.arange(6.0)  # torch cannot resize from_numpy's storage
        t, r = base[1:], rbase[1:]
        t.resize_(*shape)
        r.resize_(*shape)
        kept = min(t.numel(), 5)  # beyond the old storage PyTorch's elements are uninitialized
        assert_close(t.reshape(-1)[:kept], r.reshape(-1)[:kept])
        assert tuple(t.shape) == tuple(r.shape)
        assert t.stride() == r.stride() and t.storage_offset() == r.storage_offset()
        if 1 + t.numel() <= 6:  # fits the storage: still the same memory (a grown storage is a new buffer)
            t.view(-1)[0] = -1.0
            assert base.tolist()[1] == -1.0


def test_resize_grows_with_new_elements():
    t = toolkit.arange(3.0)
    t.resize_((2, 3))
    assert tuple(t.shape) == (2, 3) and t.tolist()[0] == [0.0, 1.0, 2.0]
    assert t.is_contiguous()


def test_resize_same_shape_keeps_strides_and_resize_as():
    t, r = _pair(np.arange(6.0).reshape(2, 3))
    t, r = t.t(), r.t()
    t.resize_(3, 2)
    r.resize_(3, 2)
    assert t.stride() == r.stride()
    t.resize_as_(toolkit.zeros(2, 3))
    r.resize_as_(torch.zeros(2, 3))
    assert_close(t, r)
    assert t.stride() == r.stride()
    u = toolkit.zeros(4)
    assert toolkit.resize_as_(u, toolkit.zeros(2, 2)) is u and tuple(u.shape) == (2, 2)


def test_resize_errors_match_torch():
    for fn in (lambda x: x.resize_(2), lambda x: x.resize_as_(x.new_zeros(2))):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            fn(toolkit.zeros(3, requires_grad=True))
        with toolkit.no_grad(), pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            fn(toolkit.zeros(3, requires_grad=True))
    with pytest.raises(RuntimeError, match="negative dimension"):
        toolkit.zeros(2).resize_(-1)


def test_out_of_place_resize_is_a_differentiable_reshape():
    x = toolkit.arange(6.0, requires_grad=True)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        y = x.resize(2, 3)
    (y * toolkit.arange(6.0).view(2, 3)).sum().backward()
    assert x.grad.tolist() == list(np.arange(6.0))
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert tuple(x.resize_as(toolkit.zeros(3, 2)).shape) == (3, 2)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="preserving the number of elements"):
        x.resize(2, 2)


# ---------------------------------------------------------------------------------------------- devices, memory
def test_pin_memory_needs_an_accelerator():
    t = toolkit.zeros(2)
    assert not t.is_pinned()
    if toolkit.cuda.is_available():
        p = t.pin_memory()
        assert p.is_pinned() and p.tolist() == t.tolist() and p.pin_memory() is p
    else:
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            t.pin_memory()


def test_record_stream_is_refused_on_cpu():
    with pytest.raises(NotImplementedError, match="record_stream"):
        toolkit.zeros(2).record_stream(object())


def test_absent_devices_and_bfloat16_give_clear_errors():
    t = toolkit.zeros(2)
    with pytest.raises(AssertionError, match="not compiled with XPU"):
        t.xpu()
    with pytest.raises(AssertionError, match="not compiled with MTIA"):
        t.mtia()
    with pytest.raises(RuntimeError, match="ipu"):
        t.ipu()
    with pytest.raises(TypeError, match="no bfloat16 dtype"):
        t.bfloat16()


@pytest.mark.parametrize("make", [
    lambda lib: lib.empty((2, 3, 5, 7)),
    lambda lib: lib.empty((2, 3, 5, 7)).transpose(1, 2),
    lambda lib: lib.empty((2, 3, 5, 7)).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
    lambda lib: lib.empty((1, 2, 3, 4)),
    lambda lib: lib.empty((4, 3)).t(),
    lambda lib: lib.empty((3,)),
    lambda lib: lib.empty(()),
    lambda lib: lib.empty((3, 1)).expand(3, 4),
])
def test_dim_order_matches_torch(make):
    t, r = make(toolkit), make(torch)
    assert t.dim_order() == r.dim_order()
    try:
        expected = r.dim_order(ambiguity_check=True)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e)[:40]):
            t.dim_order(ambiguity_check=True)
    else:
        assert t.dim_order(ambiguity_check=True) == expected
    with pytest.raises(TypeError, match="ambiguity_check"):
        t.dim_order(ambiguity_check="ILLEGAL")


# ---------------------------------------------------------------------------------------------- callables
def test_apply_map_map2_match_torch():
    t, r = _pair(np.arange(6.0).reshape(2, 3))
    assert t.apply_(lambda v: 2 * v + 1) is t
    r.apply_(lambda v: 2 * v + 1)
    assert_close(t, r)
    o, ro = _pair(np.arange(3.0))
    t.map_(o, lambda a, b: a * 10 + b)
    r.map_(ro, lambda a, b: a * 10 + b)
    assert_close(t, r)
    i, ri = _pair(np.arange(3))
    i.map2_(i, toolkit.ones(3, dtype=toolkit.int64), lambda a, b, c: a + b + c)
    ri.map2_(ri, torch.ones(3, dtype=torch.long), lambda a, b, c: a + b + c)
    assert_close(i, ri)
    j, rj = _pair(np.arange(3))
    assert_close(j.apply_(lambda v: 2.7), rj.apply_(lambda v: 2.7))


def test_callables_refuse_what_torch_refuses():
    with pytest.raises(RuntimeError, match="Can't call apply_\\(\\) on Variable that requires grad"):
        toolkit.zeros(2, requires_grad=True).apply_(lambda v: v)
    with pytest.raises(TypeError, match="map_: expected torch.FloatTensor for 'other' \\(got torch.LongTensor\\)"):
        toolkit.zeros(3).map_(toolkit.arange(3), lambda a, b: a)
    with pytest.raises(TypeError, match="must be real number, not str"):
        toolkit.zeros(3).apply_(lambda v: "x")
    with pytest.raises(RuntimeError):
        toolkit.zeros(3).map_(toolkit.zeros(2, 3), lambda a, b: a)


def test_module_load():
    p, other = toolkit.zeros(2), toolkit.ones(2)
    loaded = p.module_load(other)
    assert loaded is not p and p.tolist() == [1.0, 1.0] and loaded.data_ptr() == p.data_ptr()
    assigned = p.module_load(toolkit.full((2,), 3.0), assign=True)
    assert assigned.tolist() == [3.0, 3.0] and assigned.data_ptr() != p.data_ptr()


# ---------------------------------------------------------------------------------------------- fill_diagonal_
@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), True), ((7, 3), False), ((2, 7), True),
                                        ((3, 3, 3), False), ((0, 0), False), ((4, 4), True)])
def test_fill_diagonal_matches_torch(shape, wrap):
    t, r = _pair(np.arange(float(np.prod(shape))).reshape(shape))
    assert t.fill_diagonal_(-5.0, wrap) is t
    r.fill_diagonal_(-5.0, wrap)
    assert_close(t, r)


def test_fill_diagonal_casts_and_refuses_bad_shapes():
    t, r = _pair(np.arange(9).reshape(3, 3))
    assert_close(t.t().fill_diagonal_(2.7), r.t().fill_diagonal_(2.7))
    for shape, message in (((3,), "dimensions must larger than 1"), ((3, 4, 5), "all dimensions of input must be")):
        with pytest.raises(RuntimeError, match=message):
            toolkit.zeros(*shape).fill_diagonal_(1.0)


def test_fill_diagonal_gradient():
    x, rx = toolkit.randn(3, 4, dtype=toolkit.float64, requires_grad=True), None
    rx = torch.from_numpy(x.detach().numpy().copy()).requires_grad_()
    y, ry = x * 1.0, rx * 1.0
    y.fill_diagonal_(2.0)
    ry.fill_diagonal_(2.0)
    (y * y).sum().backward()
    (ry * ry).sum().backward()
    assert_close(x.grad, rx.grad)
    assert toolkit.autograd.gradgradcheck(lambda a: (a * 1.0).fill_diagonal_(0.5, True) ** 2,
                                          (toolkit.randn(5, 2, dtype=toolkit.float64, requires_grad=True),))


# ---------------------------------------------------------------------------------------------- reducing writes
def test_inplace_reducing_writes_match_torch():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            t, r = _pair(a)
            t.index_reduce_(0, toolkit.tensor([3, 0, 3]), toolkit.tensor(b), reduce, include_self=include_self)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r.index_reduce_(0, torch.tensor([3, 0, 3]), torch.from_numpy(b), reduce, include_self=include_self)
            assert_close(t, r)
    idx = np.array([[0, 2, 2], [1, 0, 0]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        t, r = _pair(a)
        t.scatter_reduce_(1, toolkit.tensor(idx), toolkit.tensor(b[:2]), reduce, include_self=False)
        r.scatter_reduce_(1, torch.from_numpy(idx), torch.from_numpy(b[:2]), reduce, include_self=False)
        assert_close(t, r)
    t, r = _pair(a)
    t.put_(toolkit.tensor([0, 11, 0]), toolkit.tensor([1.0, 2.0, 3.0], dtype=toolkit.float64), accumulate=True)
    r.put_(torch.tensor([0, 11, 0]), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), accumulate=True)
    assert_close(t, r)


def test_reducing_write_errors_match_torch():
    s, rs = _pair(np.arange(6).reshape(2, 3))
    cases = [
        (lambda m, x: x.scatter_reduce(0, m.tensor([[0]]), m.tensor([[1]]), "bad"), RuntimeError),
        (lambda m, x: x.index_reduce(0, m.tensor([0]), m.tensor([[1, 2, 3]]), "sum"), RuntimeError),
        (lambda m, x: x.index_reduce(0, m.tensor([5]), m.tensor([[1, 2, 3]]), "amax"), IndexError),
        (lambda m, x: x.index_reduce(0, m.tensor([[0]]), m.tensor([[1, 2, 3]]), "amax"), IndexError),
        (lambda m, x: x.scatter_reduce(0, m.tensor([[5]]), m.tensor([[1]]), "amax"), RuntimeError),
        (lambda m, x: x.put(m.tensor([6]), m.tensor([1])), IndexError),
        (lambda m, x: x.put(m.tensor([1, 2]), m.tensor([1])), IndexError),
        (lambda m, x: x.put(m.tensor([1], dtype=m.int32), m.tensor([1])), RuntimeError),
        (lambda m, x: x.put(m.tensor([1]), m.tensor([1.0])), RuntimeError),
        (lambda m, x: m.tensor([True]).scatter_reduce(0, m.tensor([0]), m.tensor([True]), "mean"),
         NotImplementedError),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn, exc in cases:
            with pytest.raises(exc) as theirs:
                fn(torch, rs)
            with pytest.raises(exc, match=str(theirs.value).split("(Triggered")[0].strip()[:60].replace("(", "\\(")
                               .replace(")", "\\)").replace("[", "\\[").replace("]", "\\]")):
                fn(toolkit, s)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 2, 3)])
@pytest.mark.parametrize("name", ["H", "mH", "adjoint"])
def test_adjoints_match_torch(shape, name):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    x, y = toolkit.tensor(a), torch.tensor(a)

    def get(t):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return t.adjoint() if name == "adjoint" else getattr(t, name)

    try:
        expected = get(y)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e).split(".")[0]):
            get(x)
        return
    got = get(x)
    assert_close(got, expected)
    if x.ndim:
        assert got._base is x  # a view, as in PyTorch


def test_real_dtype_helpers_match_torch():
    a = np.array([[1.0, -2.0], [3.0, 4.0]])
    x, y = toolkit.tensor(a), torch.tensor(a)
    assert_close(toolkit.isreal(x), torch.isreal(y))
    assert toolkit.resolve_neg(x) is x and y.resolve_neg() is y
    assert_close(toolkit.adjoint(x), torch.adjoint(y))
    for name in ("sym_int", "sym_float", "sym_not"):
        for v in (3.7, -3.7, 2, 0):
            assert getattr(toolkit, name)(v) == getattr(torch, name)(v)
    for name in ("sym_max", "sym_min"):
        assert getattr(toolkit, name)(2, 3.5) == getattr(torch, name)(2, 3.5)
    assert toolkit.sym_ite(False, 1, 2) == torch.sym_ite(False, 1, 2)
    assert toolkit.sym_sum([1, 2, 3]) == torch.sym_sum([1, 2, 3])
