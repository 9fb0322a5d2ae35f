"""The benchmark harness times each library in a fresh process of its own and refuses a setup that loads both."""

from __future__ import annotations

import json
import sys

from benchmarks.common import table
from benchmarks.harness import Variant, library, measure


def add_one(lib_name: str):
    lib = library(lib_name)
    a = lib.ones(2)
    return lambda: a + a


def both_libraries():
    library("torch")
    library("toolkit")
    return lambda: None


def loaded_libraries(lib_name: str):
    """Exits with the names of the two libraries this process holds, which the harness reports as its error."""
    library(lib_name)
    loaded = sorted(m for m in ("toolkit", "torch") if m in sys.modules)
    raise SystemExit(json.dumps(loaded))


HERE = "tests.benchmarks.test_harness"


def test_each_library_runs_alone_and_reports_best_median_and_threads():
    out = measure([Variant("toolkit", f"{HERE}:add_one", ("toolkit",), 10),
                   Variant("torch", f"{HERE}:add_one", ("torch",), 10)], rounds=2, repeat=3)
    for label in ("toolkit", "torch"):
        t = out[label]
        assert not t.error and len(t.samples) == 6 and 0 < t.best <= t.median
    assert "torch" in out["torch"].threads and "intra-op" in out["torch"].threads
    assert "numba" in out["toolkit"].threads and "torch" not in out["toolkit"].threads
    text = table("add", [("2 elements", out)], "none")
    assert "| 2 elements |" in text and "ratio to torch" in text and "Threads: toolkit:" in text


def test_a_process_holds_only_the_library_it_times():
    out = measure([Variant(lib, f"{HERE}:loaded_libraries", (lib,)) for lib in ("toolkit", "torch")],
                  rounds=1, repeat=1)
    assert out["toolkit"].error == '["toolkit"]' and out["torch"].error == '["torch"]'


def test_a_setup_that_loads_both_libraries_gets_no_figure():
    out = measure([Variant("both", f"{HERE}:both_libraries")], rounds=1, repeat=1)
    assert not out["both"].samples and "imported both toolkit and torch" in out["both"].error
