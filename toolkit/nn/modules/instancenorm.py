"""InstanceNorm1d/2d/3d: per-sample, per-channel normalization, with optional running statistics.

They share batch norm's parameters and buffers (``_NormBase``) but default to ``affine=False`` and
``track_running_stats=False``, and accept unbatched inputs (one dim fewer).
"""

from __future__ import annotations

import warnings

from ...tensor import Tensor
from .. import functional as F
from .batchnorm import _LazyNormBase
from .normalization import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _no_batch_dim = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        dims = (self._no_batch_dim, self._no_batch_dim + 1)
        if input.dim() not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        """Checkpoints from before running statistics were optional carry them; report and drop them."""
        version = local_metadata.get("version", None) if local_metadata else None
        if version is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. "
                    f"If state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} "
                    "does not track running stats by default since 0.4.0. Please remove these keys from "
                    f"state_dict. If the running stats are actually needed, instead set track_running_stats=True "
                    f"in {klass} to enable them. See the documentation of {klass} for details.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features"
                                 f" ({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L) inputs."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W) inputs."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W) inputs."""

    _no_batch_dim = 4


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm1d whose ``num_features`` comes from its first input."""

    cls_to_become = InstanceNorm1d
    _no_batch_dim = 2


class LazyInstanceNorm2d(LazyInstanceNorm1d):
    """An InstanceNorm2d whose ``num_features`` comes from its first input."""

    cls_to_become = InstanceNorm2d
    _no_batch_dim = 3


class LazyInstanceNorm3d(LazyInstanceNorm1d):
    """An InstanceNorm3d whose ``num_features`` comes from its first input."""

    cls_to_become = InstanceNorm3d
    _no_batch_dim = 4
