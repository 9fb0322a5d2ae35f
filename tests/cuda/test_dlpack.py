"""DLPack on CUDA tensors: toolkit's own capsules (the C ABI in ctypes), zero-copy both ways, lifetimes and errors.

Under numba's simulator "device memory" is host memory, so the round trips
here run through the whole ABI (capsule, struct, deleter, pointer import)
in the simulator; the exchanges with CUDA builds of PyTorch run on a GPU only.
"""

from __future__ import annotations

import ctypes
import gc
import weakref

import numpy as np
import pytest
import torch

import toolkit
from toolkit import _dlpack_abi as abi
from toolkit._dlpack_export import device_ptr

from .conftest import SIMULATED
from .helpers import needs_cuda

pytestmark = needs_cuda

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


class Producer:
    """A third-party-like producer: hands out ``t``'s capsules and records what the consumer asked for."""

    def __init__(self, t, kinds_of_kwargs=None):
        self.t = t
        self.calls = []
        self.refuse = kinds_of_kwargs  # keyword names this "older" producer does not know

    def __dlpack__(self, **kw):
        self.calls.append(dict(kw))
        if self.refuse and set(kw) & self.refuse:
            raise TypeError("unexpected keyword")
        return self.t.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def cuda_tensor(a) -> toolkit.Tensor:
    return toolkit.tensor(np.asarray(a), device="cuda")


def ptr(t) -> int:
    """The address of ``t``'s first element, as the exporter computes it."""
    return device_ptr(t._data)


def test_data_ptr_and_cuda_array_interface_of_a_cuda_tensor():
    t = cuda_tensor(np.arange(6.0, dtype=np.float32)).view(2, 3)
    iface = t.__cuda_array_interface__
    assert iface["shape"] == (2, 3) and iface["typestr"] == "<f4" and iface["version"] == 3
    assert t.data_ptr() == iface["data"][0] and t[1].data_ptr() - t.data_ptr() == 12
    assert not hasattr(toolkit.ones(2), "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="non-CUDA tensor type: torch.FloatTensor"):
        _ = toolkit.ones(2).__cuda_array_interface__
    with pytest.raises(RuntimeError, match="requires grad"):
        _ = t.clone().requires_grad_().__cuda_array_interface__


def settle():
    """Nothing here makes reference cycles: memory goes when the last reference does (no gc pass needed)."""


@pytest.fixture(autouse=True)
def no_leaked_exports():
    before = abi.live_exports()
    yield
    if abi.live_exports() != before:
        gc.collect()  # (a failed test's traceback may hold some)
    assert abi.live_exports() == before


@pytest.mark.parametrize("max_version", [None, (1, 0), (1, 1)])
def test_capsule_round_trip_shares_memory(max_version):
    x = cuda_tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    cap = x.__dlpack__(max_version=max_version)
    name = "dltensor_versioned" if max_version else "dltensor"
    assert f'"{name}"' in repr(cap)
    info = abi.peek(cap)
    assert info.device == (2, 0) and info.shape == (3, 4) and info.strides == (4, 1)
    assert info.dtype == np.float32 and info.flags == 0 and info.versioned == bool(max_version)
    y = toolkit.from_dlpack(cap)
    assert f'"used_{name}"' in repr(cap)
    assert y.is_cuda and y.device == x.device and y.dtype == toolkit.float32 and y.shape == (3, 4)
    y[1, 2] = -5.0
    assert x[1, 2].item() == -5.0
    x.add_(1)
    np.testing.assert_array_equal(y.cpu().numpy(), x.cpu().numpy())


def test_protocol_path_passes_stream_and_version():
    x = cuda_tensor([1.0, 2.0, 3.0])
    p = Producer(x)
    y = toolkit.from_dlpack(p)
    assert p.calls == [{"stream": 1, "max_version": abi.VERSION}]
    y.mul_(2)
    np.testing.assert_array_equal(x.cpu().numpy(), [2, 4, 6])
    old = Producer(x, kinds_of_kwargs={"max_version", "copy"})  # an older producer: retried with fewer keywords
    z = toolkit.from_dlpack(old, copy=True)
    assert old.calls[-1] == {"stream": 1}
    z.zero_()
    np.testing.assert_array_equal(x.cpu().numpy(), [2, 4, 6])  # copy=True honoured by the consumer
    assert toolkit.from_dlpack(x) is not x and ptr(toolkit.from_dlpack(x)) == ptr(x) == ptr(y)


@pytest.mark.parametrize("view", ["transpose", "slice_step", "offset_row", "expand", "scalar", "empty", "empty_2d"])
def test_views_scalars_and_empty(view):
    base = cuda_tensor(np.arange(24, dtype=np.float64).reshape(4, 6))
    v = {"transpose": lambda: base.t(), "slice_step": lambda: base[1:, ::2],
         "offset_row": lambda: base[2], "expand": lambda: base[1:2, :3].expand(3, 3),
         "scalar": lambda: base[1, 1], "empty": lambda: cuda_tensor(np.zeros(0, np.float32)),
         "empty_2d": lambda: base[:, 6:]}[view]()
    y = toolkit.from_dlpack(v.__dlpack__(max_version=(1, 0)))
    assert y.shape == v.shape and y.dtype == v.dtype and y.is_cuda
    np.testing.assert_array_equal(y.cpu().numpy(), v.cpu().numpy())
    if v.numel():
        assert y.stride() == v.stride() and ptr(y) == ptr(v)
    if view in ("transpose", "slice_step", "offset_row", "scalar"):
        y.fill_(-1)
        assert (v.cpu().numpy() == -1).all() and (base.cpu().numpy() == -1).sum() == v.numel()


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype(dtype):
    a = (np.arange(6) % 2).astype(dtype) if dtype == "bool" else np.arange(6).astype(dtype)
    x = cuda_tensor(a.reshape(2, 3))
    for mv in (None, (1, 0)):
        cap = x.__dlpack__(max_version=mv)
        info = abi.peek(cap)
        assert info.dtype == np.dtype(dtype)
        y = toolkit.from_dlpack(cap)
        assert y.dtype == x.dtype
        np.testing.assert_array_equal(y.cpu().numpy(), a.reshape(2, 3))
    y[0, 0] = True if dtype == "bool" else 7
    assert x[0, 0].item() == y[0, 0].item()


def test_memory_lives_while_any_consumer_holds_it():
    x = cuda_tensor(np.arange(8, dtype=np.float32))
    root = weakref.ref(x._data.root() if x._data.base is not None else x._data)
    cap = x.__dlpack__()
    del x
    settle()
    assert root() is not None  # the unconsumed capsule holds it
    y = toolkit.from_dlpack(cap)
    del cap
    settle()
    assert root() is not None  # the importer holds it
    part = y[2:5]
    del y
    settle()
    assert root() is not None  # ... through any view of the import
    np.testing.assert_array_equal(part.cpu().numpy(), [2, 3, 4])
    del part
    settle()
    assert root() is None


def test_unconsumed_capsule_frees_once_and_deleter_is_idempotent():
    before = abi.live_exports()
    x = cuda_tensor([1.0, 2.0])
    root = weakref.ref(x._data)
    for mv in (None, (1, 0)):
        cap = x.__dlpack__(max_version=mv)
        assert abi.live_exports() == before + 1
        del cap
        settle()
        assert abi.live_exports() == before
    cap = x.__dlpack__(max_version=(1, 0))
    info = abi.peek(cap)
    lease = abi.consume(info)
    lease.release()
    lease.release()  # a second release does nothing
    assert abi.live_exports() == before
    del cap  # renamed: its destructor leaves the (freed) struct alone
    settle()
    assert abi.live_exports() == before
    del x
    settle()
    assert root() is None


def test_torch_cpu_build_refuses_our_cuda_capsule_with_its_own_error():
    if torch.cuda.is_available():
        pytest.skip("this torch has CUDA: see test_torch_cuda_exchange")
    x = cuda_tensor([1.0, 2.0])
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        torch.from_dlpack(x)
    cap = x.__dlpack__()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        torch.from_dlpack(cap)  # torch takes the capsule, then fails and calls our deleter
    with pytest.raises(RuntimeError, match="Unsupported device"):
        np.from_dlpack(x)  # numpy refuses without taking it; the capsule is freed with numpy's error pending
    np.testing.assert_array_equal(x.cpu().numpy(), [1, 2])


def test_dl_device_and_copy_keywords():
    x = cuda_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    host = np.from_dlpack(x, device="cpu")  # numpy asks for dl_device=(kDLCPU, 0): a host copy
    np.testing.assert_array_equal(host, x.cpu().numpy())
    t = torch.from_dlpack(x.__dlpack__(dl_device=(1, 0), max_version=(1, 0)))
    t.add_(100)
    np.testing.assert_array_equal(x.cpu().numpy(), host)
    info = abi.peek(x.__dlpack__(dl_device=(1, 0), max_version=(1, 0)))
    assert info.device == (1, 0) and info.flags & abi.FLAG_IS_COPIED
    with pytest.raises(BufferError, match="needs a copy, and copy=False"):
        x.__dlpack__(dl_device=(1, 0), copy=False)
    with pytest.raises(BufferError, match="cannot export"):
        x.__dlpack__(dl_device=(2, 3))
    with pytest.raises(BufferError, match="cannot export"):
        x.__dlpack__(dl_device=(10, 0))
    assert abi.peek(x.__dlpack__(dl_device=(2, 0), copy=False, max_version=(1, 0))).flags == 0
    cap = x.__dlpack__(copy=True, max_version=(1, 0))
    assert abi.peek(cap).flags & abi.FLAG_IS_COPIED
    c = toolkit.from_dlpack(cap)
    c.zero_()
    assert x.sum().item() == 15
    for kw in ({"copy": True}, {"device": "cpu"}):
        y = toolkit.from_dlpack(Producer(x), **kw)
        y.zero_()
        assert x.sum().item() == 15
    assert toolkit.from_dlpack(Producer(x), device="cpu").device.type == "cpu"
    with pytest.raises(BufferError, match="copy=False"):
        toolkit.from_dlpack(Producer(x), device="cpu", copy=False)
    moved = toolkit.tensor([1.0, 2.0])
    cap = moved.__dlpack__(dl_device=(2, 0), max_version=(1, 0))  # a CPU tensor exported to the device
    assert abi.peek(cap).device == (2, 0) and abi.peek(cap).flags & abi.FLAG_IS_COPIED
    np.testing.assert_array_equal(toolkit.from_dlpack(cap).cpu().numpy(), [1, 2])
    with pytest.raises(BufferError, match="copy=False"):
        moved.__dlpack__(dl_device=(2, 0), copy=False)


def test_capsule_dropped_while_an_exception_propagates_keeps_that_exception():
    x = cuda_tensor([1.0])

    def fails():
        cap = x.__dlpack__()  # noqa: F841 - freed during the unwinding
        raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        fails()


def test_bare_ctypes_callbacks_still_free_once(monkeypatch):
    """Without numba's compiler the ctypes callbacks themselves are the entry points."""
    bare = tuple(ctypes.cast(f, ctypes.c_void_p).value for f in (abi._capsule_destructor, abi._deleter))
    monkeypatch.setattr(abi, "_entry_points", lambda: bare)
    x = cuda_tensor([1.0, 2.0])
    before = abi.live_exports()
    cap = x.__dlpack__()
    del cap
    assert abi.live_exports() == before
    y = toolkit.from_dlpack(x.__dlpack__(max_version=(1, 0)))
    assert abi.live_exports() == before + 1
    del y
    assert abi.live_exports() == before


def test_streams():
    x = cuda_tensor([1.0])
    for s in (None, -1, 1, 2):
        toolkit.from_dlpack(x.__dlpack__(stream=s))
    with pytest.raises(AssertionError, match="unsupported stream on CUDA: 0"):
        x.__dlpack__(stream=0)
    with pytest.raises(TypeError, match="stream must be"):
        x.__dlpack__(stream="default")
    w = toolkit.ones(2, device="cuda", requires_grad=True)
    with pytest.raises(BufferError, match="require gradient"):
        w.__dlpack__()


@pytest.mark.cuda
@pytest.mark.skipif(SIMULATED, reason="a CUDA stream pointer needs a real device")
def test_consumer_stream_pointer_waits_for_our_work():
    from numba import cuda

    s = cuda.stream()
    x = toolkit.arange(1000.0, device="cuda") * 2
    y = toolkit.from_dlpack(x.__dlpack__(stream=int(s)))
    s.synchronize()
    assert y.sum().item() == 999000.0


def _capsule(name: bytes, ptr: int):
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
        ("PyCapsule_New", ctypes.pythonapi))
    return new(ptr, name, None)


_OTHER = b"not_a_tensor"  # capsule names must outlive their capsules


def test_bad_capsules_are_refused_and_left_unconsumed():
    x = cuda_tensor(np.array([1.0, 2.0], np.float32))
    cap = x.__dlpack__()
    toolkit.from_dlpack(cap)
    with pytest.raises(BufferError, match="already consumed"):
        toolkit.from_dlpack(cap)
    with pytest.raises(BufferError, match="expected a capsule named 'dltensor'"):
        toolkit.from_dlpack(_capsule(_OTHER, 1))
    with pytest.raises(TypeError, match="DLPack capsule"):
        toolkit.from_dlpack(object())
    for fields, match in (({"code": abi.kDLBfloat, "bits": 16}, "bfloat16"), ({"lanes": 4}, "float32x4"),
                          ({"code": abi.kDLComplex, "bits": 32}, "complex32")):
        cap = x.__dlpack__(max_version=(1, 0))
        dtype = abi.DLManagedTensorVersioned.from_address(abi.peek(cap).managed).dl_tensor.dtype
        for k, v in fields.items():
            setattr(dtype, k, v)
        with pytest.raises(BufferError, match=match):
            toolkit.from_dlpack(cap)
        assert '"dltensor_versioned"' in repr(cap)  # refused, not taken: its destructor frees it
    cap = x.__dlpack__(max_version=(1, 0))
    abi.DLManagedTensorVersioned.from_address(abi.peek(cap).managed).version.major = 2
    with pytest.raises(BufferError, match="version 2"):
        toolkit.from_dlpack(cap)
    cap = x.__dlpack__()
    abi.DLManagedTensor.from_address(abi.peek(cap).managed).dl_tensor.device.device_id = 7
    with pytest.raises(BufferError, match="no CUDA device 7"):
        toolkit.from_dlpack(cap)
    cap = x.__dlpack__()
    abi.DLManagedTensor.from_address(abi.peek(cap).managed).dl_tensor.data = None
    with pytest.raises(BufferError, match="NULL data pointer"):
        toolkit.from_dlpack(cap)


def test_read_only_capsule_is_copied():
    x = cuda_tensor([1.0, 2.0])
    cap = x.__dlpack__(max_version=(1, 0))
    abi.DLManagedTensorVersioned.from_address(abi.peek(cap).managed).flags = abi.FLAG_READ_ONLY
    with pytest.raises(BufferError, match="read-only"):
        toolkit.from_dlpack(cap, copy=False)
    y = toolkit.from_dlpack(cap)
    y.zero_()
    np.testing.assert_array_equal(x.cpu().numpy(), [1, 2])


@pytest.mark.cuda
@pytest.mark.skipif(SIMULATED or not torch.cuda.is_available(), reason="needs a GPU and a CUDA build of torch")
def test_torch_cuda_exchange():
    x = cuda_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    t = torch.from_dlpack(x)
    assert t.is_cuda and t.data_ptr() == ptr(x)
    t.mul_(2)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(6).reshape(2, 3) * 2)
    src = torch.arange(8, device="cuda", dtype=torch.float64)[::2]
    y = toolkit.from_dlpack(src)
    assert y.is_cuda and y.stride() == (2,) and ptr(y) == src.data_ptr()
    y.add_(1)
    toolkit.cuda.synchronize()
    assert src.tolist() == [1.0, 3.0, 5.0, 7.0]
