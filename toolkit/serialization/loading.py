"""``toolkit.load``: a checkpoint of PyTorch's zip layout (or toolkit's older manifest archive) read back.

The archive's entries say which format it is: ``<name>/data.pkl`` is PyTorch's layout, written by
``torch.save`` or ``toolkit.save``; ``archive/manifest.json`` is the manifest archive ``toolkit.save`` wrote
before. A TorchScript archive or PyTorch's legacy (non-zip) format is refused with a message naming it.

Errors: a malformed file (truncated, corrupt, sizes that lie) raises ``RuntimeError`` naming the file, its
``__cause__`` the error that revealed it; a pickle that asks for a global a weights-only load does not allow
raises ``pickle.UnpicklingError`` with PyTorch's explanation of how to allow it.
"""

from __future__ import annotations

import errno
import io
import os
import pickle
import struct
import warnings
import zipfile
from typing import IO, Any

from .archive import BoundedArchive
from .format import _MANIFEST, _check, _Corrupt, _is_int
from .locations import CallerError, check_map_location
from .reader import _describe, load_manifest_archive
from .storages import StorageLoader
from .torch_format import MAX_VERSION, find_prefix, is_legacy_torch_file, is_torchscript, read_small
from .unpickler import WeightsOnlyError, WeightsUnpickler, full_unpickler

UNSAFE_MESSAGE = (
    "Re-running `toolkit.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source."
)
#: Said first when the caller left ``weights_only`` to its default, as ``torch.load`` does.
DEFAULT_MESSAGE = "toolkit.load defaults to `weights_only=True`, as torch.load does since PyTorch 2.6. "
_DOCS_MESSAGE = ("\n\nCheck the documentation of toolkit.load to learn more about types accepted by default with "
                 "weights_only.")

#: Errors that a malformed file can provoke in the zip and numpy code under ``load``; each is reported as the
#: file's fault (a RuntimeError naming it), with the original as the cause.
_MALFORMED = (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError,
              NotImplementedError, EOFError, struct.error, zipfile.BadZipFile, zipfile.LargeZipFile)


def _weights_only_message(name: str, message: str, weights_only_given: bool) -> str:
    """PyTorch's explanation of a weights-only refusal (``torch.load``'s ``_get_wo_message``), naming the file."""
    head = f"Weights only load failed for {name}."
    if "was not an allowed global by default" in message:
        unsafe = UNSAFE_MESSAGE if weights_only_given else DEFAULT_MESSAGE + UNSAFE_MESSAGE
        text = (f"{head} This file can still be loaded, to do so you have two options, do those steps only if you "
                f"trust the source of the checkpoint. \n\t(1) {unsafe}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following error message.\n\t"
                "WeightsUnpickler error: " + message)
    else:
        text = f"{head} {'' if weights_only_given else DEFAULT_MESSAGE}{UNSAFE_MESSAGE}\n"
        if "is blocked" not in message:
            text += "WeightsUnpickler error: "
        text += "\n\n" + message
    return text + _DOCS_MESSAGE


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "0").lower() in ("1", "y", "yes", "true")


def load(f, map_location=None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, max_bytes: int | None = None, **pickle_load_args: Any) -> Any:
    """Load an object saved with ``toolkit.save`` or ``torch.save`` from a path or a binary file object.

    ``weights_only`` (True by default, as in ``torch.load``) unpickles with an allow-list: tensors, storages,
    Parameters, dtypes, devices, ``Size``, dicts, ``OrderedDict``, lists, tuples, sets, numbers, strings and what
    :func:`toolkit.serialization.add_safe_globals` added; anything else is refused with a
    ``pickle.UnpicklingError`` saying how to allow it, and nothing from the file runs. ``weights_only=False``
    unpickles fully (whole modules, optimizers, any class; PyTorch's names map onto toolkit's): it runs what
    the file says, so use it for trusted files only.

    ``map_location`` may be a device string, a ``toolkit.device``, a dict mapping saved locations to new ones,
    or a callable ``(storage, location)`` returning a storage or None, as in ``torch.load``. ``mmap=True`` maps
    the storages of a file given by path instead of reading them (copy-on-write).

    Resources are bounded, so a small hostile file cannot take much time or memory. ``max_bytes`` limits the
    bytes read out of the archive in all (the pickle and every storage) and the size of any one tensor (however
    its strides share memory); by default it is 2 x the file's size + 256 MiB, which every file written by
    ``toolkit.save`` or ``torch.save`` fits::

        sd = toolkit.load("model.pt")                                  # tensors and containers
        model = toolkit.load("whole.pt", weights_only=False)           # a trusted file of a whole module

    A malformed file raises ``RuntimeError`` naming the file and what is wrong, its ``__cause__`` the error that
    revealed it.
    """
    if _env_flag("TORCH_FORCE_WEIGHTS_ONLY_LOAD"):  # PyTorch's switches, read on each load as torch.load does
        weights_only = True
    elif weights_only is None and _env_flag("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        weights_only = False
    weights_only_given = weights_only is not None
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only and set(pickle_load_args) != {"encoding"}:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    if max_bytes is not None and not (_is_int(max_bytes) and max_bytes >= 0):
        raise ValueError(f"toolkit.load: max_bytes should be a non-negative int or None, got {max_bytes!r}")
    check_map_location(map_location)
    is_path = isinstance(f, (str, os.PathLike))
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    pickle_load_args.setdefault("encoding", "utf-8")
    name = _describe(f)
    opened = None
    try:
        if is_path:
            try:
                opened = open(os.fspath(f), "rb")
            except FileNotFoundError:
                raise FileNotFoundError(2, "No such file or directory", os.fspath(f)) from None
            fileobj = opened
        elif hasattr(f, "read"):
            fileobj = f
            if not hasattr(f, "seek") or (hasattr(f, "seekable") and not f.seekable()):
                fileobj = io.BytesIO(f.read())
        else:
            raise AttributeError(f"toolkit.load: expected a path or a readable binary file object, got {type(f).__name__}")
        try:
            return _load_from(fileobj, map_location, max_bytes, weights_only, pickle_module, pickle_load_args,
                              os.fspath(f) if mmap else None)
        except CallerError as e:
            raise e.error from None
        except WeightsOnlyError as e:
            raise pickle.UnpicklingError(_weights_only_message(name, str(e), weights_only_given)) from None
        except _Corrupt as e:
            raise RuntimeError(f"toolkit.load: {name} is not a valid checkpoint: {e}") from (e.__cause__ or e)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as e:
            raise RuntimeError(f"toolkit.load: {name} is not a valid checkpoint (truncated or corrupt file): {e}") \
                from e
        except _MALFORMED as e:
            raise RuntimeError(f"toolkit.load: {name} is not a valid checkpoint ({type(e).__name__}: {e})") from e
        except OSError as e:
            if e.errno != errno.EINVAL:  # a real I/O error, not an offset read from the file
                raise
            raise RuntimeError(f"toolkit.load: {name} is not a valid checkpoint ({e})") from e
    finally:
        if opened is not None:
            opened.close()


def _load_from(fileobj: IO[bytes], map_location, max_bytes: int | None, weights_only: bool, pickle_module: Any,
               pickle_load_args: dict, mmap_path: str | None) -> Any:
    start = fileobj.tell()
    head = fileobj.read(512)
    fileobj.seek(start)
    if is_legacy_torch_file(head):
        raise _Corrupt("it is in PyTorch's legacy (non-zip) format, written by torch.save with "
                       "_use_new_zipfile_serialization=False or by PyTorch before 1.6, which toolkit.load does not "
                       "read; load it with torch.load and save it again with a recent torch.save")
    try:
        zf = zipfile.ZipFile(fileobj, "r")
    except zipfile.BadZipFile as e:
        raise _Corrupt(f"not a zip archive, or the archive is truncated ({e})") from e
    with zf:
        names = zf.namelist()
        if _MANIFEST in names:
            return load_manifest_archive(zf, map_location, max_bytes)
        prefix = find_prefix(names)
        if prefix is None:
            raise _Corrupt(f"no data.pkl (PyTorch's layout) or {_MANIFEST} (toolkit's earlier one) in the archive")
        if is_torchscript(names, prefix):
            raise _Corrupt("it is a TorchScript archive (torch.jit.save); toolkit.load reads checkpoints written by "
                           "torch.save or toolkit.save")
        archive = BoundedArchive(zf, max_bytes)
        version = read_small(archive, prefix + "version")
        if version is not None:
            _check(version.isdigit() and 1 <= int(version) <= MAX_VERSION,
                   f"the archive's version record says {version!r:.40}; this reader knows versions 1 to "
                   f"{MAX_VERSION}")
        byteorder = read_small(archive, prefix + "byteorder") or "little"
        _check(byteorder in ("little", "big"), f"unknown byte order {byteorder!r:.40}")
        pickled = archive.read(prefix + "data.pkl")
        storages = StorageLoader(zf, archive, prefix, byteorder, map_location, mmap_path)
        try:
            if weights_only:
                return WeightsUnpickler(pickled, storages, pickle_load_args.get("encoding", "utf-8")).load()
            unpickler = full_unpickler(pickle_module)(io.BytesIO(pickled), storages, **pickle_load_args)
            try:
                return unpickler.load()
            except pickle.UnpicklingError as e:
                raise _Corrupt(f"data.pkl is not a valid pickle ({e})") from e
        finally:
            storages.finish()
