"""Weights-only loading: the allow-list, the user's safe globals, and hostile or broken files of PyTorch's layout."""

from __future__ import annotations

import io
import os
import pickle
import random

import numpy as np
import pytest
import torch

import toolkit
from toolkit.serialization import pickler, torch_format


class Config:
    """A user class saved inside a checkpoint."""

    def __init__(self, lr: float = 0.1) -> None:
        self.lr = lr


class Payload:
    """What a hostile file holds: unpickling it would run a shell command."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _bytes(obj) -> bytes:
    buf = io.BytesIO()
    toolkit.save(obj, buf)
    return buf.getvalue()


def _checkpoint(pickled: bytes, records=()) -> bytes:
    buf = io.BytesIO()
    torch_format.write_checkpoint(buf, "archive", pickled, list(records))
    return buf.getvalue()


@pytest.fixture(autouse=True)
def _no_safe_globals():
    toolkit.serialization.clear_safe_globals()
    yield
    toolkit.serialization.clear_safe_globals()


# ------------------------------------------------------------------------------------ code never runs
def test_os_system_payload_refused_by_toolkit_and_torch(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "hostile.pt"
    toolkit.save({"w": toolkit.ones(2), "x": Payload(str(marker))}, path)
    for kwargs in ({}, {"weights_only": True}):
        with pytest.raises(pickle.UnpicklingError, match="(?s)hostile.pt.*GLOBAL posix.system whose module posix "
                                                         "is blocked"):
            toolkit.load(path, **kwargs)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path, weights_only=True)
    with toolkit.serialization.safe_globals([os.system]):  # blocked modules stay blocked
        with pytest.raises(pickle.UnpicklingError, match="is blocked"):
            toolkit.load(path)
    assert not marker.exists()


@pytest.mark.parametrize("payload", [
    b"\x80\x02cbuiltins\neval\nX\x04\x00\x00\x001+1\x85R.",            # GLOBAL builtins.eval, REDUCE
    b"\x80\x02(X\x01\x00\x00\x00xibuiltins\nprint\n.",                   # INST
    b"\x80\x02cbuiltins\nprint\n)\x81.",                                  # NEWOBJ of a builtin
    b"\x80\x02ccollections\nOrderedDict\n)R}X\x03\x00\x00\x00abc\x8a\x01\x01sb.",  # harmless BUILD: allowed
    b"\x80\x02cbuiltins\nbytearray\nJ\x00\x00\x00\x7f\x85R.",           # bytearray(2**31): a memory bomb
    b"\x80\x02]K\x01a)K\x02a.",                                            # APPEND to a tuple
])
def test_hostile_opcodes(payload, tmp_path):
    path = tmp_path / "opcodes.pt"
    path.write_bytes(_checkpoint(payload))
    if b"OrderedDict" in payload:
        assert toolkit.load(path).abc == 1
        return
    with pytest.raises((pickle.UnpicklingError, RuntimeError), match="opcodes.pt"):
        toolkit.load(path)


# ------------------------------------------------------------------------------------ the allow-list
def test_unsupported_global_message_and_safe_globals(tmp_path):
    path = tmp_path / "config.pt"
    toolkit.save({"cfg": Config(0.5), "w": toolkit.ones(2)}, path)
    with pytest.raises(pickle.UnpicklingError) as info:
        toolkit.load(path)
    msg = str(info.value)
    name = f"{__name__}.Config"
    assert f"Unsupported global: GLOBAL {name} was not an allowed global by default" in msg
    assert f"`toolkit.serialization.add_safe_globals([{name}])`" in msg
    assert "defaults to `weights_only=True`" in msg and "config.pt" in msg
    with pytest.raises(pickle.UnpicklingError) as info:
        toolkit.load(path, weights_only=True)
    assert "defaults to" not in str(info.value) and "Unsupported global" in str(info.value)
    with toolkit.serialization.safe_globals([Config]):
        assert toolkit.serialization.get_safe_globals() == [Config]
        assert toolkit.load(path)["cfg"].lr == 0.5
    assert toolkit.serialization.get_safe_globals() == []
    toolkit.serialization.add_safe_globals([Config])
    assert toolkit.load(path)["cfg"].lr == 0.5
    toolkit.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        toolkit.load(path)
    assert toolkit.load(path, weights_only=False)["cfg"].lr == 0.5
    with pytest.raises(ValueError, match="Expected tuple of length 2"):
        toolkit.serialization.add_safe_globals([(Config,)])
    toolkit.serialization.add_safe_globals([(Config, f"{__name__}.Config")])
    assert toolkit.load(path)["cfg"].lr == 0.5


def test_same_messages_as_torch_for_the_same_file(tmp_path):
    path = tmp_path / "config.pt"
    toolkit.save({"cfg": Config()}, path)
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(path)
    with pytest.raises(pickle.UnpicklingError) as ours:
        toolkit.load(path)
    assert f"GLOBAL {__name__}.Config was not an allowed global by default" in str(theirs.value)
    assert f"GLOBAL {__name__}.Config was not an allowed global by default" in str(ours.value)


# ------------------------------------------------------------------------------------ broken and lying files
def _load_error(data: bytes, tmp_path, **kwargs) -> str:
    path = tmp_path / "broken.pt"
    path.write_bytes(data)
    with pytest.raises(RuntimeError) as info:
        toolkit.load(path, **kwargs)
    assert "broken.pt" in str(info.value) and "not a valid checkpoint" in str(info.value)
    return str(info.value)


def test_truncated_and_corrupt_files(tmp_path):
    good = _bytes({"w": toolkit.arange(64.0)})
    for cut in (len(good) // 2, len(good) - 10, 3):
        msg = _load_error(good[:cut], tmp_path)
        assert "truncated" in msg or "not a zip archive" in msg
    data = bytearray(good)
    pos = good.index(np.arange(64.0, dtype=np.float32).tobytes()[40:48])
    data[pos] ^= 0xFF
    assert "CRC" in _load_error(bytes(data), tmp_path)


def test_storage_records_that_lie(tmp_path):
    pickled, records = pickler.dumps({"w": toolkit.arange(16.0)})
    (key, flat), = records
    assert "holds 32 bytes but the pickle says 16 elements" in _load_error(
        _checkpoint(pickled, [(key, flat[:8])]), tmp_path)
    assert "missing entry archive/data/0" in _load_error(_checkpoint(pickled, []), tmp_path)
    view = toolkit.arange(16.0)[4:]
    pickled, records = pickler.dumps(view)
    records = [(k, f[:8]) for k, f in records]  # 8 elements left, the view starts at 4 and takes 12
    lying = pickled.replace(b"K\x10", b"K\x08")  # the persistent id's element count, 16 -> 8
    assert "needs 64 bytes but its storage '0' holds 32" in _load_error(_checkpoint(lying, records), tmp_path)


def test_zero_strides_bounded_by_the_budget(tmp_path):
    pickled, records = pickler.dumps(toolkit.ones(1).expand(1000, 3))
    assert toolkit.load(io.BytesIO(_checkpoint(pickled, records))).shape == (1000, 3)
    assert "max_bytes" in _load_error(_checkpoint(pickled, records), tmp_path, max_bytes=100)


def test_fuzzed_files_give_documented_errors(tmp_path):
    x = toolkit.arange(12.0).reshape(3, 4)
    good = _bytes({"x": x, "t": x.t(), "n": [1, 2.5, (3, "s")], "p": toolkit.nn.Parameter(toolkit.ones(2))})
    rng = random.Random(5)
    path = tmp_path / "fuzz.pt"
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(300):
        blob = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            blob[rng.randrange(len(blob))] = rng.randrange(256)
        path.write_bytes(bytes(blob))
        try:
            toolkit.load(path)
            outcomes["loaded"] += 1
        except (RuntimeError, pickle.UnpicklingError) as e:
            assert "fuzz.pt" in str(e), e
            outcomes["refused"] += 1
    assert outcomes["refused"] > 50 and outcomes["loaded"] > 5, outcomes


def test_fuzzed_pickles_give_documented_errors(tmp_path):
    """Pickle bytes changed under a valid CRC: the restricted unpickler meets them."""
    pickled, records = pickler.dumps({"x": toolkit.arange(6.0).reshape(2, 3), "n": [1, (2, "s")], "d": {"k": 1.5}})
    rng = random.Random(11)
    path = tmp_path / "fuzz.pt"
    for _ in range(300):
        blob = bytearray(pickled)
        for _ in range(rng.randint(1, 3)):
            blob[rng.randrange(len(blob))] = rng.randrange(256)
        path.write_bytes(_checkpoint(bytes(blob), records))
        try:
            toolkit.load(path)
        except (RuntimeError, pickle.UnpicklingError) as e:
            assert "fuzz.pt" in str(e), e


def test_pytorch_environment_switches_choose_the_default(tmp_path, monkeypatch):
    # Programs written for torch<2.6 set TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD to keep loading numpy arrays; the
    # other switch forces weights-only loading even when False is passed. Both read as torch.load reads them.
    path = tmp_path / "array.pt"
    torch.save(np.arange(3.0), path)
    with pytest.raises(pickle.UnpicklingError):
        toolkit.load(path)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    np.testing.assert_array_equal(toolkit.load(path), torch.load(path))
    with pytest.raises(pickle.UnpicklingError):
        toolkit.load(path, weights_only=True)  # an explicit choice stays
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "true")
    for loader in (toolkit.load, torch.load):
        with pytest.raises(pickle.UnpicklingError):
            loader(path, weights_only=False)
