# ruff: noqa: B023  (each lambda runs at once, inside its own loop iteration)
"""torch's plain-Python names (not ops) against PyTorch: finfo/iinfo, layouts, typename, buffers, switches, cond,
the symbolic-size hints, and the Tensor's ``new``/``as_subclass``/removed linalg methods."""

from __future__ import annotations

import array
import os
import warnings

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"]


def _same_error(fn_toolkit, fn_torch):
    """Both raise the same exception type with the same message, ``torch`` read as ``toolkit``."""
    with pytest.raises(Exception) as expected:
        fn_torch()
    with pytest.raises(expected.type) as got:
        fn_toolkit()
    assert str(got.value) == str(expected.value).replace("torch", "toolkit").replace("PyTorch", "toolkit")


# ----------------------------------------------------------------------------------------------- finfo / iinfo
@pytest.mark.parametrize("name", DTYPES)
def test_finfo_iinfo_match_torch(name):
    td, kd = getattr(torch, name), getattr(toolkit, name)
    if td.is_floating_point:
        t, k = torch.finfo(td), toolkit.finfo(kd)
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(k, attr) == getattr(t, attr) and type(getattr(k, attr)) is type(getattr(t, attr)), attr
        assert repr(k) == repr(t)
        _same_error(lambda: toolkit.iinfo(kd), lambda: torch.iinfo(td))
    elif td is torch.bool:
        _same_error(lambda: toolkit.iinfo(kd), lambda: torch.iinfo(td))
        _same_error(lambda: toolkit.finfo(kd), lambda: torch.finfo(td))
    else:
        t, k = torch.iinfo(td), toolkit.iinfo(kd)
        for attr in ("bits", "max", "min", "dtype"):
            assert getattr(k, attr) == getattr(t, attr), attr
        assert repr(k) == repr(t)
        _same_error(lambda: toolkit.finfo(kd), lambda: torch.finfo(td))


def test_finfo_default_dtype_equality_and_errors():
    assert toolkit.finfo() == toolkit.finfo(toolkit.float32) != toolkit.finfo(toolkit.float64)
    assert toolkit.finfo(type=toolkit.float16).max == 65504.0
    toolkit.set_default_dtype(toolkit.float64)
    try:
        assert toolkit.finfo().dtype == "float64"
    finally:
        toolkit.set_default_dtype(toolkit.float32)
    for bad in ("float", 3, None):
        _same_error(lambda: toolkit.finfo(bad), lambda: torch.finfo(bad))
    _same_error(lambda: toolkit.iinfo(), lambda: torch.iinfo())
    _same_error(lambda: toolkit.iinfo(toolkit.int8, toolkit.int8), lambda: torch.iinfo(torch.int8, torch.int8))
    _same_error(lambda: toolkit.finfo(toolkit.float32, toolkit.float32),
                lambda: torch.finfo(torch.float32, torch.float32))
    with pytest.raises(TypeError, match="unhashable"):
        hash(toolkit.finfo())
    with pytest.raises(AttributeError, match="not writable"):
        toolkit.finfo().eps = 1.0


# ----------------------------------------------------------------------------------------------- layout, typename
def test_layout():
    assert isinstance(toolkit.strided, toolkit.layout)
    assert toolkit.zeros(2).layout is toolkit.strided
    assert repr(toolkit.sparse_coo) == "toolkit.sparse_coo"
    names = sorted(n for n in dir(torch) if isinstance(getattr(torch, n), torch.layout))
    assert sorted(n for n in dir(toolkit) if isinstance(getattr(toolkit, n), toolkit.layout)) == names


def test_typename_and_is_storage():
    for dtype in ("float32", "int64", "bool", "float16"):
        k, t = toolkit.zeros(2, dtype=getattr(toolkit, dtype)), torch.zeros(2, dtype=getattr(torch, dtype))
        assert toolkit.typename(k) == torch.typename(t)
    for obj in (3, "x", None, int, toolkit.Tensor):
        assert toolkit.typename(obj) == torch.typename(obj).replace("torch", "toolkit")
    assert toolkit.typename(toolkit.nn.Linear(1, 1)) == "toolkit.nn.modules.linear.Linear"
    x = toolkit.zeros(2)
    assert toolkit.is_storage(x.untyped_storage())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert toolkit.is_storage(x.storage())
    assert not toolkit.is_storage(x) and not toolkit.is_storage([1])


# ----------------------------------------------------------------------------------------------- frombuffer
def test_frombuffer_shares_memory():
    b = bytearray(16)
    k = toolkit.frombuffer(b, dtype=toolkit.int32)
    b[0] = 7
    assert k.tolist() == [7, 0, 0, 0]
    k[1] = 5
    assert b[4] == 5
    a = array.array("f", [1, 2, 3, 4])
    for kw in ({}, {"count": 2, "offset": 4}, {"count": -1, "offset": 4}, {"count": -2}):
        assert_close(toolkit.frombuffer(a, dtype=toolkit.float32, **kw),
                     torch.frombuffer(a, dtype=torch.float32, **kw))
    g = toolkit.frombuffer(a, dtype=toolkit.float32, requires_grad=True)
    assert g.requires_grad and g.is_leaf
    assert toolkit.frombuffer(memoryview(b), dtype=toolkit.int16).shape == (8,)


@pytest.mark.parametrize("kw", [{"count": 0}, {"count": 5}, {"offset": 17}, {"offset": 16}, {"offset": -1},
                                {"offset": 3}, {"dtype": "int64", "offset": 4}])
def test_frombuffer_errors(kw):
    a = array.array("f", [1, 2, 3, 4])
    name = kw.pop("dtype", "float32")
    _same_error(lambda: toolkit.frombuffer(a, dtype=getattr(toolkit, name), **kw),
                lambda: torch.frombuffer(a, dtype=getattr(torch, name), **kw))


def test_frombuffer_bad_buffers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's warning about the read-only b""
        for bad in (b"", "abc", [1, 2], 3):
            _same_error(lambda: toolkit.frombuffer(bad, dtype=toolkit.uint8),
                        lambda: torch.frombuffer(bad, dtype=torch.uint8))
    strided = np.arange(6, dtype=np.float32)[::2]
    _same_error(lambda: toolkit.frombuffer(strided, dtype=toolkit.float32),
                lambda: torch.frombuffer(strided, dtype=torch.float32))
    a = array.array("f", [1, 2])
    _same_error(lambda: toolkit.frombuffer(a), lambda: torch.frombuffer(a))
    _same_error(lambda: toolkit.frombuffer(a, toolkit.float32), lambda: torch.frombuffer(a, torch.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert toolkit.frombuffer(bytes(range(4)), dtype=toolkit.uint8).tolist() == [0, 1, 2, 3]


# ----------------------------------------------------------------------------------------------- from_file
def test_from_file(tmp_path):
    path = str(tmp_path / "f.bin")
    np.arange(6, dtype=np.float32).tofile(path)
    for args, kw in [((), {"size": 6}), ((), {"size": 3}), ((False, 2), {"dtype": "float64"}), ((), {}),
                     ((), {"size": 6, "dtype": "int32"}), ((None, 2), {})]:
        kkw = {k: getattr(toolkit, v) if k == "dtype" else v for k, v in kw.items()}
        tkw = {k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()}
        assert_close(toolkit.from_file(path, *args, **kkw), torch.from_file(path, *args, **tkw))
    private = toolkit.from_file(path, shared=False, size=6)
    private[1] = 100
    assert np.fromfile(path, dtype=np.float32)[1] == 1
    shared = toolkit.from_file(path, shared=True, size=6)
    shared[0] = 100
    assert np.fromfile(path, dtype=np.float32)[0] == 100
    grown = str(tmp_path / "new.bin")
    assert toolkit.from_file(grown, shared=True, size=4).tolist() == [0, 0, 0, 0]
    assert os.path.getsize(grown) == 16
    assert toolkit.from_file(path, size=2, requires_grad=True).requires_grad


def test_from_file_errors(tmp_path):
    path = str(tmp_path / "f.bin")
    np.arange(6, dtype=np.float32).tofile(path)
    _same_error(lambda: toolkit.from_file(path, size=7), lambda: torch.from_file(path, size=7))
    _same_error(lambda: toolkit.from_file(path, size=-1), lambda: torch.from_file(path, size=-1))
    missing = str(tmp_path / "nope.bin")
    _same_error(lambda: toolkit.from_file(missing, size=4), lambda: torch.from_file(missing, size=4))
    _same_error(lambda: toolkit.from_file(3, size=2), lambda: torch.from_file(3, size=2))


# ----------------------------------------------------------------------------------------------- switches
def test_set_default_tensor_type():
    with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated as of PyTorch 2.1"):
        toolkit.set_default_tensor_type(toolkit.DoubleTensor)
    try:
        assert toolkit.get_default_dtype() is toolkit.float64 and toolkit.tensor([1.0]).dtype is toolkit.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            toolkit.set_default_tensor_type("torch.FloatTensor")
            assert toolkit.get_default_dtype() is toolkit.float32
            for bad in (toolkit.float64, 3, toolkit.Tensor, "torch.FloatStorage", toolkit.LongTensor):
                torch_bad = {toolkit.LongTensor: torch.LongTensor, toolkit.Tensor: torch.Tensor,
                             toolkit.float64: torch.float64}.get(bad, bad)
                _same_error(lambda: toolkit.set_default_tensor_type(bad),
                            lambda: torch.set_default_tensor_type(torch_bad))
            with pytest.raises(AttributeError):
                toolkit.set_default_tensor_type("torch.Foo")
    finally:
        toolkit.set_default_dtype(toolkit.float32)
        torch.set_default_dtype(torch.float32)


def test_flush_denormal_and_warn_always():
    assert toolkit.set_flush_denormal(True) in (True, False)
    assert toolkit.set_flush_denormal(False) in (True, False)
    _same_error(lambda: toolkit.set_flush_denormal(1), lambda: torch.set_flush_denormal(1))
    assert toolkit.is_warn_always_enabled() is False
    toolkit.set_warn_always(True)
    try:
        assert toolkit.is_warn_always_enabled() is True
    finally:
        toolkit.set_warn_always(False)
    _same_error(lambda: toolkit.set_warn_always(1), lambda: torch.set_warn_always(1))


def test_anomaly_switches_are_autograds_state():
    assert (toolkit.is_anomaly_enabled(), toolkit.is_anomaly_check_nan_enabled()) == (False, True)
    try:
        toolkit.set_anomaly_enabled(True, False)
        assert toolkit.autograd.is_anomaly_enabled() and not toolkit.is_anomaly_check_nan_enabled()
        toolkit.set_anomaly_enabled(True)
        assert toolkit.is_anomaly_check_nan_enabled()
    finally:
        toolkit.set_anomaly_enabled(False)
    assert not toolkit.is_anomaly_enabled()
    with toolkit.autograd.set_detect_anomaly(True):
        assert toolkit.is_anomaly_enabled()
    _same_error(lambda: toolkit.set_anomaly_enabled(1), lambda: torch.set_anomaly_enabled(1))


def test_device_queries():
    assert toolkit.is_vulkan_available() is False and toolkit.init_num_threads() is None
    assert toolkit.get_device_module("cpu") is toolkit.cpu
    assert toolkit.get_device_module(toolkit.device("cuda:0")) is toolkit.cuda
    expected = toolkit.cuda if toolkit.cuda.is_available() else toolkit.cpu
    assert toolkit.get_device_module() is expected
    _same_error(lambda: toolkit.get_device_module(3), lambda: torch.get_device_module(3))
    assert toolkit.random.thread_safe_generator() is None


# ----------------------------------------------------------------------------------------------- cond, fork
def test_cond():
    k, t = toolkit.ones(3), torch.ones(3)
    for pred in (True, 0.0, 1, "tensor_true", "tensor_false", "sum"):
        kp = {"tensor_true": toolkit.tensor(True), "tensor_false": toolkit.tensor([0]), "sum": k.sum() > 0}.get(pred, pred)
        tp = {"tensor_true": torch.tensor(True), "tensor_false": torch.tensor([0]), "sum": t.sum() > 0}.get(pred, pred)
        assert_close(toolkit.cond(kp, lambda x: x + 1, lambda x: x - 1, (k,)),
                     torch.cond(tp, lambda x: x + 1, lambda x: x - 1, (t,)))
    assert toolkit.cond(True, lambda: 1, lambda: 2) == 1
    for kp, tp in ((toolkit.tensor([True, False]), torch.tensor([True, False])), ("a", "a"), (None, None)):
        _same_error(lambda: toolkit.cond(kp, lambda x: x, lambda x: x, (k,)),
                    lambda: torch.cond(tp, lambda x: x, lambda x: x, (t,)))
    with pytest.raises(RuntimeError, match="Expect both branches to be callable"):
        toolkit.cond(toolkit.tensor(True), 1, lambda x: x, (k,))
    with pytest.raises(RuntimeError, match="only consists of tensor leaves"):
        toolkit.cond(toolkit.tensor(True), lambda *a: a, lambda *a: a, (k, 3))


def test_fork_wait_are_the_jits():
    assert toolkit.fork is toolkit.jit.fork and toolkit.wait is toolkit.jit.wait
    assert toolkit.wait(toolkit.fork(lambda x: x * 2, toolkit.ones(2))).tolist() == [2.0, 2.0]


# ----------------------------------------------------------------------------------------------- symbolic sizes
@pytest.mark.parametrize("value, kw", [(3, {"max": 3}), (3, {"max": 2}), (1, {"min": 0, "max": 5}), (0, {}),
                                       (-1, {}), (5, {"min": 6}), (5, {"min": -3}), (5, {"min": 4, "max": 3}),
                                       (3, {"max": 1}), (3, {"min": 2, "max": 3})])
def test_sym_constrain_range(value, kw):
    for name in ("sym_constrain_range", "sym_constrain_range_for_size"):
        mine, theirs = getattr(toolkit, name), getattr(torch, name)
        try:
            expected = theirs(value, **kw)
        except RuntimeError:
            _same_error(lambda: mine(value, **kw), lambda: theirs(value, **kw))  # noqa: B023
        else:
            assert mine(value, **kw) is expected is None


def test_sym_fresh_size():
    assert toolkit.sym_fresh_size(5) == torch.sym_fresh_size(5) == 5
    assert toolkit.sym_fresh_size(toolkit.tensor(4)) == 4


# ----------------------------------------------------------------------------------------------- Tensor.new
def test_tensor_new_matches_torch():
    k, t = toolkit.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    for args in ((2, 3), (toolkit.Size([2, 3]),), (), (5,), (0,)):
        targs = tuple(torch.Size(a) if isinstance(a, toolkit.Size) else a for a in args)
        got, expected = k.new(*args), t.new(*targs)
        assert got.shape == tuple(expected.shape) and got.dtype is k.dtype
    for data in ([1.5, 2], (2, 3), np.array([1, 2]), ()):
        assert_close(k.new(data), t.new(data))
    i = toolkit.arange(3)
    assert i.new([1.5, 2]).tolist() == torch.arange(3).new([1.5, 2]).tolist()
    alias = k.new(k)
    assert alias.data_ptr() == k.data_ptr() and alias is not k
    u = k.clone().requires_grad_()
    assert u.new(u).requires_grad and not u.new(2).requires_grad
    assert k.new(k.untyped_storage()).shape == (6,)
    assert k.new(2, device="cpu").device.type == "cpu"


def test_tensor_new_errors():
    k, t = toolkit.arange(6.0), torch.arange(6.0)
    for args in ((2, "a"), (2.5,), (-1,)):
        _same_error(lambda: k.new(*args), lambda: t.new(*args))
    _same_error(lambda: k.new(toolkit.arange(3)), lambda: t.new(torch.arange(3)))
    for kw in ({"dtype": toolkit.int64}, {"requires_grad": True}):
        with pytest.raises(TypeError, match="new\\(\\) received an invalid combination of arguments"):
            k.new(2, **kw)
    with pytest.raises(TypeError, match="new\\(\\) received an invalid combination of arguments"):
        k.new(k, 2)
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu but device type: meta"):
        k.new(2, device="meta")


# ----------------------------------------------------------------------------------------------- as_subclass
class _Sub(toolkit.Tensor):
    pass


def test_as_subclass():
    k = toolkit.arange(6.0).reshape(2, 3)
    s = k.as_subclass(_Sub)
    assert type(s) is _Sub and s.data_ptr() == k.data_ptr() and not s.requires_grad
    s.tag = "kept"  # a subclass instance has its own attributes
    u = k.clone().requires_grad_()
    su = u.as_subclass(_Sub)
    assert su.requires_grad and su.grad_fn is not None and not su.is_leaf
    (su * 2).sum().backward()
    assert u.grad.tolist() == [[2.0] * 3] * 2
    assert type(k.as_subclass(toolkit.nn.Parameter)) is toolkit.nn.Parameter
    t = torch.zeros(1)
    _same_error(lambda: k.as_subclass(int), lambda: t.as_subclass(int))
    _same_error(lambda: k.as_subclass(3), lambda: t.as_subclass(3))


@pytest.mark.parametrize("name, args", [("eig", ()), ("lstsq", ("other",)), ("solve", ("other",)), ("symeig", ())])
def test_removed_linalg_methods_raise_as_torch(name, args):
    k, t = toolkit.eye(2), torch.eye(2)
    kargs = tuple(k if a == "other" else a for a in args)
    targs = tuple(t if a == "other" else a for a in args)
    _same_error(lambda: getattr(k, name)(*kargs), lambda: getattr(t, name)(*targs))
