"""The checkpoint format's names and limits, and the error every reader raises for a bad file.

Both the writer and the readers (``toolkit.load`` here, ``toolkit.jit.load`` for model archives) use these, so a
limit the writer enforces is the same one the reader checks.
"""

from __future__ import annotations

FORMAT_NAME = "toolkit.checkpoint"
FORMAT_VERSION = 1
_PREFIX = "archive/"
_MANIFEST = _PREFIX + "manifest.json"
_DATA = _PREFIX + "data/"
_CHUNK = 1 << 24

#: Containers nest at most this deep in a saved object tree. ``save`` refuses deeper trees and ``load`` deeper
#: manifests. It is kept well below Python's recursion limit: JSON parsing and the tree walks recurse, three JSON
#: levels per dict level.
_MAX_DEPTH = 100
#: The deepest JSON a manifest may hold: three levels per object-tree level (``{"$": "dict", "items": [[k, v]]}``)
#: plus the manifest's own frame around it.
_MAX_JSON_DEPTH = 3 * (_MAX_DEPTH + 1) + 8
#: The most decimal digits an integer in a manifest may have: Python's default limit for converting strings to
#: integers, which bounds the (quadratic) parse time whatever the process's own setting is.
_MAX_INT_DIGITS = 4300
#: Shapes, strides, offsets and byte counts are int64 values, as in PyTorch.
_MAX_INT64 = (1 << 63) - 1
#: The most dimensions a tensor may have (numpy's limit).
_MAX_DIMS = 64


class _Corrupt(Exception):
    """A problem with the file's contents; ``load`` reports it as a RuntimeError naming the file."""


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise _Corrupt(msg)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_int64(v, lo: int = 0) -> bool:
    """``v`` is an int (not a bool) in ``[lo, 2**63)``."""
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= _MAX_INT64
