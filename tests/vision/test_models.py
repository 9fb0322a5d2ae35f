"""toolkit.vision.models against torch.nn twins of torchvision's architectures (tests/vision/torchvision_reference.py):
the same state-dict keys and shapes, torchvision's published parameter counts, and the same outputs in eval
mode once torch's random weights are copied in by state dict."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from tests.vision import torchvision_reference as ref
from toolkit.vision import models

ALL = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d", "wide_resnet50_2",
       "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn", "alexnet", "mobilenet_v2",
       "densenet121", "densenet161", "densenet169", "densenet201", "squeezenet1_0", "squeezenet1_1"]

# torchvision's documented parameter counts (its weights' metadata "num_params")
PUBLISHED_PARAMS = {"resnet18": 11_689_512, "resnet34": 21_797_672, "resnet50": 25_557_032,
                    "resnet101": 44_549_160, "resnet152": 60_192_808, "resnext50_32x4d": 25_028_904,
                    "wide_resnet50_2": 68_883_240, "vgg11": 132_863_336, "vgg16": 138_357_544,
                    "vgg19_bn": 143_678_248, "alexnet": 61_100_840, "mobilenet_v2": 3_504_872,
                    "densenet121": 7_978_856, "densenet161": 28_681_000, "densenet169": 14_149_480,
                    "densenet201": 20_013_928, "squeezenet1_0": 1_248_424, "squeezenet1_1": 1_235_496}


def _to_toolkit(state: dict) -> dict:
    return {k: toolkit.from_numpy(v.detach().numpy().copy()) for k, v in state.items()}


def _shapes(state: dict) -> dict:
    return {k: tuple(v.shape) for k, v in state.items()}


@pytest.mark.parametrize("name", ALL)
def test_state_dict_keys_and_shapes_match_torchvision(name):
    mine = models.get_model(name, num_classes=10)
    theirs = ref.build(name, num_classes=10)
    assert list(mine.state_dict().keys()) == list(theirs.state_dict().keys())
    assert _shapes(mine.state_dict()) == _shapes(theirs.state_dict())


@pytest.mark.parametrize("name", [n for n in PUBLISHED_PARAMS if not n.startswith(("vgg", "wide", "resnet152"))])
def test_parameter_counts_match_torchvision(name):
    model = getattr(models, name)()
    assert sum(p.numel() for p in model.parameters()) == PUBLISHED_PARAMS[name]


@pytest.mark.parametrize("name", ["vgg16", "wide_resnet50_2", "resnet152"])
def test_parameter_counts_of_large_models(name):
    # counted from the torch twin's shapes, which test_state_dict_keys_and_shapes_match_torchvision equates
    # with toolkit's, so that these models are not built twice
    theirs = ref.build(name)
    assert sum(p.numel() for p in theirs.parameters()) == PUBLISHED_PARAMS[name]


def _randomize_norms(model: torch.nn.Module, gen: torch.Generator) -> None:
    """Batch-norm statistics and affine parameters away from 0/1, so eval mode tests the whole formula."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen, dtype=m.running_mean.dtype) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen, dtype=m.running_var.dtype) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=gen, dtype=m.weight.dtype) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=gen, dtype=m.bias.dtype) * 0.1)
                m.num_batches_tracked.fill_(7)


@pytest.mark.parametrize("name, size", [
    ("resnet18", 64), ("resnet50", 64), ("resnext50_32x4d", 64), ("vgg11_bn", 32), ("vgg16", 32), ("alexnet", 64),
    ("mobilenet_v2", 64), ("densenet121", 64), ("squeezenet1_0", 64), ("squeezenet1_1", 64),
])
def test_outputs_match_in_eval_mode_float64(name, size):
    gen = torch.Generator().manual_seed(0)
    theirs = ref.build(name, num_classes=10).double().eval()
    _randomize_norms(theirs, gen)
    mine = models.get_model(name, num_classes=10).double().eval()
    result = mine.load_state_dict(_to_toolkit(theirs.state_dict()), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    x = torch.randn(2, 3, size, size, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        expected = theirs(x)
    with toolkit.no_grad():
        actual = mine(toolkit.from_numpy(x.numpy().copy()))
    assert actual.shape == (2, 10)
    # float64 end to end; the largest fan-in among the layers (3x3x512 convs, VGG's 25088-wide linear)
    # bounds the accumulation length of each step
    assert_close(actual, expected, accum=25088)
    # a torchvision-shaped state dict round-trips: saved by toolkit, keys and values as loaded
    back = mine.state_dict()
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(back[k].numpy(), v.numpy())


def test_train_mode_forward_and_backward():
    model = models.resnet18(num_classes=4)
    out = model(toolkit.randn(2, 3, 32, 32))
    assert out.shape == (2, 4)
    out.sum().backward()
    assert model.conv1.weight.grad is not None and model.fc.bias.grad.shape == (4,)
    assert int(model.bn1.num_batches_tracked) == 1


def test_initialization_follows_torchvision():
    model = models.resnet18(zero_init_residual=True)
    assert float(model.layer1[0].bn2.weight.abs().sum()) == 0.0
    assert float(model.bn1.weight.sum()) == 64.0
    std = float(model.conv1.weight.std())
    assert abs(std - (2.0 / (64 * 49)) ** 0.5) < 0.002  # Kaiming normal, fan-out, ReLU gain
    vgg = models.vgg11(num_classes=3)
    assert float(vgg.classifier[6].bias.abs().sum()) == 0.0
    sq = models.squeezenet1_1()
    assert float(sq.classifier[1].weight.std()) < 0.02  # the final conv: normal(0, 0.01)


def test_weights_other_than_none_raise():
    for weights in ["DEFAULT", "IMAGENET1K_V1", object()]:
        with pytest.raises(RuntimeError, match=r"does not download.*load_state_dict\(toolkit\.load\(path\)\)"):
            models.resnet18(weights=weights)
    with pytest.raises(RuntimeError, match="does not download"), pytest.warns(UserWarning, match="deprecated"):
        models.mobilenet_v2(pretrained=True)
    with pytest.raises(RuntimeError, match="does not download"), pytest.warns(UserWarning, match="deprecated"):
        models.alexnet(True)
    with pytest.warns(UserWarning, match="'pretrained' is deprecated"):
        model = models.squeezenet1_1(pretrained=False, num_classes=5)
    assert model.classifier[1].out_channels == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        models.alexnet(weights=None, progress=False, num_classes=2)


def test_registry_and_errors():
    assert {"resnet18", "vgg16_bn", "densenet201", "mobilenet_v2", "squeezenet1_0", "alexnet"} <= set(models.list_models())
    assert isinstance(models.get_model("ResNet34", num_classes=3), models.ResNet)
    with pytest.raises(ValueError, match="Unknown model"):
        models.get_model("resnet7")
    with pytest.raises(ValueError, match="Unsupported SqueezeNet version"):
        models.SqueezeNet("2_0")
    with pytest.raises(ValueError, match="BasicBlock only supports groups=1"):
        models.resnet18(groups=2)
    with pytest.raises(ValueError, match="stride should be 1 or 2"):
        models.InvertedResidual(8, 8, 3, 6)


def test_densenet_loads_torchvision_checkpoint_key_names():
    # torchvision's published DenseNet files name denselayer parameters "norm.1", "conv.2", ...
    theirs = ref.build("densenet121", num_classes=3)
    # (files from before batch norm counted its batches, so without num_batches_tracked)
    old = {k.replace("norm1.", "norm.1.").replace("conv2.", "conv.2.") if "denselayer" in k else k: v
           for k, v in theirs.state_dict().items() if not k.endswith("num_batches_tracked")}
    assert any(".norm.1." in k for k in old)
    mine = models.densenet121(num_classes=3)
    mine.load_state_dict(_to_toolkit(old))
    w = theirs.features.denseblock1.denselayer1.norm1.weight
    np.testing.assert_array_equal(mine.features.denseblock1.denselayer1.norm1.weight.detach().numpy(),
                                  w.detach().numpy())
