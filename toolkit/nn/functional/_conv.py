"""Functional convolutions: the registry's ``torch.*`` convolutions, which ``torch.nn.functional`` also names."""

from ...ops import api as _api

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc"]

conv1d = _api.function_for("conv1d")
conv2d = _api.function_for("conv2d")
conv3d = _api.function_for("conv3d")
conv_transpose1d = _api.function_for("conv_transpose1d")
conv_transpose2d = _api.function_for("conv_transpose2d")
conv_transpose3d = _api.function_for("conv_transpose3d")
conv_tbc = _api.function_for("conv_tbc")
