"""The quantization-aware-training modules: float layers with fake-quantized weights."""

from .conv import Conv1d, Conv2d, Conv3d
from .linear import Linear

__all__ = ["Conv1d", "Conv2d", "Conv3d", "Linear"]
