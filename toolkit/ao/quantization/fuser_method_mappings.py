"""How each sequence of module types fuses, as ``torch.ao.quantization.fuser_method_mappings`` lists it: in eval
mode conv-bn (and linear-bn) fold the BatchNorm into the weights with ``fuse_conv_bn_eval``'s arithmetic; in
training (``is_qat``) they become the ``nni`` fused modules that QAT converts; conv-relu, linear-relu and bn-relu
always become ``nni`` sequences."""

from __future__ import annotations

import itertools

from ... import nn
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from ..nn import intrinsic as nni
from .utils import MatchAllNode


def _check_bn_for_qat(bn, out_channels: int, what: str) -> None:
    if bn.num_features != out_channels:
        raise AssertionError(f"Output channel of {what} must match num_features of {type(bn).__name__}")
    if not bn.affine:
        raise AssertionError(f"Only support fusing {type(bn).__name__} with affine set to True")
    if not bn.track_running_stats:
        raise AssertionError(f"Only support fusing {type(bn).__name__} with tracking_running_stats set to True")


def fuse_conv_bn(is_qat: bool, conv, bn):
    """Conv and BatchNorm: ``nni.ConvBn{n}d`` for QAT, else the conv with the BatchNorm folded in."""
    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if not is_qat:
        return fuse_conv_bn_eval(conv, bn)
    _check_bn_for_qat(bn, conv.out_channels, type(conv).__name__)
    fused = {nn.Conv1d: nni.ConvBn1d, nn.Conv2d: nni.ConvBn2d, nn.Conv3d: nni.ConvBn3d}.get(type(conv))
    if fused is None:
        raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn)}")
    return fused(conv, bn)


def fuse_conv_bn_relu(is_qat: bool, conv, bn, relu):
    """Conv, BatchNorm and ReLU: ``nni.ConvBnReLU{n}d`` for QAT, else ``nni.ConvReLU{n}d`` over the folded conv."""
    if not conv.training == bn.training == relu.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        _check_bn_for_qat(bn, conv.out_channels, type(conv).__name__)
        fused = {nn.Conv1d: nni.ConvBnReLU1d, nn.Conv2d: nni.ConvBnReLU2d, nn.Conv3d: nni.ConvBnReLU3d}.get(type(conv))
        if fused is None:
            raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn, relu)}")
        return fused(conv, bn, relu)
    fused = {nn.Conv1d: nni.ConvReLU1d, nn.Conv2d: nni.ConvReLU2d, nn.Conv3d: nni.ConvReLU3d}.get(type(conv))
    if fused is None:
        raise NotImplementedError(f"Cannot fuse eval modules: {(conv, bn, relu)}")
    return fused(fuse_conv_bn_eval(conv, bn), relu)


def fuse_linear_bn(is_qat: bool, linear, bn):
    """Linear and BatchNorm1d: ``nni.LinearBn1d`` for QAT, else the Linear with the BatchNorm folded in."""
    if linear.training != bn.training:
        raise AssertionError("Linear and BN both must be in the same mode (train or eval).")
    if not is_qat:
        return fuse_linear_bn_eval(linear, bn)
    _check_bn_for_qat(bn, linear.out_features, "Linear")
    return nni.LinearBn1d(linear, bn)


def fuse_convtranspose_bn(is_qat: bool, convt, bn):
    """A transposed conv and BatchNorm: folded in eval mode; refused for QAT, as PyTorch refuses it."""
    if convt.training != bn.training:
        raise AssertionError("ConvTranspose and BN both must be in the same mode (train or eval).")
    if is_qat:
        raise Exception("Fusing ConvTranspose+BatchNorm not yet supported in QAT.")  # noqa: TRY002 - PyTorch's type
    return fuse_conv_bn_eval(convt, bn, transpose=True)


def _sequential_wrapper2(sequential):
    """A fuser that ignores ``is_qat`` and wraps its two modules in ``sequential``."""

    def fuser_method(is_qat, m1, m2):
        return sequential(m1, m2)

    return fuser_method


_DEFAULT_OP_LIST_TO_FUSER_METHOD = {
    (nn.Conv1d, nn.BatchNorm1d): fuse_conv_bn,
    (nn.Conv1d, nn.BatchNorm1d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv2d, nn.BatchNorm2d): fuse_conv_bn,
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv3d, nn.BatchNorm3d): fuse_conv_bn,
    (nn.Conv3d, nn.BatchNorm3d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv1d, nn.ReLU): _sequential_wrapper2(nni.ConvReLU1d),
    (nn.Conv2d, nn.ReLU): _sequential_wrapper2(nni.ConvReLU2d),
    (nn.Conv3d, nn.ReLU): _sequential_wrapper2(nni.ConvReLU3d),
    (nn.Linear, nn.BatchNorm1d): fuse_linear_bn,
    (nn.Linear, nn.ReLU): _sequential_wrapper2(nni.LinearReLU),
    (nn.BatchNorm2d, nn.ReLU): _sequential_wrapper2(nni.BNReLU2d),
    (nn.BatchNorm3d, nn.ReLU): _sequential_wrapper2(nni.BNReLU3d),
    (nn.ConvTranspose1d, nn.BatchNorm1d): fuse_convtranspose_bn,
    (nn.ConvTranspose2d, nn.BatchNorm2d): fuse_convtranspose_bn,
    (nn.ConvTranspose3d, nn.BatchNorm3d): fuse_convtranspose_bn,
}


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The fuser for the tuple of module types ``op_list``, or None."""
    mapping = {**_DEFAULT_OP_LIST_TO_FUSER_METHOD, **(additional_fuser_method_mapping or {})}
    fuser = mapping.get(op_list)
    if fuser is None:
        raise AssertionError(f"did not find fuser method for: {op_list} ")
    return fuser


def _get_valid_patterns(op_pattern) -> list:
    """``op_pattern`` and every variant of it with some elements replaced by ``MatchAllNode``, most specific
    first: ``(nn.ReLU, nn.Conv2d)`` gives ``(ReLU, Conv2d), (ReLU, MatchAllNode), (MatchAllNode, Conv2d),
    (MatchAllNode, MatchAllNode)``."""
    if isinstance(op_pattern, (tuple, list)):
        return list(itertools.product(*(_get_valid_patterns(sub) for sub in op_pattern)))
    return [op_pattern, MatchAllNode]


def get_fuser_method_new(op_pattern, fuser_method_mapping: dict):
    """The fuser ``fuser_method_mapping`` registers for ``op_pattern``, where a registered pattern may use
    ``MatchAllNode`` for any position."""
    patterns = _get_valid_patterns(op_pattern)
    for pattern in patterns:
        fuser_method = fuser_method_mapping.get(pattern)
        if fuser_method is not None:
            return fuser_method
    # PyTorch's message names the last (all-wildcard) pattern it tried
    raise AssertionError(f"did not find fuser method for: {patterns[-1]} ")


__all__ = ["fuse_conv_bn", "fuse_conv_bn_relu", "fuse_convtranspose_bn", "fuse_linear_bn", "get_fuser_method",
           "get_fuser_method_new"]
