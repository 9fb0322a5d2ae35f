"""Every public name of ``torch.ao.quantization`` and ``torch.quantization`` (their packages, each eager submodule's
``__all__``, and the names ``torch.quantization``'s submodules re-export) exists in toolkit at the same path,
except the out-of-scope groups listed in ``EXCLUDED`` (and incidental imports such as ``sys``). The list is exact both ways: a listed name that toolkit
gains, or that PyTorch no longer has, fails the test, so the list is edited when either side changes."""

import importlib
import pkgutil
import types
import warnings

import pytest
import torch

import toolkit.ao.quantization as ao_quantization
import toolkit.quantization as old_quantization

# The eager-mode submodules toolkit mirrors, under both package names.
SUBMODULES = ["fake_quantize", "observer", "qconfig", "quantize", "fuser_method_mappings", "quantization_mappings",
              "stubs", "fuse_modules", "quant_type", "utils"]

# Out of scope: names PyTorch has and toolkit deliberately does not (the package docstring says why).
EXCLUDED = {
    # FX and PT2E graph mode: these rewrite torch.fx graphs, which toolkit does not have.
    "QConfigMapping", "qconfig_mapping", "get_default_qconfig_mapping", "get_default_qat_qconfig_mapping", "fx",
    "quantize_fx", "backend_config", "NodePattern", "check_node", "get_fqn_to_example_inputs", "determine_qparams",
    # The TorchScript workflow: quantization passes over scripted graphs (C++ in PyTorch), absent from toolkit's JIT.
    "quantize_jit", "quantize_dynamic_jit", "prepare_jit", "prepare_dynamic_jit", "convert_jit",
    "convert_dynamic_jit", "fuse_conv_bn_jit", "script_qconfig", "script_qconfig_dict",
    # torchao's affine quantization, which PyTorch keeps only as a bridge to torchao.
    "AffineQuantizedObserverBase", "Granularity", "MappingType", "PerAxis", "PerBlock", "PerGroup", "PerRow",
    "PerTensor", "PerToken", "TorchAODType", "ZeroPointDomain", "get_block_size",
    # Mappings to modules toolkit lacks: reference quantized modules, sparse quantized modules, QAT embeddings.
    "DEFAULT_REFERENCE_STATIC_QUANT_MODULE_MAPPINGS", "get_default_static_quant_reference_module_mappings",
    "DEFAULT_STATIC_SPARSE_QUANT_MODULE_MAPPINGS", "DEFAULT_DYNAMIC_SPARSE_QUANT_MODULE_MAPPINGS",
    "get_default_static_sparse_quant_module_mappings", "get_default_dynamic_sparse_quant_module_mappings",
    "get_embedding_qat_module_mappings", "get_embedding_static_quant_module_mappings",
    # PyTorch's notice that its own package moves to torchao.
    "DEPRECATION_WARNING",
}

# Incidental imports in PyTorch's package namespaces: not API, so neither required nor refused.
INCIDENTAL = {"sys", "torch", "Callable", "Tensor", "TypeAliasType", "ABC"}


def _load_all_submodules(package) -> None:
    """Import every public submodule of a torch package, so its ``dir()`` does not depend on what ran before."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{package.__name__}.{info.name}")


_load_all_submodules(torch.ao.quantization)
_load_all_submodules(torch.quantization)


def _public(module) -> list:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def _reexported(module) -> list:
    """The public names a ``torch.quantization.<sub>`` shim imports (it has no ``__all__``), modules aside."""
    return [n for n in _public(module) if not isinstance(getattr(module, n), types.ModuleType)]


# (toolkit module, torch module, names torch offers there)
CASES = [
    ("toolkit.ao.quantization", "torch.ao.quantization", _public(torch.ao.quantization)),
    ("toolkit.quantization", "torch.quantization", _public(torch.quantization)),
] + [
    (f"toolkit.ao.quantization.{sub}", f"torch.ao.quantization.{sub}",
     list(importlib.import_module(f"torch.ao.quantization.{sub}").__all__))
    for sub in SUBMODULES
] + [
    (f"toolkit.quantization.{sub}", f"torch.quantization.{sub}",
     _reexported(importlib.import_module(f"torch.quantization.{sub}")))
    for sub in SUBMODULES
]


@pytest.mark.parametrize(("ours", "theirs", "names"), CASES, ids=[c[1] for c in CASES])
def test_toolkit_has_every_in_scope_name(ours, theirs, names):
    module = importlib.import_module(ours)
    missing = [n for n in names if n not in EXCLUDED | INCIDENTAL and not hasattr(module, n)]
    assert not missing, f"{ours} lacks {missing} (which {theirs} has)"


def test_package_all_lists_torchs_in_scope_names():
    """``from toolkit.ao.quantization import *`` gives what torch's gives (names torch's ``__all__`` lists but
    does not define aside), and every name toolkit lists resolves."""
    wanted = {n for n in torch.ao.quantization.__all__ if hasattr(torch.ao.quantization, n)} - EXCLUDED - INCIDENTAL
    assert sorted(wanted - set(ao_quantization.__all__)) == []
    assert [n for n in ao_quantization.__all__ if not hasattr(ao_quantization, n)] == []
    for sub in SUBMODULES:
        module = importlib.import_module(f"toolkit.ao.quantization.{sub}")
        assert [n for n in getattr(module, "__all__", []) if not hasattr(module, n)] == [], sub


def test_exclusions_are_exact():
    """Each excluded name is one torch offers somewhere scanned, and toolkit has none of them (when toolkit gains
    one, it leaves the list)."""
    offered = {n for _, _, names in CASES for n in names}
    assert sorted((EXCLUDED | INCIDENTAL) - offered) == []
    toolkit_modules = {importlib.import_module(ours) for ours, _, _ in CASES}
    gained = sorted((m.__name__, n) for m in toolkit_modules for n in EXCLUDED if hasattr(m, n))
    assert gained == []


@pytest.mark.parametrize("sub", SUBMODULES)
def test_submodules_import_under_both_names(sub):
    ours = importlib.import_module(f"toolkit.ao.quantization.{sub}")
    assert importlib.import_module(f"toolkit.quantization.{sub}") is ours


def test_sibling_names_are_the_same_objects():
    """Names PyTorch keeps in one module and toolkit in a sibling are the very same objects at both paths."""
    from toolkit.ao.quantization import fake_quantize, fixed_qparams, observer, placeholder_observers

    assert fake_quantize.FixedQParamsFakeQuantize is fixed_qparams.FixedQParamsFakeQuantize
    assert observer.HistogramObserver is ao_quantization.HistogramObserver
    assert observer.NoopObserver is placeholder_observers.NoopObserver
    assert ao_quantization.DEFAULT_STATIC_QUANT_MODULE_MAPPINGS is old_quantization.DEFAULT_STATIC_QUANT_MODULE_MAPPINGS
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        observer.nothing  # noqa: B018
