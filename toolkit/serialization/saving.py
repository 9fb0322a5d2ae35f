"""``toolkit.save``: any picklable object, in PyTorch's zip layout, written atomically to a path."""

from __future__ import annotations

import os
import pickle
from typing import Any

from .atomic import write_atomically
from .pickler import dumps
from .torch_format import archive_name, write_checkpoint


def save(obj: Any, f, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` (tensors, state dicts, whole modules, optimizer state, numpy arrays: anything picklable) to a
    path or a binary file object, as ``torch.save`` does.

    The file is PyTorch's zip layout (see :mod:`toolkit.serialization`), so ``torch.load(path,
    weights_only=True)`` reads a checkpoint of tensors and containers, and ``toolkit.load`` reads it back.
    Tensors viewing one storage share one record and load as views again.

    Saving to a path is atomic: the data goes to a temporary file in the same directory (unnamed where the OS
    allows it, so a killed save leaves nothing behind), is fsynced and renamed over the target, so the previous
    checkpoint survives a crash. A named temporary file left by a killed save is removed by the next save to the
    same path::

        toolkit.save(model.state_dict(), "model.pt")
        toolkit.save({"model": model, "step": 10}, "whole.pt")     # load with weights_only=False
    """
    if pickle_module is not pickle and pickle_module is not None:
        raise TypeError(f"toolkit.save: pickle_module {getattr(pickle_module, '__name__', pickle_module)!r} is not "
                        "supported; checkpoints are written with Python's pickle")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("toolkit.save writes only PyTorch's zip format; the legacy format "
                                  "(_use_new_zipfile_serialization=False) is not supported")
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError(f"toolkit.save: expected a path or a writable binary file object, got {type(f).__name__}")
    pickled, records = dumps(obj, pickle_protocol)
    name = archive_name(f)
    if isinstance(f, (str, os.PathLike)):
        write_atomically(os.fspath(f), lambda fh: write_checkpoint(fh, name, pickled, records))
    else:
        write_checkpoint(f, name, pickled, records)
