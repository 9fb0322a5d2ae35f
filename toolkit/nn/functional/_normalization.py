"""``F.batch_norm``'s eps checks over the registry op, and ``F.instance_norm``, ``F.rms_norm`` and
``F.local_response_norm`` in PyTorch's signatures; layer_norm and group_norm come from the registry as is."""

from __future__ import annotations

from ...ops import api as _api
from ...tensor import Tensor

__all__ = ["batch_norm", "instance_norm", "rms_norm", "local_response_norm"]


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Normalize per channel (dim 1): batch statistics when training (updating the running ones), else running."""
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _api.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel of each sample over its spatial dims (``torch.instance_norm``)."""
    if use_input_stats:
        size = input.size()
        spatial = 1
        for i in range(2, len(size)):
            spatial *= size[i]
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"torch.Size({list(size)})")
    return _api.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)


def rms_norm(input: Tensor, normalized_shape: list[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """Root-mean-square normalization over the last ``len(normalized_shape)`` dims (``torch.rms_norm``)."""
    return _api.rms_norm(input, normalized_shape, weight, eps)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """Divide each element by ``(k + alpha * mean of squares over size neighbouring channels) ** beta``,
    composed of pad and average pooling as PyTorch composes it."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = _api.constant_pad_nd(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = _api.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = _api.constant_pad_nd(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _api.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
