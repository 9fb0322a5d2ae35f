"""Float modules built twice, in toolkit and in PyTorch with the same weights and the default dynamic qconfig,
for the dynamic quantized modules' comparisons."""

from __future__ import annotations

import numpy as np
import torch

import toolkit
from toolkit.ao.quantization.qconfig import default_dynamic_qconfig

torch.backends.quantized.engine = "x86"


def float_twins(name: str, *args, seed: int = 0, **kwargs):
    """``(ours, theirs)``: ``toolkit.nn.<name>`` and ``torch.nn.<name>`` with torch's initial weights copied into
    ours, each carrying its library's ``default_dynamic_qconfig``."""
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(toolkit.nn, name)(*args, **kwargs)
    ours.load_state_dict({k: toolkit.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    theirs.qconfig = torch.ao.quantization.default_dynamic_qconfig
    ours.qconfig = default_dynamic_qconfig
    return ours, theirs


def inputs(shape, seed: int = 1, scale: float = 1.0):
    """``(ours, theirs)``: the same float32 normal sample as a toolkit and a torch tensor."""
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    return toolkit.tensor(x), torch.tensor(x)


def assert_same_qweight(ours, theirs) -> None:
    """Two quantized weights with the same integers, scheme and parameters."""
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    assert ours.qscheme().name == str(theirs.qscheme()).removeprefix("torch.")
    if theirs.qscheme() == torch.per_tensor_affine:
        assert ours.q_scale() == theirs.q_scale()
        assert ours.q_zero_point() == theirs.q_zero_point()
    else:
        np.testing.assert_array_equal(ours.q_per_channel_scales().numpy(), theirs.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(ours.q_per_channel_zero_points().numpy(),
                                      theirs.q_per_channel_zero_points().numpy())
