"""Batch norm under PyTorch's module path (``torch.nn.modules.batchnorm``), and SyncBatchNorm.

BatchNorm1d/2d/3d live in ``normalization``; they are named here too so checkpoints that pickle
``torch.nn.modules.batchnorm.BatchNorm2d`` resolve. SyncBatchNorm normalizes with statistics summed over
the ranks of a toolkit process group; in a single process (or outside training) it is batch norm.
"""

from __future__ import annotations

from typing import Any

from ... import distributed as dist
from ..._core import dtypes
from ...autograd import Function, no_grad
from ...ops import api as _api
from ...tensor import Tensor
from .. import functional as F
from .lazy import LazyModuleMixin, UninitializedBuffer, UninitializedParameter
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase  # noqa: F401 (PyTorch's path)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "SyncBatchNorm"]


def _reduced_dims(input: Tensor) -> list[int]:
    return [0] + list(range(2, input.dim()))


def _all_reduce_sum(t: Tensor, process_group) -> Tensor:
    dist.all_reduce(t, op=dist.ReduceOp.SUM, group=process_group)
    return t


class _SyncBatchNormFunction(Function):
    """Batch norm whose per-channel sums (forward) and gradient sums (backward) are all-reduced over the group."""

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, process_group, world_size):
        dims = _reduced_dims(input)
        channels = input.size(1)
        local_count = input.numel() // channels
        stats = _api.cat([input.sum(dims), (input * input).sum(dims),
                          _api.full((1,), float(local_count), dtype=input.dtype)])
        stats = _all_reduce_sum(stats, process_group)
        count = float(stats[2 * channels])
        mean = stats[:channels] / count
        var = stats[channels:2 * channels] / count - mean * mean
        invstd = (var + eps).rsqrt()
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var * (count / max(count - 1, 1)) * momentum)
        shape = [1, channels] + [1] * (input.dim() - 2)
        xhat = (input - mean.reshape(shape)) * invstd.reshape(shape)
        ctx.save_for_backward(xhat, weight, invstd)
        ctx.process_group, ctx.count, ctx.shape = process_group, count, shape
        out = xhat
        if weight is not None:
            out = out * weight.reshape(shape)
        if bias is not None:
            out = out + bias.reshape(shape)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        xhat, weight, invstd = ctx.saved_tensors
        dims, shape = _reduced_dims(grad_output), ctx.shape
        sum_dy = grad_output.sum(dims)
        sum_dy_xhat = (grad_output * xhat).sum(dims)
        channels = sum_dy.numel()
        totals = _all_reduce_sum(_api.cat([sum_dy, sum_dy_xhat]).detach().clone(), ctx.process_group)
        mean_dy = (totals[:channels] / ctx.count).reshape(shape)
        mean_dy_xhat = (totals[channels:] / ctx.count).reshape(shape)
        scale = invstd if weight is None else invstd * weight
        grad_input = (grad_output - mean_dy - xhat * mean_dy_xhat) * scale.reshape(shape)
        grad_weight = sum_dy_xhat if weight is not None else None
        grad_bias = sum_dy if weight is not None else None
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """Batch/instance norm whose ``num_features`` is dim 1 of the first input."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _api.zeros((), dtype=dtypes.int64, device=device)

    def reset_parameters(self) -> None:
        """The norm's initialization, once the shapes are known."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """``num_features = input.shape[1]``; materialize the affine parameters and running statistics."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class SyncBatchNorm(_BatchNorm):
    """Batch norm over N-d inputs whose training statistics span every rank of ``process_group``."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any | None = None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        running_mean = self.running_mean if keep else None
        running_var = self.running_var if keep else None
        world_size = 1
        process_group = None
        if bn_training and self.training and dist.is_available() and dist.is_initialized():
            process_group = self.process_group or dist.group.WORLD
            world_size = dist.get_world_size(process_group)
        if world_size == 1:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training, factor,
                                self.eps)
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean, running_var, self.eps,
                                            factor, process_group, world_size)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with every BatchNorm*D replaced by a SyncBatchNorm sharing its parameters and buffers."""
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                module_output.weight = module.weight
                module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
