"""``toolkit.save`` and ``toolkit.load``: checkpoints in PyTorch's own zip layout, read back safely by default.

``toolkit.save(obj, f)`` writes what ``torch.save`` writes: a zip archive (entries stored, each one's data
aligned to 64 bytes) holding ``<name>/data.pkl``, the object pickled with protocol 2, and one raw little-endian
record per storage, ``<name>/data/<key>``, plus ``byteorder``, ``version``, ``.format_version``,
``.storage_alignment`` and ``.data/serialization_id``. The pickle names PyTorch's globals
(``torch._utils._rebuild_tensor_v2``, ``torch._utils._rebuild_parameter``, ``torch.FloatStorage``,
``torch.float32``, ``torch.Size``, ``collections.OrderedDict``) and refers to storages by persistent ids
``('storage', storage_type, key, location, numel)``, so ``torch.load(path, weights_only=True)`` reads a
checkpoint of tensors, and files written by ``torch.save`` load here. Tensors that view one storage share one
record and come back as views of one storage. Any picklable object may be saved: whole modules and optimizers
pickle as Python pickles them, their tensors as above.

``toolkit.load(f)`` reads such files. By default (``weights_only=True``) the pickle is interpreted by a
restricted unpickler that never imports or calls anything outside an allow-list (tensors, storages,
Parameters, dtypes, devices, ``Size``, containers, numbers, strings, and what the user allowed with
:func:`add_safe_globals` or :func:`safe_globals`); anything else is refused with ``pickle.UnpicklingError``
naming the global and how to allow it. ``weights_only=False`` unpickles fully, mapping PyTorch's names onto
toolkit's; it runs what the file says, so it is for trusted files only. Checkpoints of toolkit's earlier
manifest format (``archive/manifest.json``, JSON and raw numbers, no pickle) still load. PyTorch's legacy
non-zip format and TorchScript archives are refused with a message naming them.

Every size the file states is checked against the archive and a byte budget (``max_bytes``) before anything is
allocated, so a truncated, corrupt or hostile file gives a ``RuntimeError`` naming the file and the problem::

    toolkit.save(model.state_dict(), "model.pt")
    model.load_state_dict(toolkit.load("model.pt"))

Saving to a path writes a temporary file next to the target, flushes it to disk and renames it over the
target, so a crash during ``save`` leaves the previous checkpoint intact, and a killed save leaves no
temporary file behind for long.

Modules: :mod:`.saving` (``save``), :mod:`.pickler` (objects to ``data.pkl`` and storage records),
:mod:`.torch_format` (the zip layout), :mod:`.atomic` (the atomic replacement of a file), :mod:`.loading`
(``load``), :mod:`.unpickler` (restricted and full unpicklers), :mod:`.allowlist` (safe globals),
:mod:`.torch_names` (PyTorch's global names and toolkit's objects), :mod:`.rebuild` (tensors from storages),
:mod:`.storages` (storage records read), :mod:`.locations` (``map_location``), :mod:`.archive` (zip entries
read under a byte budget), :mod:`.format` (names, limits, the error type); the manifest format's
:mod:`.writer` and :mod:`.reader`, which ``toolkit.jit`` archives also use.
"""

from .allowlist import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
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
from .loading import load
from .reader import _describe, _parse_manifest, _Reader, load_manifest_archive
from .saving import save
from .writer import _little_endian, _write_archive, _Writer, save_manifest

__all__ = ["load", "save"]
