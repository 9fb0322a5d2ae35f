"""DLPack and cuda tensors: numba.cuda cannot export or import DLPack, so both directions say what to do."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from .helpers import needs_cuda

pytestmark = needs_cuda


def test_cuda_tensor_export_is_refused_with_advice():
    x = toolkit.ones(3, device="cuda")
    assert x.__dlpack_device__() == (2, 0)
    with pytest.raises(BufferError, match=r"cuda:0 tensor through DLPack.*\.cpu\(\)"):
        x.__dlpack__()
    np.testing.assert_array_equal(torch.from_dlpack(x.cpu()).numpy(), [1, 1, 1])


def test_from_dlpack_to_cuda_copies_when_allowed():
    t = toolkit.from_dlpack(torch.arange(4.0), device="cuda")
    assert t.is_cuda
    np.testing.assert_array_equal(t.cpu().numpy(), [0, 1, 2, 3])
