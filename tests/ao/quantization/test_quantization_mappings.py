"""The module mappings against torch's: which float classes are quantizable (the propagation list), the QAT
mapping, and the fixed-range fake quantization of sigmoid-like modules. The int8 targets are compared by name
where their packages define them."""

import pytest
import torch

import toolkit
from toolkit.ao import quantization as tq
from toolkit.ao.quantization.quantization_mappings import DEFAULT_MODULE_TO_ACT_POST_PROCESS

tQ = torch.ao.quantization


def test_propagation_list_names_torch_classes():
    ours = {(c.__name__, "intrinsic" in c.__module__, "qat" in c.__module__)
            for c in tq.get_default_qconfig_propagation_list()}
    theirs = {(c.__name__, "intrinsic" in c.__module__, "qat" in c.__module__)
              for c in tQ.get_default_qconfig_propagation_list()
              if "quantizable" not in c.__module__ and "functional_modules" not in c.__module__
              and "qat.dynamic" not in c.__module__ and "qat.modules.embedding" not in c.__module__}
    assert theirs <= ours


def test_qat_mapping_matches_torch():
    ours = {(k.__name__, "intrinsic" in k.__module__): (v.__name__, "intrinsic" in v.__module__)
            for k, v in tq.get_default_qat_module_mappings().items()}
    theirs = {(k.__name__, "intrinsic" in k.__module__): (v.__name__, "intrinsic" in v.__module__)
              for k, v in tQ.get_default_qat_module_mappings().items()}
    assert ours == theirs


def test_static_and_dynamic_targets_are_the_torch_names():
    for ours, theirs in ((tq.get_default_static_quant_module_mappings(), tQ.get_default_static_quant_module_mappings()),
                         (tq.get_default_dynamic_quant_module_mappings(),
                          tQ.get_default_dynamic_quant_module_mappings())):
        by_name = {(k.__name__, "intrinsic" in k.__module__ or "qat" in k.__module__): v.__name__
                   for k, v in theirs.items()}
        for k, v in ours.items():
            assert v.__name__ == by_name[(k.__name__, "intrinsic" in k.__module__ or "qat" in k.__module__)]


def test_special_activation_post_processes():
    assert {c.__name__ for c in DEFAULT_MODULE_TO_ACT_POST_PROCESS} == {"Hardsigmoid", "Sigmoid", "Softmax", "Tanh"}
    fq = DEFAULT_MODULE_TO_ACT_POST_PROCESS[toolkit.nn.Tanh]()
    assert float(fq.scale) == 2.0 / 256.0 and int(fq.zero_point) == 128


def test_class_lookups_refuse_unmapped_classes():
    with pytest.raises(AssertionError, match="does not have a corresponding quantized module class"):
        tq.get_static_quant_module_class(toolkit.nn.Softplus)
    with pytest.raises(AssertionError, match="does not have a corresponding quantized module class"):
        tq.get_dynamic_quant_module_class(toolkit.nn.Softplus)
