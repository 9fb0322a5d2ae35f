"""``toolkit.vision.models``: torchvision's image classification architectures, built from ``toolkit.nn``.

Module names and parameter shapes are torchvision's, so weights saved from torchvision load with
``strict=True``. Nothing is downloaded: builders take ``weights=None`` only::

    model = models.resnet50(num_classes=10)
    model.load_state_dict(toolkit.load("resnet50.pth"))   # a state dict file you already have
"""

from ._api import get_model, get_model_builder, list_models
from .alexnet import AlexNet, alexnet
from .densenet import DenseNet, densenet121, densenet161, densenet169, densenet201
from .mobilenetv2 import InvertedResidual, MobileNetV2, mobilenet_v2
from .resnet import (
                     BasicBlock,
                     Bottleneck,
                     ResNet,
                     resnet18,
                     resnet34,
                     resnet50,
                     resnet101,
                     resnet152,
                     resnext50_32x4d,
                     resnext101_32x8d,
                     resnext101_64x4d,
                     wide_resnet50_2,
                     wide_resnet101_2,
)
from .squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1
from .vgg import VGG, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn

__all__ = ["AlexNet", "BasicBlock", "Bottleneck", "DenseNet", "InvertedResidual", "MobileNetV2", "ResNet",
           "SqueezeNet", "VGG", "alexnet", "densenet121", "densenet161", "densenet169", "densenet201", "get_model",
           "get_model_builder", "list_models", "mobilenet_v2", "resnet18", "resnet34", "resnet50", "resnet101",
           "resnet152", "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d", "squeezenet1_0",
           "squeezenet1_1", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
           "wide_resnet50_2", "wide_resnet101_2"]
