"""Placeholder, Noop, Recording and ReuseInput observers against torch: pass-through, the configuration they
carry, and their refusal to give qparams."""

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.ao import quantization as tq

tQ = torch.ao.quantization


@pytest.mark.parametrize("name", ["PlaceholderObserver", "NoopObserver", "RecordingObserver", "ReuseInputObserver"])
def test_pass_through_and_no_qparams(name):
    ours, theirs = getattr(tq, name)(), getattr(tQ, name)()
    x = toolkit.tensor(np.arange(6, dtype=np.float32))
    assert ours(x) is x
    assert str(ours.dtype).rsplit(".", 1)[-1] == str(theirs.dtype).rsplit(".", 1)[-1]
    assert ours.is_dynamic == theirs.is_dynamic
    with pytest.raises(Exception, match=f"calculate_qparams should not be called for {name}"):
        ours.calculate_qparams()


def test_placeholder_carries_dynamic_configuration():
    ours, theirs = tq.default_dynamic_quant_observer(), tQ.default_dynamic_quant_observer()
    for attr in ("quant_min", "quant_max", "is_dynamic", "eps"):
        assert getattr(ours, attr) == getattr(theirs, attr)
    assert ours.dtype is tq.quint8 and ours.qscheme is toolkit.per_tensor_affine
    assert repr(ours).replace("toolkit", "torch") == repr(theirs)
    assert tq.default_placeholder_observer is tq.PlaceholderObserver


def test_recording_observer_keeps_copies():
    obs = tq.default_debug_observer()
    x = toolkit.tensor([1.0, 2.0])
    obs(x)
    x.add_(1)
    obs(x)
    values = obs.get_tensor_value()
    assert len(values) == 2
    assert_close(values[0], torch.tensor([1.0, 2.0]))
    assert_close(values[1], torch.tensor([2.0, 3.0]))


def test_noop_observer_default_dtype_is_float16():
    assert tq.NoopObserver().dtype is toolkit.float16
