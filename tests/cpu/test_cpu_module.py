"""toolkit.cpu against torch.cpu: the device-generic calls answered for the CPU."""

from __future__ import annotations

import torch

import toolkit


def test_answers_match_torch_cpu():
    assert toolkit.cpu.is_available() is torch.cpu.is_available() is True
    assert toolkit.cpu.device_count() == torch.cpu.device_count() == 1
    assert toolkit.cpu.current_device() == torch.cpu.current_device() == "cpu"
    assert toolkit.cpu.is_initialized()
    assert toolkit.cpu.synchronize() is None and toolkit.cpu.set_device("cpu") is None
    assert set(torch.cpu.__all__) <= set(toolkit.cpu.__all__)


def test_streams_and_context():
    default = toolkit.cpu.current_stream()
    s = toolkit.cpu.Stream()
    with toolkit.cpu.stream(s):
        assert toolkit.cpu.current_stream() is s
    assert toolkit.cpu.current_stream() is default
    with toolkit.cpu.StreamContext(None):
        assert toolkit.cpu.current_stream() is default
    e = toolkit.cpu.Event()
    assert e.query() and e.record() is None


def test_capabilities_use_torch_names():
    caps = toolkit.cpu.get_capabilities()
    tcaps = torch.cpu.get_capabilities()
    for k in ("avx2", "avx512_f", "sse4_2"):
        if k in caps and k in tcaps:
            assert caps[k] == tcaps[k]
    assert caps["architecture"] == tcaps["architecture"]


def test_amp_is_there():
    assert toolkit.cpu.amp.autocast.__name__ == "autocast"
