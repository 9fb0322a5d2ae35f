"""``toolkit.ao``: architecture optimization, as ``torch.ao``; today its quantization tools."""

from . import quantization  # noqa: F401
