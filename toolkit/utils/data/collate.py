"""Collation as ``torch.utils.data._utils.collate``: turn a list of samples into a batch.

``default_collate`` stacks tensors, turns numpy arrays and Python numbers into tensors with PyTorch's dtypes
(float -> float64, int -> int64, bool -> bool), leaves strings as lists, and recurses into dicts, namedtuples and
sequences (tuples come back as lists, as in PyTorch)::

    default_collate([(1, 2.0, "a"), (3, 4.0, "b")])   # [tensor([1, 3]), tensor([2., 4.], dtype=float64), ['a', 'b']]

``collate(batch, collate_fn_map=...)`` is the extensible form: map a type to a function for custom elements.
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

import toolkit

from ...tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _toolkit():
    return toolkit


def _numpy_to_tensor(data) -> Tensor:
    """A numpy array or scalar as a tensor of the same dtype (sharing memory with arrays)."""
    return _toolkit().from_numpy(np.ascontiguousarray(data) if isinstance(data, np.ndarray) else np.asarray(data))


def _map_values(data, fn):
    """Apply ``fn`` to a mapping's values, keeping the mapping's type where it can be rebuilt."""
    try:
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update({key: fn(key) for key in data})
            return clone
        return type(data)({key: fn(key) for key in data})
    except TypeError:
        return {key: fn(key) for key in data}


def _map_sequence(data, items: list):
    """Rebuild a sequence like ``data`` holding ``items`` (a list if its type cannot be rebuilt)."""
    try:
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(data)(items)
    except TypeError:
        return items


def default_convert(data):
    """Convert numpy arrays and scalars (also inside containers) to tensors; leave everything else unchanged.

    The collate function of a DataLoader with ``batch_size=None`` (no automatic batching).
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return _numpy_to_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _map_values(data, lambda key: default_convert(data[key]))
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _map_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None = None):
    """Collate ``batch`` by the type of its first element: ``collate_fn_map`` first, then containers recursively."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _map_values(elem, lambda key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map))
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return collated
        return _map_sequence(elem, collated)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None) -> Tensor:
    """Stack tensors along a new first dimension."""
    return _toolkit().stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """Numpy arrays become tensors, then are collated as tensors (string and object arrays are refused)."""
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_numpy_to_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None) -> Tensor:
    """Numpy scalars become a 1-d tensor of their dtype."""
    return _numpy_to_tensor(np.asarray(list(batch)))


def collate_float_fn(batch, *, collate_fn_map=None) -> Tensor:
    """Python floats become float64, as in PyTorch (not the default float32)."""
    tk = _toolkit()
    return tk.tensor(list(batch), dtype=tk.float64)


def collate_int_fn(batch, *, collate_fn_map=None) -> Tensor:
    """Python ints become int64 (bools, a subclass of int, become bool)."""
    return _toolkit().tensor(list(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    """Strings and bytes stay as they are: the batch is their list."""
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Collate a list of samples into a batch the way ``torch.utils.data.default_collate`` does."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
