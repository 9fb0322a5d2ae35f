"""``QuantType``, the ``utils`` helpers, the ``DEFAULT_*`` mapping constants and getters, the default qconfig
dicts, the embedding and 4-bit qconfigs and the custom config dict, against torch.ao.quantization."""

import re
import warnings

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.ao import quantization as tq
from toolkit.ao.quantization import quant_type, utils

pytestmark = [pytest.mark.filterwarnings("ignore:Please use quant_min"),
              pytest.mark.filterwarnings("ignore:must run observer")]
tQ = torch.ao.quantization


def _name(obj) -> str:
    """``quint8`` for either library's dtype, the class or function name otherwise, strings as they are."""
    if isinstance(obj, str):
        return obj
    return getattr(obj, "__name__", str(obj).rpartition(".")[2])


# ------------------------------------------------------------------ QuantType
def test_quant_type_values_and_names_match_torch():
    assert [(m.name, int(m)) for m in tq.QuantType] == [(m.name, int(m)) for m in tQ.QuantType]
    from torch.ao.quantization import quant_type as t_quant_type

    for ours, theirs in zip(tq.QuantType, tQ.QuantType):
        assert quant_type._get_quant_type_to_str(ours) == t_quant_type._get_quant_type_to_str(theirs)
        assert quant_type._quant_type_from_str(quant_type._get_quant_type_to_str(ours)) is ours
    with pytest.raises(ValueError, match="Unknown QuantType name 'int4'"):
        quant_type._quant_type_from_str("int4")


_QCONFIGS = ["default_qconfig", "default_dynamic_qconfig", "float16_dynamic_qconfig", "float16_static_qconfig",
             "default_per_channel_qconfig", "float_qparams_weight_only_qconfig", "default_qat_qconfig",
             "default_reuse_input_qconfig", "float_qparams_weight_only_qconfig_4bit", "default_embedding_qat_qconfig"]


@pytest.mark.parametrize("name", _QCONFIGS)
def test_qconfig_classification_matches_torch(name):
    ours, theirs = getattr(tq, name), getattr(tQ, name)
    from torch.ao.quantization import utils as t_utils

    for helper in ("activation_is_statically_quantized", "activation_is_dynamically_quantized",
                   "activation_is_int8_quantized", "activation_is_int32_quantized", "weight_is_quantized",
                   "weight_is_statically_quantized", "op_is_int8_dynamically_quantized"):
        assert getattr(utils, helper)(ours) == getattr(t_utils, helper)(theirs), helper
    assert [_name(d) if not isinstance(d, bool) else d for d in utils.get_qconfig_dtypes(ours)] == \
        [_name(d) if not isinstance(d, bool) else d for d in t_utils.get_qconfig_dtypes(theirs)]
    try:
        expected = int(t_utils.get_quant_type(theirs))
    except Exception as err:  # noqa: BLE001 - compare whatever torch raises
        with pytest.raises(type(err)):
            utils.get_quant_type(ours)
    else:
        assert int(utils.get_quant_type(ours)) == expected
    for fn in (utils.activation_dtype, utils.weight_dtype, utils.get_quant_type):
        with pytest.raises(AssertionError, match="qconfig must be provided"):
            fn(None)


# ------------------------------------------------------------------ utils
@pytest.mark.parametrize("observer", ["default_observer", "default_weight_observer",
                                      "default_per_channel_weight_observer", "default_placeholder_observer"])
def test_get_qparam_dict_matches_torch(observer):
    ours, theirs = getattr(tq, observer)(), getattr(tQ, observer)()
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    ours(toolkit.tensor(x))
    theirs(torch.tensor(x))
    got, want = utils.get_qparam_dict(ours), torch.ao.quantization.utils.get_qparam_dict(theirs)
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        if isinstance(value, torch.Tensor):
            assert_close(got[key], value, atol=1e-7, rtol=1e-6)
        elif value is None or isinstance(value, int):
            assert got[key] == value
        else:
            assert _name(got[key]) == _name(value)


def test_small_utils_match_torch():
    t_utils = torch.ao.quantization.utils
    assert utils.get_combined_dict({"a": 1, "b": 1}, {"b": 2, "c": 3}) == {"a": 1, "b": 2, "c": 3}
    for ours, theirs in [(toolkit.per_tensor_affine, torch.per_tensor_affine),
                         (toolkit.per_channel_symmetric, torch.per_channel_symmetric),
                         (toolkit.per_channel_affine_float_qparams, torch.per_channel_affine_float_qparams)]:
        assert utils.is_per_tensor(ours) == t_utils.is_per_tensor(theirs)
        assert utils.is_per_channel(ours) == t_utils.is_per_channel(theirs)
    for q_name in ("quint8", "qint8", "qint32", "quint4x2", "quint2x4", "uint8", "int8", "int16", "int32"):
        if hasattr(toolkit, q_name):
            assert _name(utils.to_underlying_dtype(getattr(toolkit, q_name))) == \
                _name(t_utils.to_underlying_dtype(getattr(torch, q_name)))
    with pytest.raises(AssertionError, match="Unsupported dtype: "):
        utils.to_underlying_dtype(toolkit.float32)
    model = toolkit.nn.Sequential(toolkit.nn.Sequential(toolkit.nn.Linear(2, 2)))
    assert utils.getattr_from_fqn(model, "0.0") is model[0][0]
    assert utils.has_no_children_ignoring_parametrizations(model[0][0])
    assert not utils.has_no_children_ignoring_parametrizations(model)
    assert utils.calculate_qmin_qmax(None, None, False, toolkit.quint4x2, False) == \
        t_utils.calculate_qmin_qmax(None, None, False, torch.quint4x2, False)


def test_get_swapped_custom_module_class():
    class Observed(toolkit.nn.Module):
        pass

    mapping = {tq.QuantType.STATIC: {toolkit.nn.LSTM: Observed}}
    lstm = toolkit.nn.LSTM(2, 2)
    assert utils.get_swapped_custom_module_class(lstm, mapping, tq.default_qconfig) is Observed
    with pytest.raises(AssertionError, match="did not find corresponding observed module class"):
        utils.get_swapped_custom_module_class(lstm, mapping, tq.default_dynamic_qconfig)


# ------------------------------------------------------------------ mapping constants and getters
def _names(mapping) -> dict:
    return {_name(k): _name(v) for k, v in mapping.items()}


def _kind(cls) -> tuple:
    """A module class named as either library files it: its name and which of the float, fused, QAT, quantized
    and dynamic packages it belongs to (module file names differ between the two)."""
    parts = cls.__module__.split(".")
    return (cls.__qualname__,) + tuple(p in parts for p in ("intrinsic", "qat", "quantized", "dynamic"))


def test_qat_module_mappings_match_torch():
    assert _names(tq.DEFAULT_QAT_MODULE_MAPPINGS) == _names(tQ.DEFAULT_QAT_MODULE_MAPPINGS)
    assert tq.get_default_qat_module_mappings() == tq.DEFAULT_QAT_MODULE_MAPPINGS
    assert tq.get_default_qat_module_mappings() is not tq.DEFAULT_QAT_MODULE_MAPPINGS


def test_static_and_dynamic_constants_are_torchs_where_modules_exist():
    """Each pair toolkit maps is one PyTorch maps (toolkit lacks some quantized modules, never maps otherwise)."""
    for ours, theirs in [("DEFAULT_STATIC_QUANT_MODULE_MAPPINGS", tQ.DEFAULT_STATIC_QUANT_MODULE_MAPPINGS),
                         ("DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS", tQ.DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)]:
        mapping = getattr(tq, ours)
        assert mapping is getattr(tq, ours)  # one dict, kept
        assert mapping, ours
        theirs_by_kind = {_kind(k): _kind(v) for k, v in theirs.items()}
        for k, v in mapping.items():
            assert theirs_by_kind.get(_kind(k)) == _kind(v), (ours, k)


def test_compare_output_list_and_operator_mappings():
    compare = tq.get_default_compare_output_module_list()
    assert toolkit.nn.Sequential in compare
    assert set(tq.DEFAULT_STATIC_QUANT_MODULE_MAPPINGS.values()) <= compare
    assert set(tq.DEFAULT_QAT_MODULE_MAPPINGS) <= compare
    assert {_name(k) for k in compare} <= {_name(k) for k in tQ.get_default_compare_output_module_list()}
    operators = tq.get_default_float_to_quantized_operator_mappings()
    assert operators == tq.DEFAULT_FLOAT_TO_QUANTIZED_OPERATOR_MAPPINGS
    assert {_name(k) for k in operators} <= {_name(k) for k in tQ.DEFAULT_FLOAT_TO_QUANTIZED_OPERATOR_MAPPINGS}
    for float_op, quantized_op in operators.items():
        assert tq.get_quantized_operator(float_op) is quantized_op
    with pytest.raises(AssertionError, match="does not have corresponding quantized op"):
        tq.get_quantized_operator(toolkit.nn.functional.gelu)
    with pytest.raises(AssertionError, match="does not have corresponding quantized op"):
        tQ.get_quantized_operator(torch.nn.functional.gelu)


def test_default_custom_config_dict_has_torchs_keys():
    config = tq.get_default_custom_config_dict()
    assert sorted(config) == sorted(tQ.get_default_custom_config_dict())
    assert config is tq.get_default_custom_config_dict()


# ------------------------------------------------------------------ qconfig dicts, embedding and 4-bit qconfigs
@pytest.mark.parametrize(("getter", "backend"), [("get_default_qconfig_dict", "x86"),
                                                 ("get_default_qconfig_dict", "qnnpack"),
                                                 ("get_default_qat_qconfig_dict", "x86"),
                                                 ("get_default_qat_qconfig_dict", "onednn")])
def test_default_qconfig_dicts_match_torch(getter, backend):
    with pytest.warns(FutureWarning, match="deprecated"):
        ours = getattr(tq, getter)(backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(tQ, getter)(backend)
    assert sorted(ours) == sorted(theirs)
    assert _qconfig_repr(ours[""]) == _qconfig_repr(theirs[""])
    assert [(_name(op), _qconfig_repr(qc)) for op, qc in ours["object_type"]] == \
        [(_name(op), _qconfig_repr(qc)) for op, qc in theirs["object_type"]]
    for key in ("module_name_regex", "module_name", "module_name_object_type_order"):
        assert ours[key] == theirs[key] == []


def _qconfig_repr(qconfig) -> str:
    """A qconfig's constructors, in words both libraries print alike (class names without their modules)."""
    text = re.sub(r"<class '[\w.]*\.(\w+)'>", r"\1", repr(qconfig))
    return text.replace("torch.", "").replace("toolkit.", "")


def test_qconfig_equals_matches_torch():
    for a, b in [("default_qconfig", "default_qconfig"), ("default_qconfig", "default_qat_qconfig"),
                 ("default_embedding_qat_qconfig", "default_embedding_qat_qconfig_4bit")]:
        assert tq.qconfig_equals(getattr(tq, a), getattr(tq, b)) == tQ.qconfig_equals(getattr(tQ, a), getattr(tQ, b))
    assert tq.QConfigAny == tq.qconfig.QConfigAny


@pytest.mark.parametrize("name", ["default_float_qparams_observer_4bit", "default_embedding_fake_quant",
                                  "default_embedding_fake_quant_4bit"])
def test_embedding_and_4bit_quantizers_match_torch(name):
    ours, theirs = getattr(tq, name)(), getattr(tQ, name)()
    x = np.random.default_rng(5).standard_normal((6, 4)).astype(np.float32)
    y, t_y = ours(toolkit.tensor(x)), theirs(torch.tensor(x))
    assert_close(y, t_y, atol=1e-6, rtol=1e-5)
    for got, want in zip(ours.calculate_qparams(), theirs.calculate_qparams()):
        assert_close(got, want, atol=1e-6, rtol=1e-5)
    assert (ours.quant_min, ours.quant_max) == (theirs.quant_min, theirs.quant_max)
