"""Device-time attributes, CUDA table columns and the no-CUDA fallback, checked against torch's own code.

The table tests build the same event tree for both libraries (torch's
``FunctionEvent`` with event-timed CUDA kernels, as its legacy CUDA profiler
makes them) and compare the printed tables character for character; they need
no GPU. Runs on CUDA tests live in tests/cuda/test_profiler_cuda.py.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.autograd import profiler_util as tpu

import toolkit
from toolkit.profiler import FunctionEvent, FunctionEventAvg, ProfilerActivity, profile
from toolkit.profiler.events import EventList

no_cuda = pytest.mark.skipif(toolkit.cuda.is_available(), reason="checks the behaviour without a GPU")

# (id, name, start, end, parent index, device duration or None)
_TREE = [
    (1, "forward", 0.0, 100.0, None, None),
    (2, "aten::mm", 1.0, 40.0, 0, 35.5),
    (3, "aten::relu", 41.0, 50.0, 0, 7.25),
    (4, "aten::linear", 51.0, 99.0, 0, 40.0),
    (5, "aten::t", 52.0, 54.0, 3, None),
    (6, "aten::addmm", 55.0, 98.0, 3, 30.0),
    (7, "aten::mm", 101.0, 130.0, None, 20.0),
    (8, "aten::exp", 131.0, 133.0, None, None),
]


def _tree(lib_event, event_list, use_device="cuda", profile_memory=False):
    out = []
    for id_, name, start, end, parent, dev in _TREE:
        e = lib_event(id_, name, 1, start, end, use_device=use_device, is_user_annotation=name == "forward")
        if dev is not None and use_device:
            e.append_kernel(name, 0, dev)
            e.is_legacy = True
            e.device_memory_usage = 4096 * id_
            e.cpu_memory_usage = 16 * id_
        if parent is not None:
            e.cpu_parent = out[parent]
            out[parent].cpu_children.append(e)
        out.append(e)
    events = event_list(out, use_device=use_device, profile_memory=profile_memory)
    events._tree_built = True
    return events


def _ours(use_device="cuda", profile_memory=False):
    def make(id_, name, thread, start, end, use_device, is_user_annotation):
        return FunctionEvent(id_, name, thread, start, end, use_device=use_device,
                             is_user_annotation=is_user_annotation)
    return _tree(make, EventList, use_device, profile_memory)


def _theirs(use_device="cuda", profile_memory=False):
    def make(id_, name, thread, start, end, use_device, is_user_annotation):
        return tpu.FunctionEvent(id_, name, thread, start, end, use_device=use_device,
                                 is_user_annotation=is_user_annotation, input_shapes=[], stack=[])
    return _tree(make, tpu.EventList, use_device, profile_memory)


def test_device_times_match_torch_event_by_event():
    ours, theirs = _ours(), _theirs()
    for a, b in zip(ours, theirs):
        assert a.device_time_total == b.device_time_total, a.name
        assert a.self_device_time_total == b.self_device_time_total, a.name
        assert a.device_time == b.device_time and a.device_time_str == b.device_time_str
        assert [tuple(k) for k in a.kernels] == [tuple(k) for k in b.kernels]
    for a, b in zip(ours.key_averages(), theirs.key_averages()):
        assert (a.key, a.count, a.is_legacy, a.use_device) == (b.key, b.count, b.is_legacy, b.use_device)
        assert (a.device_time_total, a.self_device_time_total) == (b.device_time_total, b.self_device_time_total)


@pytest.mark.parametrize("sort_by", [None, "cuda_time_total", "self_cuda_time_total", "device_time_total",
                                     "cpu_time_total", "count"])
def test_cuda_table_matches_torch(sort_by):
    ours, theirs = _ours(), _theirs()
    assert ours.table(sort_by=sort_by) == theirs.table(sort_by=sort_by)
    assert ours.key_averages().table(sort_by=sort_by) == theirs.key_averages().table(sort_by=sort_by)
    assert ours.table(sort_by=sort_by, time_unit="ms") == theirs.table(sort_by=sort_by, time_unit="ms")
    ours, theirs = _ours(profile_memory=True), _theirs(profile_memory=True)
    assert "Self CUDA Mem" in ours.table()
    assert ours.key_averages().table(sort_by=sort_by) == theirs.key_averages().table(sort_by=sort_by)


def test_no_cuda_columns_without_device_time():
    ours, theirs = _ours(use_device=None), _theirs(use_device=None)
    text = ours.key_averages().table()
    assert "CUDA" not in text and text == theirs.key_averages().table()


def test_deprecated_cuda_names_warn_like_torch():
    ours, theirs = _ours()[1], _theirs()[1]
    for name in ("cuda_time_total", "self_cuda_time_total", "cuda_time"):
        with warnings.catch_warnings(record=True) as w_ours:
            warnings.simplefilter("always")
            a = getattr(ours, name)
        with warnings.catch_warnings(record=True) as w_theirs:
            warnings.simplefilter("always")
            b = getattr(theirs, name)
        assert a == b
        assert [(w.category, str(w.message)) for w in w_ours] == [(w.category, str(w.message)) for w in w_theirs]
    for name in ("cuda_time_total", "self_cuda_time_total"):  # torch's averages never had these
        with pytest.raises(AttributeError):
            getattr(FunctionEventAvg(), name)
        with pytest.raises(AttributeError):
            getattr(tpu.FunctionEventAvg(), name)


def _warnings_of(fn) -> list[tuple]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught if "USDT" not in str(w.message)]


@no_cuda
def test_cuda_requested_without_a_gpu_warns_and_profiles_cpu_only():
    def ours():
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            toolkit.ones(3).exp()
        assert type(p.profiler._recorder).__name__ == "Recorder"
        assert [e.name for e in p.events()] == ["aten::ones", "aten::exp"]
        assert all(e.use_device is None and not e.kernels for e in p.events())
        assert "CUDA" not in p.key_averages().table(sort_by="cuda_time_total")

    def theirs():
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]):
            torch.ones(3).exp()

    assert _warnings_of(ours) == _warnings_of(theirs) == [(UserWarning, "CUDA is not available, disabling CUDA "
                                                                        "profiling")]
    for kwargs in (dict(use_cuda=True), dict(use_device="cuda"), dict(use_device="xpu"), dict(use_device="tpu")):
        def run_ours(kw=kwargs):
            with toolkit.autograd.profiler.profile(**kw) as p:
                toolkit.ones(2)
            assert p.use_device is None and "CUDA" not in p.table()

        def run_theirs(kw=kwargs):
            with torch.autograd.profiler.profile(**kw):
                torch.ones(2)

        assert _warnings_of(run_ours) == _warnings_of(run_theirs), kwargs
