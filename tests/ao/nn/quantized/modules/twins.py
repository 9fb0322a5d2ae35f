"""Float modules built identically in toolkit and PyTorch, observed identically and converted with each library's
``from_float``; and PyTorch state dicts carried over to toolkit tensors."""

from __future__ import annotations

import numpy as np
import torch

import toolkit
from tests.quantization.torch_twins import tk


def _copy_params(ours, theirs) -> None:
    with torch.no_grad(), toolkit.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            p.copy_(toolkit.tensor(q.detach().numpy()))


def qconfigs(per_channel: bool):
    """(toolkit's, PyTorch's) qconfig: MinMax activations (quint8), per-tensor or per-channel qint8 weights."""
    pair = []
    for Q in (toolkit.ao.quantization, torch.ao.quantization):
        weight = Q.default_per_channel_weight_observer if per_channel else Q.default_weight_observer
        pair.append(Q.QConfig(activation=Q.MinMaxObserver.with_args(dtype=Q.MinMaxObserver().dtype), weight=weight))
    return pair


def observed_pair(make, per_channel: bool, calibration: np.ndarray):
    """``make(lib)`` in both libraries with PyTorch's weights copied over, a qconfig and an output observer
    that has seen PyTorch's output for ``calibration``: what prepare and calibration leave for ``from_float``.
    Both observers see the same numbers (the float layers' outputs may differ in the last bit, and with them
    the observed range)."""
    theirs = make(torch)
    ours = make(toolkit)
    _copy_params(ours, theirs)
    with torch.no_grad():
        out = theirs(torch.tensor(calibration)).numpy()
    for mod, qconfig, lib in zip((ours, theirs), qconfigs(per_channel), (toolkit, torch)):
        mod.qconfig = qconfig
        mod.activation_post_process = qconfig.activation()
        mod.activation_post_process(lib.tensor(out))
    return ours, theirs


def state_dict_to_toolkit(sd) -> dict:
    """A PyTorch state dict with toolkit tensors (tuples of tensors too, dtypes as toolkit's); metadata kept."""
    def conv(v):
        if isinstance(v, torch.Tensor):
            return tk(v)
        if isinstance(v, tuple):
            return tuple(conv(e) for e in v)
        if isinstance(v, torch.dtype):
            return getattr(toolkit, str(v).split(".")[1])
        return v

    out = type(sd)((k, conv(v)) for k, v in sd.items())
    if hasattr(sd, "_metadata"):
        out._metadata = sd._metadata
    return out


def assert_q_equal(ours, theirs) -> None:
    """Same quantized integers, dtype and parameters."""
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    if theirs.qscheme() == torch.per_tensor_affine:
        assert ours.q_scale() == theirs.q_scale() and ours.q_zero_point() == theirs.q_zero_point()
    else:
        np.testing.assert_array_equal(ours.q_per_channel_scales().numpy(), theirs.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(ours.q_per_channel_zero_points().numpy(),
                                      theirs.q_per_channel_zero_points().numpy())
