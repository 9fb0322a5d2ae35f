"""Compositions of registered ops (``composite=True``) run on CUDA tensors and match the CPU, on their samples.

A composite op has no kernel of its own: it runs the ops it is written with, so on a CUDA tensor it runs their
CUDA kernels. Generated from the registry for the op families whose compositions replaced a CPU-only kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.ops import registry

from .helpers import compare, host, needs_cuda, sample_accum, to_device

pytestmark = needs_cuda
SAMPLES_PER_OP = 2

# The op families (modules under toolkit/ops) whose composite ops are checked here.
FAMILIES = ("view_copies", "shape_join", "shape_order", "products", "distances", "matrix_functions",
            "tensor_solves", "linalg_structure", "pooling_1d", "pooling_adaptive", "combinatorics")


def _composites():
    if not toolkit.cuda.is_available():
        return []
    return [o for o in registry.all_ops()
            if o.composite is not None and o.samples is not None and o.kind is not registry.INPLACE
            and o.composite.__module__.rsplit(".", 1)[-1] in FAMILIES]


def _cases():
    for o in _composites():
        for i, _ in zip(range(SAMPLES_PER_OP), o.samples(np.random.default_rng(0))):
            yield pytest.param(o, i, id=f"{o.schema.full_name}-{i}")


def _sample(o, i):
    for k, s in enumerate(o.samples(np.random.default_rng(0))):
        if k == i:
            return s
    raise IndexError(i)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("o,i", list(_cases()))
def test_composite_on_cuda_matches_cpu(o, i):
    args, kwargs = _sample(o, i)
    try:
        expected = o(*to_device(args, "cpu"), **kwargs)
    except Exception as e:  # the CUDA run must refuse the same input the same way
        with pytest.raises(type(e)):
            o(*to_device(args, "cuda"), **kwargs)
        return
    got = o(*to_device(args, "cuda"), **kwargs)
    for t in (got if isinstance(got, (list, tuple)) else (got,)):
        if isinstance(t, toolkit.Tensor):
            assert t.is_cuda, f"{o.name} returned a {t.device} tensor"
    compare(host(expected), host(got), o.schema.full_name, sample_accum(args))
