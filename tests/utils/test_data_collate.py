"""default_collate / default_convert against torch.utils.data: output types, dtypes, values and nesting."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import toolkit
import toolkit.utils.data as kud
from toolkit.utils.data.collate import collate, default_collate_fn_map

Point = collections.namedtuple("Point", ["x", "y"])


def assert_same(ours, theirs):
    """Same structure (container types, keys), and tensors with the same dtype, shape and values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, toolkit.Tensor), f"{type(ours)} is not a Tensor"
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        return
    if isinstance(theirs, np.ndarray):
        np.testing.assert_array_equal(ours, theirs)
        assert ours.dtype == theirs.dtype
        return
    assert type(ours) is type(theirs), f"{type(ours)} != {type(theirs)}"
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            assert_same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    else:
        assert ours == theirs


def _to_torch(sample):
    """The same sample with toolkit tensors replaced by torch tensors (containers rebuilt)."""
    if isinstance(sample, toolkit.Tensor):
        return torch.from_numpy(sample.numpy().copy())
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(_to_torch(s) for s in sample))
    if isinstance(sample, (list, tuple)):
        return type(sample)(_to_torch(s) for s in sample)
    if isinstance(sample, dict):
        return type(sample)((k, _to_torch(v)) for k, v in sample.items())
    return sample


BATCHES = {
    "ints": [1, 2, 3],
    "floats": [1.5, 2.0, -3.25],
    "bools": [True, False, True],
    "strings": ["a", "bc", "d"],
    "bytes": [b"a", b"b"],
    "np_float32_scalars": [np.float32(1.5), np.float32(2.5)],
    "np_int16_scalars": [np.int16(1), np.int16(-2)],
    "np_float64_scalars": [np.float64(0.5), np.float64(2.0)],
    "np_bool_scalars": [np.bool_(True), np.bool_(False)],
    "np_arrays": [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), dtype=np.float32)],
    "np_int_arrays": [np.arange(3), np.arange(3, 6)],
    "np_noncontiguous": [np.arange(12.0).reshape(3, 4).T, np.zeros((4, 3))],
    "tensors_float": [toolkit.arange(4.0).reshape(2, 2), toolkit.ones(2, 2)],
    "tensors_int": [toolkit.arange(3), toolkit.arange(3, 6)],
    "tensors_0d": [toolkit.tensor(1.0), toolkit.tensor(2.0)],
    "tensors_bool": [toolkit.tensor([True, False]), toolkit.tensor([False, False])],
    "tuples": [(1, 2.0, "a"), (3, 4.0, "b")],
    "lists": [[1, 2], [3, 4]],
    "dicts": [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
    "nested": [{"x": (toolkit.ones(2), {"y": 1})}, {"x": (toolkit.zeros(2), {"y": 2})}],
    "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
    "namedtuple_of_tensors": [Point(toolkit.ones(2), "p"), Point(toolkit.zeros(2), "q")],
    "ordered_dict": [collections.OrderedDict(a=1), collections.OrderedDict(a=2)],
}


@pytest.mark.parametrize("name", list(BATCHES))
def test_default_collate_matches_torch(name):
    batch = BATCHES[name]
    assert_same(kud.default_collate(batch), tud.default_collate(_to_torch(batch)))


@pytest.mark.parametrize("name", list(BATCHES))
def test_default_convert_matches_torch(name):
    batch = BATCHES[name]
    assert_same(kud.default_convert(batch), tud.default_convert(_to_torch(batch)))


def test_default_convert_single_samples():
    for sample in [np.arange(3, dtype=np.int16), np.float64(2.0), Point(np.zeros(2), 1), (np.ones(2), "s"), 5,
                   np.array(["a", "b"])]:
        assert_same(kud.default_convert(sample), tud.default_convert(sample))


def test_collate_dtypes_follow_torch_rules():
    out = kud.default_collate([(1, 1.0, True), (2, 2.0, False)])
    assert isinstance(out, list)
    assert [t.dtype for t in out] == [toolkit.int64, toolkit.float64, toolkit.bool]


def test_collate_errors_as_torch():
    class Thing:
        pass

    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                                        "lists; found <class '.*Thing'>"):
        kud.default_collate([Thing(), Thing()])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                                        "lists; found <U1"):
        kud.default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        kud.default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        kud.default_collate([toolkit.ones(2), toolkit.ones(3)])


def test_collate_with_custom_fn_map():
    class Box:
        def __init__(self, v):
            self.v = v

    fn_map = {**default_collate_fn_map, Box: lambda batch, *, collate_fn_map: sum(b.v for b in batch)}
    out = collate([{"b": Box(1), "n": 1}, {"b": Box(2), "n": 2}], collate_fn_map=fn_map)
    assert out["b"] == 3 and out["n"].tolist() == [1, 2]


def test_collated_numpy_array_shares_no_dtype_change():
    a = np.arange(4, dtype=np.uint8)
    out = kud.default_collate([a, a])
    assert out.dtype == toolkit.uint8 and out.shape == (2, 4)
