"""Complex graphs in compiled plans: complex values are never fused (the generator's dtypes are real) and
never handed to kernels as raw arrays (a lazy conjugate must be resolved by dispatch), so plans equal eager."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit

from ..fusion_helpers import fused_nodes, groups


def _complex(seed: int, *shape):
    rng = np.random.default_rng(seed)
    return toolkit.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).to(toolkit.complex64)


def mixed(x, z):
    return (x * x + 1).sin().exp() * z.conj() + z.abs()


def conj_chain(z, w):
    return (z * w + 1.5).exp() * z.conj() - w.abs() + toolkit.sgn(z) * toolkit.sinc(w.conj())


@pytest.mark.parametrize("compile_with", ["trace", "script"])
def test_complex_graphs_run_unfused_and_equal_eager(compile_with):
    z, w = _complex(0, 3, 4), _complex(1, 3, 4)
    x = toolkit.randn(3, 4)
    for fn, args in ((conj_chain, (z, w)), (mixed, (x, z))):
        compiled = toolkit.jit.trace(fn, args) if compile_with == "trace" else toolkit.jit.script(fn)
        for _ in range(3):
            toolkit.testing.assert_close(compiled(*args), fn(*args))
        plan = compiled.graph_for(*args)
        assert all(not m.outputs[0].type.dtype.is_complex for m in fused_nodes(plan))
        if fn is mixed:
            assert len(groups(plan)) == 1  # the real chain still fuses


def test_a_conjugate_input_is_resolved_in_a_plan():
    z, w = _complex(2, 5), _complex(3, 5)
    compiled = toolkit.jit.trace(lambda a, b: a * b + 1, (z, w))
    for _ in range(3):
        toolkit.testing.assert_close(compiled(z.conj(), w), z.conj() * w + 1)
