"""Quantized tensors built in PyTorch, carried over to toolkit with the same integers and parameters, so a
quantized op's result can be compared integer for integer."""

from __future__ import annotations

import warnings

import torch

import toolkit

warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
warnings.filterwarnings("ignore", message=".*per_channel.*")


def tk(t: torch.Tensor) -> toolkit.Tensor:
    """A toolkit twin of a strided or quantized torch tensor."""
    if not t.is_quantized:
        return toolkit.tensor(t.detach().numpy())
    ints = toolkit.tensor(t.int_repr().numpy())
    if t.qscheme() == torch.per_tensor_affine:
        return toolkit._make_per_tensor_quantized_tensor(ints, t.q_scale(), t.q_zero_point())
    return toolkit._make_per_channel_quantized_tensor(ints, tk(t.q_per_channel_scales()),
                                                      tk(t.q_per_channel_zero_points()), t.q_per_channel_axis())


def qweight(n: int, k: int, per_channel: bool, zero_point: int = 0, seed: int = 0) -> torch.Tensor:
    """A qint8 weight (n, k): per tensor (scale 0.03) or per output channel (scales 0.01..0.06)."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n, k, generator=g)
    if per_channel:
        scales = torch.rand(n, generator=g, dtype=torch.float64) * 0.05 + 0.01
        return torch.quantize_per_channel(w, scales, torch.full((n,), zero_point, dtype=torch.long), 0, torch.qint8)
    return torch.quantize_per_tensor(w, 0.03, zero_point, torch.qint8)


def qinput(*shape: int, scale: float = 0.05, zero_point: int = 120, seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.quantize_per_tensor(torch.randn(*shape, generator=g) * 2, scale, zero_point, torch.quint8)
