"""QuantStub, DeQuantStub and QuantWrapper against torch: identities before conversion, the qconfig they take,
and the wrapper's layout and mode."""

import numpy as np

import toolkit
from tests.ao.quantization.twin_models import module_layout
from tests.conftest import assert_close
from toolkit.ao import quantization as tq


def test_stubs_are_identities_and_keep_a_given_qconfig():
    x = toolkit.tensor(np.arange(4, dtype=np.float32))
    assert tq.QuantStub()(x) is x and tq.DeQuantStub()(x) is x
    assert not hasattr(tq.QuantStub(), "qconfig")
    assert tq.QuantStub(tq.default_qconfig).qconfig is tq.default_qconfig
    assert tq.DeQuantStub(tq.default_qconfig).qconfig is tq.default_qconfig


def test_quant_wrapper_layout_mode_and_qconfig():
    import torch
    inner = toolkit.nn.Linear(3, 2).eval()
    inner.qconfig = tq.default_qconfig
    wrapped = tq.QuantWrapper(inner)
    t_wrapped = torch.ao.quantization.QuantWrapper(torch.nn.Linear(3, 2))
    assert module_layout(wrapped) == module_layout(t_wrapped)
    assert not wrapped.training
    assert wrapped.quant.qconfig is tq.default_qconfig and wrapped.dequant.qconfig is tq.default_qconfig
    x = toolkit.tensor(np.ones((2, 3), dtype=np.float32))
    assert_close(wrapped(x), inner(x))
