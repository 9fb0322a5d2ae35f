"""The channel rearrangements written as compositions (``composite=True``): on CUDA tensors they match the CPU,
and a scripted function using them runs forward and backward with inputs that require grad.

Scripted-graph autodiff replays eager autograd over the composite's parts, so
a composite whose parts saved internal tensors would fail there; these run the
scripted function several times (the profiling executor specializes after the
first runs) and compare its gradients with eager ones.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.ops import registry

from .helpers import compare, host, needs_cuda, sample_accum, to_device

COMPOSITES = ("pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle")


@toolkit.jit.script
def _pixel_shuffle(x):
    return toolkit.pixel_shuffle(x * 2.0, 2)


@toolkit.jit.script
def _pixel_unshuffle(x):
    return toolkit.pixel_unshuffle(x * 2.0, 2)


@toolkit.jit.script
def _channel_shuffle(x):
    return toolkit.channel_shuffle(x * 2.0, 3)


@toolkit.jit.script
def _native_channel_shuffle(x):
    return toolkit.native_channel_shuffle(x * 2.0, 3)


SCRIPTED = {"pixel_shuffle": (_pixel_shuffle, (1, 8, 2, 3)), "pixel_unshuffle": (_pixel_unshuffle, (1, 2, 4, 6)),
            "channel_shuffle": (_channel_shuffle, (2, 6, 2)),
            "native_channel_shuffle": (_native_channel_shuffle, (2, 6, 2))}


def test_these_ops_are_composites():
    for name in COMPOSITES:
        assert registry.get(name).composite is not None, name


@pytest.mark.parametrize("name", COMPOSITES)
def test_scripted_composite_runs_forward_and_backward(name):
    fn, shape = SCRIPTED[name]
    seed = toolkit.randn(*shape, dtype=toolkit.float64)
    weights = toolkit.randn(*fn(seed).shape, dtype=toolkit.float64)
    eager = seed.clone().requires_grad_()
    (getattr(toolkit, name)(eager * 2.0, 2 if "pixel" in name else 3) * weights).sum().backward()
    for _ in range(3):
        x = seed.clone().requires_grad_()
        (fn(x) * weights).sum().backward()
        assert toolkit.allclose(x.grad, eager.grad)


def _cases():
    if not toolkit.cuda.is_available():
        return []
    return [pytest.param(name, i, id=f"{name}-{i}") for name in COMPOSITES for i in range(2)]


@needs_cuda
@pytest.mark.parametrize("name,i", _cases())
def test_composite_on_cuda_matches_cpu(name, i):
    o = registry.get(name)
    args, kwargs = list(o.samples(np.random.default_rng(0)))[i]
    expected = o(*to_device(args, "cpu"), **kwargs)
    got = o(*to_device(args, "cuda"), **kwargs)
    assert got.is_cuda
    compare(host(expected), host(got), name, sample_accum(args))
