"""toolkit.cuda's runtime and CUDA tensors' Python surface: devices, copies, printing, memory, events."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit

from .helpers import needs_cuda

pytestmark = needs_cuda


def test_device_queries():
    assert toolkit.cuda.is_available()
    assert toolkit.cuda.device_count() >= 1
    assert toolkit.cuda.current_device() == 0
    toolkit.cuda.set_device(0)
    toolkit.cuda.synchronize()
    assert isinstance(toolkit.cuda.get_device_name(), str)


def test_factories_and_moves():
    x = toolkit.zeros(2, 3, device="cuda")
    assert x.is_cuda and not x.is_cpu and x.device == toolkit.device("cuda", 0) and str(x.device) == "cuda:0"
    y = toolkit.arange(6.0).view(2, 3)
    c = y.cuda()
    assert c.is_cuda and c.shape == (2, 3) and c.dtype is toolkit.float32
    assert y.to("cuda").is_cuda and c.to("cuda") is c
    d = c.to("cpu", toolkit.double)
    assert d.is_cpu and d.dtype is toolkit.float64
    np.testing.assert_array_equal(d.numpy(), y.numpy().astype(np.float64))
    np.testing.assert_array_equal(c.t().cpu().numpy(), y.numpy().T)
    assert toolkit.tensor([[1, 2]], device="cuda").dtype is toolkit.int64
    assert toolkit.ones(3).to(device="cuda", dtype=toolkit.float64).dtype is toolkit.float64


def test_printing_shows_device():
    x = toolkit.tensor([1.0, 2.0], device="cuda")
    assert repr(x) == "tensor([1., 2.], device='cuda:0')"
    assert repr(toolkit.tensor([1, 2], device="cuda")) == "tensor([1, 2], device='cuda:0')"


def test_numpy_refuses_as_pytorch():
    x = toolkit.ones(2, device="cuda")
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu\(\)"):
        x.numpy()
    with pytest.raises(TypeError, match="can't convert cuda:0"):
        np.asarray(x)


def test_scalars_and_views():
    x = toolkit.arange(12.0, device="cuda").view(3, 4)
    assert x[1, 2].item() == 6.0 and x[1].is_cuda
    assert x.sum().item() == 66.0
    assert x.tolist() == toolkit.arange(12.0).view(3, 4).tolist()
    v = x.transpose(0, 1)
    assert v.stride() == (1, 4) and not v.is_contiguous() and v.contiguous().is_contiguous()
    assert v._base is x or v._base is x._base
    v.add_(1)  # in place through a view
    assert x.sum().item() == 78.0 and x._version == v._version


def test_cuda_array_interface_describes_the_data():
    x = toolkit.ones(2, 3, device="cuda")
    iface = x._data.__cuda_array_interface__
    assert iface["shape"] == (2, 3) and iface["typestr"] == "<f4" and iface["version"] == 3


def test_caching_allocator_counts_and_reuses():
    toolkit.cuda.empty_cache()
    before = toolkit.cuda.memory_allocated()
    x = toolkit.ones(1000, device="cuda")
    assert toolkit.cuda.memory_allocated() >= before + 4000
    assert toolkit.cuda.max_memory_allocated() >= toolkit.cuda.memory_allocated()
    reserved = toolkit.cuda.memory_reserved()
    del x
    assert toolkit.cuda.memory_allocated() == before
    assert toolkit.cuda.memory_reserved() == reserved  # cached for the next tensor of that size
    y = toolkit.ones(1000, device="cuda")
    assert toolkit.cuda.memory_reserved() == reserved
    del y
    toolkit.cuda.empty_cache()
    assert toolkit.cuda.memory_reserved() < reserved


def test_events_time_work():
    start, end = toolkit.cuda.Event(enable_timing=True), toolkit.cuda.Event(enable_timing=True)
    start.record()
    toolkit.ones(100, device="cuda").sum()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        toolkit.cuda.Event().elapsed_time(end)
    s = toolkit.cuda.Stream()
    s.synchronize()


def test_current_stream_is_a_usable_stream():
    """Under the simulator too, which has no default stream of its own."""
    s = toolkit.cuda.current_stream()
    assert isinstance(s, toolkit.cuda.Stream) and s.device == toolkit.device("cuda", 0)
    assert toolkit.cuda.Stream(device="cuda").device == s.device
    with toolkit.cuda.stream(s):
        y = toolkit.ones(4, device="cuda") * 2
    s.synchronize()
    assert s.query()
    s.record_event().synchronize()
    toolkit.cuda.Stream().wait_stream(s)
    assert y.cpu().tolist() == [2.0] * 4


def test_optimizer_state_lives_on_device():
    w = toolkit.nn.Parameter(toolkit.ones(3, device="cuda"))
    opt = toolkit.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    assert w.is_cuda and all(t.is_cuda for t in opt.state[w].values() if isinstance(t, toolkit.Tensor) and t.ndim)
