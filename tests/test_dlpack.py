"""DLPack on CPU tensors: zero-copy exchange with PyTorch and numpy in both directions, PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
def test_toolkit_to_torch_shares_memory(dtype):
    t = toolkit.tensor(np.arange(12).reshape(3, 4).astype(dtype))
    tt = torch.from_dlpack(t)
    assert tt.dtype == getattr(torch, dtype) and tuple(tt.shape) == (3, 4)
    np.testing.assert_array_equal(tt.numpy(), t.numpy())
    assert tt.data_ptr() == t.numpy().ctypes.data  # zero copy
    if dtype != "bool":
        tt[1, 2] = 7
        assert t[1, 2].item() == 7


def test_views_keep_their_strides_and_offset():
    t = toolkit.arange(24.0).reshape(4, 6)
    v = t.t()[1:, ::2]
    tv = torch.utils.dlpack.from_dlpack(v)
    assert tv.stride() == v.stride()
    np.testing.assert_array_equal(tv.numpy(), v.numpy())
    tv.mul_(0)
    assert (t.numpy()[::2, 1:] == 0).all()


def test_torch_and_numpy_to_toolkit_share_memory():
    src = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    t = toolkit.from_dlpack(src)
    assert t.dtype == toolkit.float64 and t.shape == (2, 3) and t.device.type == "cpu"
    src[0, 0] = 42
    assert t[0, 0].item() == 42
    a = np.ones((2, 2), np.float32)
    ta = toolkit.from_dlpack(a)
    ta.add_(1)
    assert (a == 2).all()
    cap = torch.utils.dlpack.to_dlpack(src)  # a legacy capsule, consumed once
    tc = toolkit.from_dlpack(cap)
    np.testing.assert_array_equal(tc.numpy(), src.numpy())
    with pytest.raises(BufferError, match="from_dlpack"):
        toolkit.from_dlpack(cap)


def test_numpy_round_trip_and_device():
    t = toolkit.randn(3, 2)
    assert t.__dlpack_device__() == torch.ones(1).__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    assert np.shares_memory(a, t.numpy())
    back = toolkit.from_dlpack(t)
    assert back.shape == t.shape and np.shares_memory(back.numpy(), t.numpy())


def test_copy_argument():
    src = torch.zeros(3)
    t = toolkit.from_dlpack(src, copy=True)
    src += 1
    assert t.sum().item() == 0
    with pytest.raises(BufferError):
        toolkit.from_dlpack(torch.zeros(2), device="cuda", copy=False)


def test_errors_as_pytorch():
    w = toolkit.ones(2, requires_grad=True)
    with pytest.raises(BufferError, match="require gradient"):
        w.__dlpack__()
    with pytest.raises(BufferError, match="require gradient"):
        torch.ones(2, requires_grad=True).__dlpack__()
    torch.from_dlpack(w.detach())
    with pytest.raises(TypeError, match="DLPack capsule"):
        toolkit.from_dlpack(42)
    with pytest.raises(BufferError, match="bfloat16|dtype"):
        toolkit.from_dlpack(torch.ones(2, dtype=torch.bfloat16))


def test_complex_tensors_cross_both_ways():
    src = torch.tensor([1 + 2j, -3.5j], dtype=torch.complex64)
    t = toolkit.from_dlpack(src)
    assert t.dtype == toolkit.complex64 and t.tolist() == src.tolist()
    back = torch.from_dlpack(toolkit.tensor([0.5 - 1j, 2 + 0j], dtype=toolkit.complex128))
    assert back.dtype == torch.complex128 and back.tolist() == [0.5 - 1j, 2 + 0j]
