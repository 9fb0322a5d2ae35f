"""The CPU map-kernel generator: formulas -> numba source files in a cache dir, reused across processes."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import toolkit
from toolkit.backends.cpu import FormulaError, map_kernel, map_source, scalar, specialize, split
from toolkit.backends.cpu import cache as kcache
from toolkit.backends.cpu.map_kernels import CALL_WORK, PARALLEL_MIN, MapKernel

from ..conftest import assert_close

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- formula language
def test_map_source_inlines_the_formula_and_its_helpers():
    src = map_source("rint(x) * y + beta", inputs=("x", "y"), params=("beta",))
    assert "def serial(out, in_x, in_y, beta):" in src
    assert "numba.prange" not in src  # large calls are shared out by toolkit.backends.cpu.split instead
    assert "out[i] = rint(x) * y + beta" in src
    assert "def rint(x):" in src and "_EXACT = " in src
    assert "def erfinv" not in src  # only the helpers the formula reads
    compile(src, "<generated>", "exec")


def test_unknown_names_and_clashing_arguments_are_rejected():
    with pytest.raises(FormulaError, match=r"reads \['y'\]"):
        map_source("x + y", inputs=("x",))
    with pytest.raises(FormulaError, match="not a Python expression"):
        map_source("x +", inputs=("x",))
    with pytest.raises(FormulaError, match="clash"):
        map_source("out + 1", inputs=("out",))
    with pytest.raises(FormulaError, match="repeat"):
        map_source("x + x", inputs=("x",), params=("x",))


def test_specialize_substitutes_constants_and_folds_decided_branches():
    expr = "a * 2 if mode == 'double' else a + 1"
    assert specialize(expr, {"mode": "double"}) == "a * 2"
    assert specialize(expr, {"mode": "other"}) == "a + 1"
    assert specialize("a * k", {"k": 3}) == "a * 3"
    assert specialize(expr) == expr


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "rint"])
def test_scalar_rounding_helpers_match_numpy_in_cpython(name):
    ref = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint}[name]
    values = [-2.5, -1.5, -0.5, -0.4, -0.0, 0.0, 0.4, 0.5, 1.5, 2.5, 3.7, -3.7, 2.0**52 + 1, -(2.0**60), 1e300,
              math.inf, -math.inf, math.nan]
    for v in values:
        got, want = getattr(scalar, name)(v), ref(v)
        assert (got == want or (math.isnan(got) and math.isnan(want))), (v, got, want)
        assert math.copysign(1, got) == math.copysign(1, want), (v, got, want)


def test_scalar_erfinv_matches_a_high_precision_reference_in_cpython():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    assert scalar.erfinv(0.0) == 0.0 and math.copysign(1, scalar.erfinv(-0.0)) == -1
    for y in [-0.999, -0.5, -1e-10, 1e-300, 0.3, 0.5, 0.7, 0.71, 0.9999999, 1 - 1e-12, 1 - 1e-15, -(1 - 2**-53)]:
        assert scalar.erfinv(y) == pytest.approx(float(mpmath.erfinv(mpmath.mpf(y))), rel=1e-14, abs=0), y
    assert scalar.erfinv(1.0) == math.inf and scalar.erfinv(-1.0) == -math.inf
    assert math.isnan(scalar.erfinv(1.5)) and math.isnan(scalar.erfinv(math.nan))


# ----------------------------------------------------------------------------- running kernels
def test_nary_kernel_broadcasts_and_keeps_the_input_dtype(rng):
    k = map_kernel("a * b + beta", inputs=("a", "b"), params=("beta",))
    a = rng.standard_normal((3, 1, 4))
    b = rng.standard_normal((1, 5)).T  # non-contiguous, broadcast
    out = k(a, b, 0.5)
    np.testing.assert_allclose(out, a * b + 0.5)
    assert out.shape == (3, 5, 4) and out.dtype == np.float64
    for dt in (np.float32, np.float16):
        a_, b_ = a.astype(dt), b.astype(dt)
        o = k(a_, b_, 0.5)
        assert o.dtype == dt
        # numpy oracle: the same rounded inputs, computed in float64 and rounded once
        assert_close(o, (a_.astype(np.float64) * b_ + 0.5).astype(dt), accum=2)


def test_zero_size_and_zero_dim_inputs():
    k = map_kernel("math.exp(a)", inputs=("a",))
    assert k(np.zeros((0, 3))).shape == (0, 3)
    out = k(np.array(0.0))
    assert out.shape == () and out == 1.0
    assert k(np.zeros(3), dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("expr, work", [("math.erf(a) * a + beta", CALL_WORK), ("a * a + beta", 1)])
def test_split_loop_agrees_with_serial(rng, monkeypatch, expr, work):
    monkeypatch.setattr(split, "_busy", [0, 1])  # a busy spell noticed by an earlier test would run it serially
    monkeypatch.setattr(split, "free_cores", lambda: 2)  # and so would other processes busy now
    k = map_kernel(expr, inputs=("a",), params=("beta",))
    assert k.work == work
    x = rng.standard_normal(PARALLEL_MIN // work + 7)
    seen = []
    real = split._Slices.run
    monkeypatch.setattr(split._Slices, "run", lambda self: seen.append(self.threads) or real(self))
    out = k(x, 0.5)
    serial = np.empty_like(x)
    k.module.serial(serial, x, 0.5)
    np.testing.assert_array_equal(out, serial)
    assert seen == ([] if toolkit.get_num_threads() < 2 else [min(toolkit.get_num_threads(), x.size)])


def test_wrong_number_of_values():
    k = map_kernel("a + beta", inputs=("a",), params=("beta",))
    with pytest.raises(TypeError, match="takes 2 values, got 1"):
        k(np.zeros(2))


def test_map_kernel_is_memoized_per_formula_and_constants():
    a = map_kernel("x if m == 1 else -x", inputs=("x",), constants={"m": 1})
    assert a is map_kernel("x if m == 1 else -x", inputs=("x",), constants={"m": 1})
    b = map_kernel("x if m == 1 else -x", inputs=("x",), constants={"m": 2})
    assert a is not b and a.expr == "x" and b.expr == "-x"


# ----------------------------------------------------------------------------- the cache directory
def test_write_once_is_atomic_and_does_not_rewrite(tmp_path):
    p = tmp_path / "k.py"
    assert kcache.write_once(p, "x = 1\n") is True
    stamp = p.stat().st_mtime_ns
    assert kcache.write_once(p, "x = 1\n") is False
    assert p.stat().st_mtime_ns == stamp
    assert kcache.write_once(p, "x = 2\n") is True and p.read_text() == "x = 2\n"
    assert sorted(os.listdir(tmp_path)) == ["k.py"]  # no temp files left behind


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "c"))
    assert kcache.kernel_dir() == tmp_path / "c" / "kernels"
    monkeypatch.delenv("TOOLKIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert kcache.cache_root() == tmp_path / "x" / "toolkit"


def test_generated_module_is_a_real_file_named_by_its_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path))
    k = MapKernel("a * 3.25 - 1.0", inputs=("a",))
    np.testing.assert_array_equal(k(np.arange(3.0)), np.arange(3.0) * 3.25 - 1.0)
    path = Path(k.module.__file__)
    assert path.parent == tmp_path / "kernels"
    assert path.name == f"map_{kcache.source_hash(k.source)}.py"
    assert path.read_text() == k.source


_CHILD = """
import json, sys
import numpy as np
import toolkit
assert "numba" not in sys.modules
x = toolkit.tensor(np.linspace(-0.95, 0.95, 11))
y = toolkit.erfinv(x)
from toolkit.ops.elementwise import formula_kernel
stats = formula_kernel("erfinv").module.serial.stats
print(json.dumps({"y": y.tolist(), "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values())}))
"""


def _run_child(cache: Path) -> dict:
    env = dict(os.environ, TOOLKIT_CACHE_DIR=str(cache))
    env.pop("NUMBA_CACHE_DIR", None)
    r = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _snapshot(d: Path) -> dict:
    return {str(p.relative_to(d)): p.stat().st_mtime_ns for p in d.rglob("*") if p.is_file()}


def test_second_process_reuses_the_cached_kernel(tmp_path):
    first = _run_child(tmp_path)
    files = _snapshot(tmp_path)
    sources = [f for f in files if f.startswith("kernels/") and f.endswith(".py") and "/" not in f[8:]]
    assert len(sources) == 1, files
    assert any(f.endswith(".nbi") for f in files) and any(f.endswith(".nbc") for f in files), files
    assert first["misses"] == 1 and first["hits"] == 0
    second = _run_child(tmp_path)
    assert _snapshot(tmp_path) == files  # nothing written, nothing rewritten
    assert second["hits"] == 1 and second["misses"] == 0  # machine code loaded from disk, not compiled
    assert second["y"] == first["y"]


def test_import_toolkit_does_not_import_numba():
    code = "import toolkit, toolkit.backends.cpu, sys; toolkit.tensor([0.5]).sin(); assert 'numba' not in sys.modules"
    r = subprocess.run([sys.executable, "-c", code],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
