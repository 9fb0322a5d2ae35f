"""toolkit.testing.FileCheck against torch's FileCheck on the same strings: which checks pass, and the error's
first line and ``From CHECK...`` line where they fail."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch._C import FileCheck as TorchFileCheck

import toolkit
from toolkit.testing import FileCheck

# (checks as (method, args...), text)
CASES = [
    ([("check", "bar")], "foo\nbaz"),
    ([("check", "foo"), ("check", "baz")], "foo\nbaz"),
    ([("check", "baz"), ("check", "foo")], "foo\nbaz"),
    ([("check", "")], "foo"),
    ([("check_not", "foo")], "foo\nbaz"),
    ([("check_not", "qux")], "foo\nbaz"),
    ([("check", "a"), ("check_next", "c")], "a b\nx c\n"),
    ([("check", "a"), ("check_next", "c")], "a b\n c\n"),
    ([("check", "a"), ("check_next", "c")], "a c\n"),
    ([("check", "a"), ("check_next", "c")], "a\nb\nc\n"),
    ([("check", "a"), ("check_same", "c")], "a\nc"),
    ([("check", "a"), ("check_same", "c")], "a b c\nd"),
    ([("check_count", "a", 2)], "a a a"),
    ([("check_count", "a", 2, True)], "a a a"),
    ([("check_count", "a", 3, True)], "a a a"),
    ([("check_count", "a", 4)], "a a a"),
    ([("check_count", "a", 0, True)], "a a a"),
    ([("check_count", "a", 0, True)], "b b"),
    ([("check_dag", "b"), ("check_dag", "a"), ("check", "c")], "a b c"),
    ([("check_dag", "b"), ("check_dag", "a"), ("check", "a")], "a b c"),
    ([("check_dag", "x"), ("check_dag", "a")], "a b c"),
    ([("check_regex", "a.c")], "xabc"),
    ([("check_regex", "a.d")], "xabc"),
    ([("check_regex", "[0-9]+"), ("check", "z")], "x 123 z"),
    ([("check_source_highlighted", "foo")], "x foo y\n  ~~~\n"),
    ([("check_source_highlighted", "foo")], "x foo y\n ~~~\n"),
    ([("check_not", "a"), ("check_not", "b"), ("check", "c"), ("check_not", "d")], "c d"),
    ([("check_not", "a"), ("check_not", "b"), ("check", "c"), ("check_not", "d")], "b c"),
    ([("check_not", "a"), ("check", "c"), ("check_not", "d"), ("check", "e")], "c x e d"),
    ([("check_not", "a"), ("check", "c"), ("check_not", "d"), ("check", "e")], "c d e"),
    ([("check", "x"), ("check_not", "y"), ("check_dag", "b"), ("check_dag", "a")], "x a y b"),
    ([("check", "x"), ("check_not", "y"), ("check_dag", "b"), ("check_dag", "a")], "x a b y"),
]


def _build(cls, checks):
    fc = cls()
    for method, *args in checks:
        fc = getattr(fc, method)(*args)
    return fc


def _outcome(cls, checks, *run_args):
    try:
        _build(cls, checks).run(*run_args)
    except RuntimeError as e:
        lines = str(e).rstrip("\n").split("\n")
        return "fail", lines[0], [line for line in lines if line.startswith("From ")]
    return "pass", None, None


@pytest.mark.parametrize("checks, text", CASES)
def test_filecheck_matches_torch_on_strings(checks, text):
    assert _outcome(FileCheck, checks, text) == _outcome(TorchFileCheck, checks, text)


DIRECTIVES = [
    ("# CHECK: foo\n# CHECK-NEXT: bar\n", "foo\nbar"),
    ("# CHECK: foo\n# CHECK-NEXT: bar\n", "foo\nx\nbar"),
    ("# CHECK-COUNT-2: foo\n# CHECK-NOT: bar\n# CHECK-DAG: baz\n", "foo foo baz"),
    ("# CHECK-COUNT-2: foo\n# CHECK-NOT: bar\n# CHECK-DAG: baz\n", "foo foo bar baz"),
    ("# CHECK-COUNT-EXACTLY-2: foo\n", "foo foo foo"),
    ("# CHECK: a\n# CHECK-SAME: b\n", "a b"),
    ("# CHECK-REGEX: f.o\n", "xfoo"),
    ("# CHECK: foo", "bar"),
]


@pytest.mark.parametrize("directives, text", DIRECTIVES)
def test_filecheck_directives_match_torch(directives, text):
    assert _outcome(FileCheck, [], directives, text) == _outcome(TorchFileCheck, [], directives, text)


def test_no_checks_and_zero_count_errors():
    assert _outcome(FileCheck, [], "foo") == _outcome(TorchFileCheck, [], "foo")
    assert _outcome(FileCheck, [], "no checks here", "bar") == _outcome(TorchFileCheck, [], "no checks here", "bar")
    with pytest.raises(RuntimeError, match="Count == 0 && !exactly doesn't do anything"):
        FileCheck().check_count("a", 0)


def test_error_text_for_simple_failures_matches_torch():
    for checks, text in (([("check", "bar")], "foo\nbaz"), ([("check_not", "foo")], "foo\nbaz"),
                         ([("check_count", "a", 2, True)], "a a a")):
        with pytest.raises(RuntimeError) as expected:
            _build(TorchFileCheck, checks).run(text)
        with pytest.raises(RuntimeError) as got:
            _build(FileCheck, checks).run(text)
        assert str(got.value) == str(expected.value)


def test_filecheck_runs_on_a_graph():
    def f(x):
        return x * 2 + 1

    graph = toolkit.jit.script(f).graph
    FileCheck().check("aten::mul").check_next("aten::add").check_not("aten::sub").run(graph)
    FileCheck().run("# CHECK: aten::mul\n# CHECK: aten::add", graph)
    with pytest.raises(RuntimeError, match='Expected to find "aten::sub"'):
        FileCheck().check("aten::sub").run(graph)


def test_assert_allclose_warns_and_compares_as_torch():
    for actual, expected, kw in ((toolkit.tensor([1.0, 2.0]), [1.0, 2.00001], {}),
                                 (toolkit.tensor([1.0, float("nan")]), [1.0, float("nan")], {}),
                                 (toolkit.tensor([1, 2]), [1.0, 2.0], {}),
                                 (toolkit.tensor([1.0]), [1.1], {}),
                                 (toolkit.tensor([1.0]), [1.1], {"rtol": 0.2, "atol": 0.0}),
                                 (toolkit.tensor([1.0, float("nan")]), [1.0, float("nan")], {"equal_nan": False})):
        t_actual = torch.tensor(actual.tolist(), dtype=getattr(torch, actual.dtype.name))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            try:
                torch.testing.assert_allclose(t_actual, expected, **kw)
                torch_ok = True
            except AssertionError:
                torch_ok = False
        with pytest.warns(FutureWarning, match=r"assert_allclose\(\)` is deprecated since 1.12"):
            if torch_ok:
                toolkit.testing.assert_allclose(actual, expected, **kw)
            else:
                with pytest.raises(AssertionError):
                    toolkit.testing.assert_allclose(actual, expected, **kw)
