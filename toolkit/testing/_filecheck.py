"""``FileCheck``: LLVM-style pattern checks over text, as ``torch.testing.FileCheck`` runs them on TorchScript IR.

Tests of graph passes assert what a printed graph contains, in order, without pinning every line::

    FileCheck().check("prim::FusionGroup").check_not("aten::mul").check_count("aten::add", 2).run(graph)

Checks run front to back, each from where the previous match ended: ``check`` finds a string; ``check_next`` finds
it on the next line, ``check_same`` on the same line; ``check_count`` finds it ``count`` times (``exactly``: and
not once more); consecutive ``check_dag`` find their strings in any order; consecutive ``check_not`` forbid their
strings between the previous match and the next one; ``check_regex`` finds a regular expression;
``check_source_highlighted`` finds a string that the next line underlines with ``~``. ``run`` also reads the checks
from ``# CHECK:`` (``-NEXT``, ``-SAME``, ``-NOT``, ``-DAG``, ``-COUNT-n``, ``-COUNT-EXACTLY-n``, ``-REGEX``,
``-SOURCE-HIGHLIGHTED``) comments of a checks file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FileCheck"]

_LABELS = {"check": "CHECK", "next": "CHECK-NEXT", "same": "CHECK-SAME", "not": "CHECK-NOT", "count": "CHECK-COUNT",
           "dag": "CHECK-DAG", "regex": "CHECK-REGEX", "highlighted": "CHECK-SOURCE-HIGHLIGHTED"}
_DIRECTIVE = re.compile(r"#\s*CHECK(?:-(NEXT|SAME|NOT|DAG|REGEX|SOURCE-HIGHLIGHTED|COUNT-(?:EXACTLY-)?\d+))?:\s?(.*)")


@dataclass
class _Check:
    kind: str
    text: str
    count: int = 1
    exactly: bool = False

    def label(self) -> str:
        if self.kind == "count":
            return f"CHECK-COUNT-{'EXACTLY-' if self.exactly else ''}{self.count}"
        return _LABELS[self.kind]


def _highlight(text: str, start: int, end: int) -> str:
    """The line holding ``text[start:end]``, underlined with ``~`` and marked ``<--- HERE``, then the next line."""
    if start > len(text):
        return ""
    if start == len(text) or end - start == len(text):  # nothing left to underline, or the whole text
        return text
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    width = max(1, min(end, line_end) - start)
    out = f"{text[line_start:line_end]}\n{' ' * (start - line_start)}{'~' * width} <--- HERE\n"
    following = text.find("\n", line_end + 1)
    if line_end < len(text):
        out += text[line_end + 1:len(text) if following < 0 else following] + "\n"
    return out


class FileCheck:
    """Builds a list of checks (each method returns ``self``); ``run`` applies them to a string or a graph."""

    def __init__(self) -> None:
        self._checks: list[_Check] = []

    def _add(self, kind: str, text: str, count: int = 1, exactly: bool = False) -> FileCheck:
        if not isinstance(text, str):
            raise TypeError(f"{kind}(): incompatible function arguments: expected a str, got {type(text).__name__}")
        self._checks.append(_Check(kind, text, count, exactly))
        return self

    def check(self, check_str: str) -> FileCheck:
        return self._add("check", check_str)

    def check_not(self, check_str: str) -> FileCheck:
        return self._add("not", check_str)

    def check_same(self, check_str: str) -> FileCheck:
        return self._add("same", check_str)

    def check_next(self, check_str: str) -> FileCheck:
        return self._add("next", check_str)

    def check_dag(self, check_str: str) -> FileCheck:
        return self._add("dag", check_str)

    def check_regex(self, check_str: str) -> FileCheck:
        return self._add("regex", check_str)

    def check_source_highlighted(self, check_str: str) -> FileCheck:
        return self._add("highlighted", check_str)

    def check_count(self, check_str: str, count: int, exactly: bool = False) -> FileCheck:
        """``check_str`` ``count`` times; with ``exactly``, not once more (``count=0, exactly=True``: never)."""
        if count == 0 and not exactly:
            raise RuntimeError("count != 0 || exactly INTERNAL ASSERT FAILED: Count == 0 && !exactly doesn't do "
                               "anything")
        if count == 0:
            return self._add("not", check_str)
        return self._add("count", check_str, count, exactly)

    def run(self, checks_file, test_file=None) -> None:
        """Run the checks on ``checks_file`` (a string or a graph); with two arguments, read the checks from the
        ``# CHECK`` comments of the first and run them on the second."""
        if test_file is None:
            checks, text = self._checks, str(checks_file)
        else:
            checks, text = _parse_directives(checks_file), str(test_file)
        if not checks:
            raise RuntimeError("No checks have been added to this instance ofFilecheck! Check for bad input.")
        _run(checks, text)


def _parse_directives(source: str) -> list[_Check]:
    checks = []
    for line in source.splitlines():
        m = _DIRECTIVE.search(line)
        if m is None:
            continue
        suffix, text = m.group(1) or "", m.group(2).rstrip()
        if suffix.startswith("COUNT-"):
            exactly = suffix.startswith("COUNT-EXACTLY-")
            count = int(suffix.rsplit("-", 1)[1])
            checks.append(_Check("not", text) if count == 0 else _Check("count", text, count, exactly))
        else:
            kind = {"": "check", "SOURCE-HIGHLIGHTED": "highlighted"}.get(suffix, suffix.lower())
            checks.append(_Check(kind, text))
    return checks


def _groups(checks: list[_Check]) -> list[list[_Check]]:
    """Consecutive ``not`` checks, and consecutive ``dag`` checks, each form one group; any other is alone."""
    groups: list[list[_Check]] = []
    for c in checks:
        if groups and c.kind in ("not", "dag") and groups[-1][0].kind == c.kind:
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def _run(checks: list[_Check], text: str) -> None:
    groups = _groups(checks)
    prev_end, i = 0, 0
    while i < len(groups):
        group = groups[i]
        if group[0].kind == "not":
            if i + 1 < len(groups):
                start, end = _match_group(groups[i + 1], text, prev_end)
                _check_not(group, text, prev_end, start)
                prev_end, i = end, i + 2
                continue
            _check_not(group, text, prev_end, len(text))
        else:
            prev_end = _match_group(group, text, prev_end)[1]
        i += 1


def _find(text: str, needle: str, start: int, check: _Check) -> int:
    pos = text.find(needle, start)
    if pos < 0:
        raise RuntimeError(f'Expected to find "{_shown(needle)}" but did not find it\nSearched string:\n'
                           f"{_highlight(text, start, start + len(needle))}From {check.label()}: {check.text}\n")
    return pos


def _find_not(text: str, needle: str, start: int, stop: int, check: _Check) -> None:
    pos = text.find(needle, start, stop)
    if pos >= 0:
        raise RuntimeError(f'Expected to not find "{_shown(needle)}" but found it\n'
                           f"{_highlight(text, pos, pos + len(needle))}From {check.label()}: {check.text}\n")


def _shown(needle: str) -> str:
    return needle.replace("\n", "\\n")


def _check_not(group: list[_Check], text: str, start: int, stop: int) -> None:
    for check in group:
        _find_not(text, check.text, start, stop, check)


def _match_group(group: list[_Check], text: str, prev_end: int) -> tuple[int, int]:
    """The span the group's matches cover, searching from ``prev_end``."""
    if group[0].kind == "dag":
        spans = [(p, p + len(c.text)) for c in group for p in [_find(text, c.text, prev_end, c)]]
        return min(s for s, _ in spans), max(e for _, e in spans)
    return _match_single(group[0], text, prev_end)


def _match_single(check: _Check, text: str, prev_end: int) -> tuple[int, int]:
    kind, needle = check.kind, check.text
    if kind == "check":
        pos = _find(text, needle, prev_end, check)
        return pos, pos + len(needle)
    if kind == "same":
        pos = _find(text, needle, prev_end, check)
        _find_not(text, "\n", prev_end, pos, check)
        return pos, pos + len(needle)
    if kind == "next":
        line_end = _find(text, "\n", prev_end, check)
        pos = _find(text, needle, line_end + 1, check)
        _find_not(text, "\n", line_end + 1, pos, check)
        return pos, pos + len(needle)
    if kind == "count":
        first, start = None, prev_end
        for _ in range(check.count):
            pos = _find(text, needle, start, check)
            first = pos if first is None else first
            start = pos + len(needle)
        if check.exactly:
            _find_not(text, needle, start, len(text), _Check("not", needle))
        return first, start
    if kind == "regex":
        m = re.compile(needle).search(text, prev_end)
        if m is None:
            raise RuntimeError(f'Expected to find regex "{needle}" but did not find it\nSearched string:\n'
                               f"From {check.label()}: {needle}\n")
        return m.start(), m.start() + len(needle)  # PyTorch ends the match a pattern's length on, not the match's
    return _match_highlighted(check, text, prev_end)


def _match_highlighted(check: _Check, text: str, prev_end: int) -> tuple[int, int]:
    """``check.text``, with the next line holding ``~`` under each of its characters."""
    needle = check.text
    pos = _find(text, needle, prev_end, check)
    line_start = text.rfind("\n", 0, pos) + 1
    line_end = text.find("\n", pos)
    column = pos - line_start
    below = text[line_end + 1:].split("\n", 1)[0] if line_end >= 0 else ""
    if below[column:column + len(needle)] != "~" * len(needle):
        raise RuntimeError(f'Expected to find "{needle}"highlighted but it is not.\n{_highlight(text, pos, pos + 1)}')
    return pos, pos + len(needle)
