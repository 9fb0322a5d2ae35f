"""``run.py --write`` keeps RESULTS.md's hand-written profile section below the tables it rewrites."""

from __future__ import annotations

from benchmarks.run import _kept_sections


def test_the_profile_section_is_kept(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text("# Benchmark results\n\n### old table\n\n\n## Where the time goes (profile)\n\nfindings\n")
    assert _kept_sections(str(path)) == "\n## Where the time goes (profile)\n\nfindings\n"


def test_nothing_is_kept_without_one(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text("# Benchmark results\n")
    assert _kept_sections(str(path)) == "" and _kept_sections(str(tmp_path / "missing.md")) == ""
