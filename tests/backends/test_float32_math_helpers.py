"""The float32 math helpers fused CPU loops write out instead of calling libm (``exp_f32``, ``tanh_f32``): rounded
to float32 they equal the correctly rounded value; a kernel expands at most a few (each costs compile time)."""

from __future__ import annotations

import inspect
import math
import textwrap

import numpy as np
import pytest

import toolkit
from toolkit.backends.cpu import scalar
from toolkit.backends.cpu.codegen import helpers_needed


def _float32_inputs():
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 9.1, 9.0, 8.9, 88.7, 88.72, 89.5, -103.9, -87.3, -110.0, 1e-45,
               -1e-45, 1e-30, 3.4e38, -3.4e38]
    xs = np.concatenate([rng.standard_normal(20000) * 3, rng.uniform(-100, 100, 10000),
                         10.0 ** rng.uniform(-40, 1, 10000) * rng.choice([-1, 1], 10000), special])
    return xs.astype(np.float32)


def _compiled(name):
    """The helper compiled as the fused-kernel generator emits it (inlined into a loop over an array)."""
    import numba

    src = "import math\nimport numba\nimport numpy as np\n"
    for h in helpers_needed({name}):
        src += ("@numba.njit(cache=False, error_model='numpy', inline='always')\n"
                + textwrap.dedent(inspect.getsource(scalar.HELPERS[h])) + "\n")
    src += (f"@numba.njit(error_model='numpy')\ndef loop(xs, out):\n    for i in range(xs.shape[0]):\n"
            f"        out[i] = np.float32({name}(xs[i]))\n")
    ns: dict = {"numba": numba}
    exec(compile(src, f"<{name}>", "exec"), ns)
    return ns["loop"]


@pytest.mark.parametrize("name,ref", [("exp_f32", np.exp), ("tanh_f32", np.tanh)])
def test_float32_helpers_round_to_the_correctly_rounded_value(name, ref):
    xs = _float32_inputs()
    out = np.empty_like(xs)
    _compiled(name)(xs, out)
    with np.errstate(all="ignore"):
        want = ref(xs.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out, want)  # nan == nan, signs of zeros and infinities included
    assert np.array_equal(np.signbit(out), np.signbit(want))
    # and in CPython, where the helpers are plain Python
    for x in xs[:200].tolist() + [0.0, -0.0, math.inf, -math.inf]:
        with np.errstate(over="ignore"):
            got = np.float32(getattr(scalar, name)(x))
        assert got == np.float32(ref(np.float64(x))) or (np.isnan(got) and np.isnan(ref(x)))


def test_pow2_is_exact_over_its_range():
    for k in range(-255, 256):
        assert scalar.pow2(float(k)) == 2.0 ** k


def test_fused_float32_tanh_and_sigmoid_expand_the_helpers_and_match_eager():
    def f(x, y):
        return toolkit.tanh(x * y + 1.5) * toolkit.sigmoid(x)

    x, y = toolkit.randn(50, 40), toolkit.randn(50, 40)
    t = toolkit.jit.trace(f, (x, y))
    src = t.graph_for(x, y).kernels[0].source()
    loop = src[src.index("def serial"):]
    assert "math.floor(" in loop and "math.tanh(" not in loop and "math.exp(" not in loop  # written out
    got, want = t(x, y).numpy(), f(x, y).numpy()
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(np.float32).eps, atol=1e-7)
    xd, yd = x.double(), y.double()  # float64 loops keep libm's
    loop64 = toolkit.jit.trace(f, (xd, yd)).graph_for(xd, yd).kernels[0].source()
    assert "math.tanh(" in loop64[loop64.index("def serial"):]


def test_a_group_with_many_float32_math_calls_keeps_libm_so_it_compiles_quickly():
    def g(x):
        return toolkit.tanh(x) * toolkit.sigmoid(x) + toolkit.exp(-x)

    x = toolkit.randn(30, 20)
    t = toolkit.jit.trace(g, (x,))
    src = t.graph_for(x).kernels[0].source()
    loop = src[src.index("def serial"):]
    assert "math.tanh(" in loop and "math.floor(" not in loop
    np.testing.assert_allclose(t(x).numpy(), g(x).numpy(), rtol=4 * np.finfo(np.float32).eps, atol=1e-7)
