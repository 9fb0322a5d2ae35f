"""``toolkit.save`` and ``toolkit.load``: checkpoints as zip archives of raw tensor data plus a manifest.

A checkpoint is a zip archive (entries stored uncompressed) holding ``archive/manifest.json`` and one raw
little-endian binary entry per storage, ``archive/data/<key>``. The manifest names the format and its version
and describes the saved object tree: containers, Python scalars, dtypes, devices, and tensor references
(dtype, shape, strides, storage key, offset, requires_grad, whether it is a Parameter). Tensors that are views
of one storage are saved once and come back as views sharing one storage, as with PyTorch.

Loading never runs code from the file: there is no pickle, only JSON and raw numbers, and every field is
checked, so a truncated, corrupt, hostile or foreign file gives a ``RuntimeError`` naming the file and the
problem. Loading takes time linear in the file's records and memory bounded by ``max_bytes``::

    toolkit.save(model.state_dict(), "model.pt")
    model.load_state_dict(toolkit.load("model.pt"))

Saving to a path writes a temporary file next to the target, flushes it to disk and renames it over the
target, so a crash during ``save`` leaves the previous checkpoint intact, and a killed save leaves no
temporary file behind for long.

Modules: :mod:`.format` (names, limits, the error type), :mod:`.writer` (``save``), :mod:`.atomic` (the
atomic replacement of a file), :mod:`.archive` (zip entries read under a byte budget), :mod:`.reader`
(``load``).
"""

from .archive import DEFAULT_ALLOWANCE, DEFAULT_EXPANSION, BoundedArchive, default_max_bytes
from .atomic import remove_orphans, write_atomically
from .format import (
    _CHUNK,
    _DATA,
    _MANIFEST,
    _MAX_DEPTH,
    _MAX_INT_DIGITS,
    _PREFIX,
    FORMAT_NAME,
    FORMAT_VERSION,
    _check,
    _Corrupt,
    _is_int,
    _is_int64,
)
from .reader import _describe, _load_from, _parse_manifest, _Reader, load
from .writer import _little_endian, _write_archive, _Writer, save

__all__ = ["load", "save"]
