"""Benchmark tables: a row's target shows as a bound on the ratio and whether the best figures meet it."""

from __future__ import annotations

from benchmarks.common import table
from benchmarks.harness import Timing


def test_rows_with_targets_get_a_target_and_a_verdict():
    fast, slow = Timing([1.0, 2.0]), Timing([3.0])
    text = table("t", [("ok", {"toolkit": fast, "torch": slow}, 1.0),
                       ("too slow", {"toolkit": slow, "torch": fast}, 1.5),
                       ("reported", {"toolkit": fast, "torch": slow}),
                       ("no figure", {"toolkit": Timing([], error="boom"), "torch": slow}, 2.0)], "goal")
    lines = text.splitlines()
    assert "| target (ratio to torch) | meets |" in lines[4]
    assert lines[6].endswith("| 0.33x | <= 1x | yes |")
    assert lines[7].endswith("| 3.00x | <= 1.5x | no |")
    assert lines[8].endswith("| 0.33x | - | - |")
    assert lines[9].endswith("| n/a | <= 2x | n/a |") and "n/a (boom)" in lines[9]


def test_rows_without_targets_keep_the_plain_table():
    text = table("t", [("a", {"toolkit": Timing([1.0]), "torch": Timing([2.0])})], "goal")
    assert "meets" not in text
    assert text.splitlines()[6] == "| a | 1.000 s / 1.000 s | 2.000 s / 2.000 s | 0.50x |"
