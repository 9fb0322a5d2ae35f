"""Reading the pickled batches some datasets ship (CIFAR) without running code from the file.

A pickle may name any global to call while loading; these files only need numpy arrays, dtypes and plain
Python containers, so the unpickler resolves exactly the globals numpy's array pickling uses and refuses
every other name.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

__all__ = ["load_numpy_pickle"]

# numpy's own array-rebuilding functions, taken from what this numpy's pickling emits (their module moved
# from numpy.core to numpy._core in numpy 2)
_RECONSTRUCT = np.zeros(0).__reduce__()[0]
_FROMBUFFER = np.zeros(1).__reduce_ex__(5)[0]


def _codecs_encode(obj: str, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    """What Python 3 pickles of ``bytes`` at protocol 2 call: ``_codecs.encode(text, "latin1")``."""
    return obj.encode(encoding, errors)


# the only globals a dataset pickle may name: (module, name) -> what it resolves to
_ALLOWED: dict[tuple[str, str], Any] = {
    ("numpy.core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy._core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy.core.numeric", "_frombuffer"): _FROMBUFFER,
    ("numpy._core.numeric", "_frombuffer"): _FROMBUFFER,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("_codecs", "encode"): _codecs_encode,
}


class _NumpyOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"global '{module}.{name}' is not allowed: dataset pickles may only hold numpy arrays and "
                "Python lists, dicts, strings and numbers"
            ) from None


def load_numpy_pickle(path: str, encoding: str = "latin1") -> Any:
    """Unpickle ``path``, allowing only numpy array reconstruction (``encoding`` for Python 2 strings)."""
    with open(path, "rb") as f:
        try:
            return _NumpyOnlyUnpickler(f, encoding=encoding).load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(f"{path}: {e}") from None
        except (EOFError, ValueError, TypeError) as e:
            raise RuntimeError(f"{path}: not a readable dataset pickle ({type(e).__name__}: {e})") from None
