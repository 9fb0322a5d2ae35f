"""``toolkit.ao.nn.qat``: layers that fake-quantize their weights while they train (``torch.ao.nn.qat``);
``prepare_qat`` swaps them in and ``convert`` turns them into int8 modules."""

from .modules import Conv1d, Conv2d, Conv3d, Linear

__all__ = ["Conv1d", "Conv2d", "Conv3d", "Linear"]
