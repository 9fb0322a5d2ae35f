"""``DataParallel`` on a CPU-only toolkit: no devices to split the batch over, so it runs the module as is
(PyTorch's DataParallel does the same when no GPU is visible)."""

from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wraps ``module``; ``forward`` calls it directly (``.module`` holds it, state_dict keys gain ``module.``)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim
        if device_ids:
            raise RuntimeError(f"DataParallel: device_ids {list(device_ids)} given, but toolkit runs data "
                               "parallelism across processes on CPU; use DistributedDataParallel")

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
