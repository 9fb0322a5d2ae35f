"""QConfigs against torch: what each named qconfig and get_default_qconfig / get_default_qat_qconfig build for
every backend (observer class, dtype, scheme, range, reduce_range, channel axis), the refusals and equality."""

import pytest
import torch

import toolkit
from toolkit.ao import quantization as tq

pytestmark = [pytest.mark.filterwarnings("ignore:Please use quant_min"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]
tQ = torch.ao.quantization


def _describe(obs) -> dict:
    """What an observer or fake quantizer is, in library-neutral terms."""
    if obs is None:
        return {}
    out = {"class": type(obs).__name__}
    for attr in ("quant_min", "quant_max", "reduce_range", "ch_axis", "averaging_constant", "is_dynamic", "bins"):
        if hasattr(obs, attr):
            out[attr] = getattr(obs, attr)
    for attr in ("dtype", "qscheme"):
        if hasattr(obs, attr):
            out[attr] = str(getattr(obs, attr)).rsplit(".", 1)[-1]
    if hasattr(obs, "activation_post_process"):
        out["observer"] = _describe(obs.activation_post_process)
    return out


def _same(ours, theirs) -> None:
    assert _describe(ours.activation()) == _describe(theirs.activation())
    assert _describe(ours.weight()) == _describe(theirs.weight())


_NAMED = ["default_qconfig", "default_debug_qconfig", "default_per_channel_qconfig", "default_dynamic_qconfig",
          "float16_dynamic_qconfig", "float16_static_qconfig", "per_channel_dynamic_qconfig",
          "float_qparams_weight_only_qconfig", "default_qat_qconfig", "default_dynamic_qat_qconfig",
          "default_weight_only_qconfig", "default_activation_only_qconfig", "default_qat_qconfig_v2",
          "default_reuse_input_qconfig", "default_quint8_weight_qconfig", "default_symmetric_qnnpack_qconfig",
          "default_per_channel_symmetric_qnnpack_qconfig", "default_symmetric_qnnpack_qat_qconfig",
          "default_per_channel_symmetric_qnnpack_qat_qconfig"]


@pytest.mark.parametrize("name", _NAMED)
def test_named_qconfigs_build_torch_observers(name):
    _same(getattr(tq, name), getattr(tQ, name))


@pytest.mark.filterwarnings("ignore:Default qconfig of oneDNN")  # torch's warning on CPUs without VNNI
@pytest.mark.parametrize("backend", ["x86", "fbgemm", "qnnpack", "onednn"])
def test_get_default_qconfig(backend):
    _same(tq.get_default_qconfig(backend), tQ.get_default_qconfig(backend))


@pytest.mark.parametrize("backend", ["x86", "fbgemm", "qnnpack", "onednn"])
@pytest.mark.parametrize("version", [0, 1])
def test_get_default_qat_qconfig(backend, version):
    _same(tq.get_default_qat_qconfig(backend, version), tQ.get_default_qat_qconfig(backend, version))


def test_x86_defaults_reduce_activation_range_and_quantize_weights_per_channel():
    qconfig = tq.get_default_qconfig()
    act, weight = qconfig.activation(), qconfig.weight()
    assert type(act) is tq.HistogramObserver and act.reduce_range and (act.quant_min, act.quant_max) == (0, 127)
    assert weight.qscheme is toolkit.per_channel_symmetric and weight.dtype is tq.qint8


def test_refusals():
    with pytest.raises(AssertionError, match="not supported. backend must be one of"):
        tq.get_default_qconfig("tpu")
    with pytest.raises(AssertionError, match="Version number"):
        tq.get_default_qconfig("x86", 1)
    with pytest.raises(AssertionError, match="Version number"):
        tq.get_default_qat_qconfig("x86", 2)
    with pytest.raises(ValueError, match="received observer instance"):
        tq.QConfig(activation=tq.MinMaxObserver(), weight=tq.default_weight_observer)


def test_qconfig_dynamic_warns_and_qconfig_equals():
    with pytest.warns(FutureWarning, match="QConfigDynamic"):
        dyn = tq.QConfigDynamic(weight=tq.default_weight_observer)
    assert dyn.weight is tq.default_weight_observer
    assert tq.qconfig_equals(tq.get_default_qconfig(), tq.get_default_qconfig())
    assert not tq.qconfig_equals(tq.get_default_qconfig("x86"), tq.get_default_qconfig("qnnpack"))
    assert tq.qconfig_equals(None, None) and not tq.qconfig_equals(tq.default_qconfig, None)

