"""toolkit.save / toolkit.load: round trips, shared storages, corrupt files and atomic saves.

Files of PyTorch's layout against real ``torch`` are in tests/serialization/; the manifest archives of earlier
saves (still read) are written here with ``serialization.save_manifest``.
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import toolkit
from toolkit import serialization
from toolkit._core.storage import Storage

ALL_DTYPES = [toolkit.bool, toolkit.uint8, toolkit.int8, toolkit.int16, toolkit.int32, toolkit.int64,
              toolkit.float16, toolkit.float32, toolkit.float64]


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    toolkit.save(obj, buf)
    buf.seek(0)
    return toolkit.load(buf, **load_kwargs)


def _bytes(obj) -> bytes:
    buf = io.BytesIO()
    toolkit.save(obj, buf)
    return buf.getvalue()


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_roundtrip_dtypes(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) * 50).astype(dtype.np)
    t = toolkit.from_numpy(a)
    out = _roundtrip(t)
    assert out.dtype == dtype and out.shape == (3, 4) and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), a)


def test_roundtrip_shapes():
    for t in (toolkit.tensor(3.5), toolkit.zeros(0, 3), toolkit.zeros(2, 0, dtype=toolkit.int64),
              toolkit.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1), toolkit.arange(10)[::3]):
        out = _roundtrip(t)
        assert out.shape == t.shape and out.dtype == t.dtype
        assert out.stride() == t.stride() or t.numel() == 0
        np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_views_share_one_storage():
    x = toolkit.arange(12.0).reshape(3, 4)
    obj = {"x": x, "t": x.t(), "row": x[1], "col": x[:, 2], "tail": x.view(-1)[5:]}
    data = _bytes(obj)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        entries = [n for n in zf.namelist() if "/data/" in n]
        assert entries == ["archive/data/0"] and zf.getinfo("archive/data/0").file_size == 48
    out = toolkit.load(io.BytesIO(data))
    storages = {id(v.untyped_storage()) for v in out.values()}
    assert len(storages) == 1
    assert out["t"].stride() == (1, 4) and out["row"].storage_offset() == 4 and out["col"].stride() == (4,)
    assert out["col"].storage_offset() == 2 and out["tail"].storage_offset() == 5
    out["x"][1, 2] = 100.0  # writes through every view, as the saved tensors did
    assert float(out["row"][2]) == 100.0 and float(out["t"][2, 1]) == 100.0
    assert float(out["col"][1]) == 100.0 and float(out["tail"][1]) == 100.0


def test_view_of_larger_storage_keeps_whole_storage():
    base = toolkit.arange(100.0)
    small = base[10:12]
    out = _roundtrip(small)
    assert out.storage_offset() == 10
    np.testing.assert_array_equal(out.numpy(), [10.0, 11.0])


def test_fortran_ordered_storage():
    t = toolkit.from_numpy(np.asfortranarray(np.arange(12.0).reshape(3, 4)))
    a, b = _roundtrip([t, t[:, 1]])
    assert a.stride() == (1, 3) and b.storage_offset() == 3 and a.untyped_storage() is b.untyped_storage()
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    np.testing.assert_array_equal(b.numpy(), [1.0, 5.0, 9.0])


def test_reinterpreted_dtype_views_refused_as_in_pytorch():
    x = toolkit.arange(4, dtype=toolkit.int32)
    with pytest.raises(RuntimeError, match="Cannot save multiple tensors or storages that view the same data as "
                                           "different types"):
        _bytes([x, x.view(toolkit.float32)])
    a, b = _roundtrip([x, x.view(toolkit.float32).clone()])
    np.testing.assert_array_equal(b.numpy(), x.view(toolkit.float32).numpy())


def test_same_tensor_twice_is_one_object():
    x = toolkit.ones(3)
    a, b = _roundtrip((x, x))
    assert a is b


def test_requires_grad_restored():
    w = toolkit.randn(3, 2, requires_grad=True)
    out = _roundtrip({"w": w, "frozen": w.detach()})
    assert out["w"].requires_grad and out["w"].is_leaf and not out["frozen"].requires_grad
    out["w"].sum().backward()
    np.testing.assert_array_equal(out["w"].grad.numpy(), np.ones((3, 2), np.float32))


def test_non_leaf_saved_as_leaf_data():
    w = toolkit.ones(2, requires_grad=True)
    y = w * 2
    out = _roundtrip(y)
    assert out.requires_grad and out.is_leaf
    np.testing.assert_array_equal(out.detach().numpy(), [2.0, 2.0])


def test_nested_containers():
    obj = OrderedDict([
        ("b", [1, -2**70, 2.5, float("nan"), float("inf"), -float("inf"), "s", True, False, None]),
        ("a", (toolkit.float16, toolkit.device("cpu"), toolkit.Size([2, 3]), b"\x00\xff")),
        ("c", {3: {"deep": [toolkit.tensor([1, 2])]}, (1, 2): "tuple key", None: 0.1}),
    ])
    out = _roundtrip(obj)
    assert type(out) is OrderedDict and list(out) == ["b", "a", "c"]
    b = out["b"]
    assert b[:3] == [1, -2**70, 2.5] and math.isnan(b[3]) and b[4:6] == [math.inf, -math.inf]
    assert b[6:] == ["s", True, False, None] and type(b[7]) is bool and type(b[2]) is float
    assert out["a"] == (toolkit.float16, toolkit.device("cpu"), toolkit.Size([2, 3]), b"\x00\xff")
    assert type(out["a"]) is tuple and type(out["a"][2]) is toolkit.Size
    assert out["c"][(1, 2)] == "tuple key" and out["c"][None] == 0.1
    np.testing.assert_array_equal(out["c"][3]["deep"][0].numpy(), [1, 2])
    assert type(_roundtrip({"k": 1})) is dict


def test_state_dict_metadata_kept():
    sd = OrderedDict(weight=toolkit.ones(2))
    sd._metadata = OrderedDict([("", {"version": 1})])
    out = _roundtrip(sd)
    assert out._metadata == {"": {"version": 1}}


def test_numpy_objects_need_weights_only_false_or_an_allowlist():
    """numpy scalars and arrays pickle as numpy pickles them; as in PyTorch, weights-only loads refuse them."""
    obj = [np.int64(3), np.float32(0.5), np.arange(3.0)]
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL numpy"):
        _roundtrip(obj)
    out = _roundtrip(obj, weights_only=False)
    assert out[:2] == [3, 0.5] and type(out[1]) is np.float32
    np.testing.assert_array_equal(out[2], np.arange(3.0))


def test_sets_and_unpicklable_objects():
    assert _roundtrip({"x": [1, {2}]}) == {"x": [1, {2}]}
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        _bytes({"f": lambda: 0})


def test_path_and_pathlike(tmp_path):
    x = toolkit.arange(5.0)
    toolkit.save({"x": x}, str(tmp_path / "a.pt"))
    toolkit.save({"x": x}, tmp_path / "b.pt")
    for name in ("a.pt", "b.pt"):
        np.testing.assert_array_equal(toolkit.load(tmp_path / name)["x"].numpy(), x.numpy())
        np.testing.assert_array_equal(toolkit.load(str(tmp_path / name))["x"].numpy(), x.numpy())
    assert sorted(os.listdir(tmp_path)) == ["a.pt", "b.pt"]  # no temporary files left behind
    with open(tmp_path / "a.pt", "rb") as f:
        assert toolkit.load(f)["x"].shape == (5,)
    with pytest.raises(FileNotFoundError):
        toolkit.load(tmp_path / "missing.pt")
    with pytest.raises(RuntimeError, match="Parent directory .*nope does not exist"):
        toolkit.save(x, tmp_path / "nope" / "x.pt")


def test_file_object_at_offset():
    buf = io.BytesIO()
    buf.write(b"header")
    toolkit.save(toolkit.ones(2), buf)
    buf.seek(6)
    np.testing.assert_array_equal(toolkit.load(buf).numpy(), [1.0, 1.0])


def test_map_location_forms():
    x = toolkit.arange(3.0)
    data = _bytes({"x": x})
    seen = []

    def fn(storage, location):
        seen.append((isinstance(storage, Storage), location))
        return storage

    for ml in ("cpu", toolkit.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "cpu"}, fn, lambda s, loc: None):
        out = toolkit.load(io.BytesIO(data), map_location=ml)
        assert out["x"].device == toolkit.device("cpu")
        np.testing.assert_array_equal(out["x"].numpy(), x.numpy())
    assert seen == [(True, "cpu")]
    if not toolkit.cuda.is_available():
        with pytest.raises(RuntimeError, match="deserialize object on a CUDA device but toolkit.cuda.is_available"):
            toolkit.load(io.BytesIO(data), map_location="cuda")
    with pytest.raises(TypeError, match="map_location should be a str, device, dict or callable"):
        toolkit.load(io.BytesIO(data), map_location=3)


def test_parameters_and_module_state_dict():
    nn = toolkit.nn
    if not isinstance(getattr(nn, "Parameter", None), type) or not isinstance(getattr(nn, "Linear", None), type):
        pytest.skip("toolkit.nn.Parameter / nn.Linear not available yet")
    p = nn.Parameter(toolkit.ones(2, 3))
    out = _roundtrip({"p": p, "frozen": nn.Parameter(toolkit.zeros(1), requires_grad=False)})
    assert type(out["p"]) is nn.Parameter and out["p"].requires_grad
    assert type(out["frozen"]) is nn.Parameter and not out["frozen"].requires_grad
    toolkit.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    sd = _roundtrip(model.state_dict())
    assert list(sd) == list(model.state_dict())
    fresh = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    fresh.load_state_dict(sd)
    x = toolkit.randn(5, 4)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())


# ------------------------------------------------------------------------------------------- manifest archives
def _manifest_bytes(obj) -> bytes:
    buf = io.BytesIO()
    serialization.save_manifest(obj, buf)
    return buf.getvalue()


def test_manifest_archives_still_load():
    x = toolkit.arange(12.0).reshape(3, 4)
    out = toolkit.load(io.BytesIO(_manifest_bytes({"x": x, "t": x.t(), "p": toolkit.nn.Parameter(toolkit.ones(2))})))
    assert out["t"].stride() == (1, 4) and out["t"].untyped_storage() is out["x"].untyped_storage()
    assert type(out["p"]) is toolkit.nn.Parameter
    np.testing.assert_array_equal(out["x"].numpy(), x.numpy())
    for weights_only in (True, False):  # a manifest holds no pickle: both read it the same way
        assert toolkit.load(io.BytesIO(_manifest_bytes({"n": 3})), weights_only=weights_only) == {"n": 3}


def _rewrite(data: bytes, edit) -> bytes:
    """Re-pack an archive with its manifest changed by ``edit``."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            payload = src.read(name)
            if name.endswith("manifest.json"):
                manifest = json.loads(payload)
                edit(manifest)
                payload = json.dumps(manifest).encode()
            dst.writestr(name, payload)
    return out.getvalue()


@pytest.fixture
def good() -> bytes:
    return _manifest_bytes({"w": toolkit.arange(64.0).reshape(8, 8), "n": 3})


def _load_error(data: bytes, tmp_path) -> str:
    path = tmp_path / "bad.pt"
    path.write_bytes(data)
    with pytest.raises(RuntimeError) as info:
        toolkit.load(path)
    assert "bad.pt" in str(info.value)
    return str(info.value)


def test_truncated_file(good, tmp_path):
    for cut in (len(good) // 2, len(good) - 10, 3):
        msg = _load_error(good[:cut], tmp_path)
        assert "truncated" in msg or "not a zip archive" in msg


def test_not_a_zip(tmp_path):
    assert "not a zip archive" in _load_error(b"hello, this is not a checkpoint" * 10, tmp_path)
    assert "not a zip archive" in _load_error(b"", tmp_path)


def test_corrupt_data_fails_crc(good, tmp_path):
    data = bytearray(good)
    pos = bytes(good).index(np.arange(64.0, dtype=np.float32).tobytes()[40:48])
    data[pos] ^= 0xFF
    assert "CRC" in _load_error(bytes(data), tmp_path)


def test_wrong_version_and_format(good, tmp_path):
    msg = _load_error(_rewrite(good, lambda m: m.update(version=99)), tmp_path)
    assert "format version 99 was written by a newer toolkit" in msg
    msg = _load_error(_rewrite(good, lambda m: m.update(format="something.else")), tmp_path)
    assert "unknown format 'something.else'" in msg
    msg = _load_error(_rewrite(good, lambda m: m.update(version="1")), tmp_path)
    assert "bad format version '1'" in msg


def test_manifest_schema_errors(good, tmp_path):
    def shape_too_big(m):
        m["tensors"][0]["shape"] = [9, 9]

    assert "of shape (9, 9) needs 292 bytes but its storage holds 256" in _load_error(_rewrite(good, shape_too_big), tmp_path)

    def bad_dtype(m):
        m["tensors"][0]["dtype"] = "complex32"

    assert "unknown dtype 'complex32'" in _load_error(_rewrite(good, bad_dtype), tmp_path)

    def bad_size(m):
        m["storages"]["0"]["nbytes"] = 1000

    assert "holds 256 bytes but the manifest says 1000" in _load_error(_rewrite(good, bad_size), tmp_path)

    def bad_node(m):
        m["root"]["items"][0][1] = {"$": "pickle", "payload": "cos\nsystem\n"}

    assert "unknown manifest node type 'pickle'" in _load_error(_rewrite(good, bad_node), tmp_path)

    def negative_stride(m):
        m["tensors"][0]["stride"] = [-8, 1]

    assert "bad strides" in _load_error(_rewrite(good, negative_stride), tmp_path)

    def no_tensors(m):
        del m["tensors"]

    assert "no tensor table" in _load_error(_rewrite(good, no_tensors), tmp_path)


def test_missing_or_invalid_manifest(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/other.txt", b"hello")
    msg = _load_error(buf.getvalue(), tmp_path)
    assert "no data.pkl" in msg and "archive/manifest.json" in msg
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/manifest.json", b"{not json")
    assert "manifest is not valid JSON" in _load_error(buf.getvalue(), tmp_path)


def test_pickle_module_as_in_pytorch():
    data = _bytes({"x": toolkit.ones(2)})
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module is specified"):
        toolkit.load(io.BytesIO(data), pickle_module=pickle, weights_only=True)
    out = toolkit.load(io.BytesIO(data), pickle_module=pickle)  # a pickle_module means weights_only=False
    np.testing.assert_array_equal(out["x"].numpy(), [1.0, 1.0])
    with pytest.raises(TypeError, match="pickle_module 'json' is not supported"):
        toolkit.save(1, io.BytesIO(), pickle_module=json)


# ------------------------------------------------------------------------------------------- atomic save
# Saves killed mid-write (old checkpoint intact, no temporary file left) are tested in test_serialization_security.
def test_failed_save_leaves_no_file(tmp_path):
    target = tmp_path / "x.pt"
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        toolkit.save({"bad": lambda: 0}, target)
    assert list(tmp_path.iterdir()) == []


def test_format_constants():
    assert serialization.FORMAT_VERSION == 1 and serialization.FORMAT_NAME == "toolkit.checkpoint"
    with zipfile.ZipFile(io.BytesIO(_manifest_bytes(toolkit.ones(2)))) as zf:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        manifest = json.loads(zf.read("archive/manifest.json"))
    assert manifest["format"] == "toolkit.checkpoint" and manifest["version"] == 1
    assert manifest["tensors"][0] == {"dtype": "float32", "shape": [2], "stride": [1], "storage": "0", "offset": 0,
                                      "requires_grad": False, "parameter": False, "device": "cpu"}


def test_pytorch_layout_of_new_saves(tmp_path):
    toolkit.save({"w": toolkit.ones(2)}, tmp_path / "model.pt")
    with zipfile.ZipFile(tmp_path / "model.pt") as zf:
        assert zf.namelist() == ["model/data.pkl", "model/.format_version", "model/.storage_alignment",
                                 "model/byteorder", "model/data/0", "model/version", "model/.data/serialization_id"]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        assert zf.read("model/byteorder") == b"little" and zf.read("model/version") == b"3\n"
        assert zf.read("model/data/0") == np.ones(2, np.float32).tobytes()
        assert zf.read("model/data.pkl").startswith(b"\x80\x02")
