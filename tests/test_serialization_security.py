"""toolkit.load against hostile and broken files, and toolkit.save against being killed.

Most files here are manifest archives (the format of earlier saves, still read); hostile files of PyTorch's
layout (pickles that would run code, lying storage records) are in tests/serialization/.

The hostile files are zip archives written byte by byte here (``_zip``), so a header can claim what it likes:
decompression bombs, sizes that lie, manifests that lie about shapes, nest deeply or hold huge numbers. Each must
give the one documented error, a RuntimeError naming the file, before anything large is allocated; loading stays
linear in the number of records; a killed save leaves no temporary file behind.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import pickle
import random
import signal
import struct
import subprocess
import sys
import textwrap
import time
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

import toolkit
from toolkit import serialization
from toolkit.serialization import atomic

GiB = 1 << 30
MiB = 1 << 20


# ------------------------------------------------------------------------------------ zip files by hand
_LOCAL = struct.Struct("<4s2B4HL2L2H")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_END = struct.Struct("<4s4H2LH")


def _entry(name: str, data: bytes, *, method: int = zipfile.ZIP_STORED, usize: int | None = None,
           csize: int | None = None, crc: int | None = None) -> dict:
    """A zip entry: ``data`` as it lies in the file (already compressed for deflated entries) and the sizes and
    CRC the headers claim (by default the true ones of stored data)."""
    return {"name": name, "data": data, "method": method, "usize": len(data) if usize is None else usize,
            "csize": len(data) if csize is None else csize, "crc": zlib.crc32(data) if crc is None else crc}


def _zip(*entries: dict) -> bytes:
    """An archive of ``entries`` with exactly the headers they claim (zip64 fields where a size needs them)."""
    out, central = bytearray(), bytearray()
    for e in entries:
        name = e["name"].encode()
        big = [v for v in (e["usize"], e["csize"]) if v >= 0xFFFFFFFF]
        extra = struct.pack(f"<HH{len(big)}Q", 1, 8 * len(big), *big) if big else b""
        u32, c32 = (min(v, 0xFFFFFFFF) for v in (e["usize"], e["csize"]))
        offset = len(out)
        out += _LOCAL.pack(b"PK\x03\x04", 45, 0, 0, e["method"], 0, 0x21, e["crc"], c32, u32, len(name), len(extra))
        out += name + extra + e["data"]
        central += _CENTRAL.pack(b"PK\x01\x02", 45, 3, 45, 0, 0, e["method"], 0, 0x21, e["crc"], c32, u32, len(name),
                                 len(extra), 0, 0, 0, 0, offset) + name + extra
    cd_offset = len(out)
    out += central
    out += _END.pack(b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), cd_offset, 0)
    return bytes(out)


def _repeated_deflate(chunk: bytes, count: int) -> tuple[bytes, int]:
    """A raw deflate stream of ``chunk`` repeated ``count`` times, and its CRC, without compressing it all:
    a full flush makes every chunk's compressed form the same bytes."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    assert again == first
    last = c.compress(chunk) + c.flush()
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    return first * (count - 1) + last, crc


def _manifest(tensors=(), storages=None, root=None, **extra) -> bytes:
    m = {"format": "toolkit.checkpoint", "version": 1, "byteorder": "little",
         "storages": storages or {}, "tensors": list(tensors), "root": root, **extra}
    return json.dumps(m).encode()


def _record(shape, stride, dtype="float32", storage="0", offset=0, device="cpu") -> dict:
    return {"dtype": dtype, "shape": shape, "stride": stride, "storage": storage, "offset": offset,
            "requires_grad": False, "parameter": False, "device": device}


def _one_tensor_file(data: bytes, shape, stride, **record) -> bytes:
    """A checkpoint of one tensor over storage ``data`` with the given shape and strides."""
    manifest = _manifest([_record(shape, stride, **record)], {"0": {"nbytes": len(data)}},
                         {"$": "tensor", "index": 0})
    return _zip(_entry("archive/manifest.json", manifest), _entry("archive/data/0", data))


def _root_file(root_json: str) -> bytes:
    """A checkpoint whose manifest's root is the given JSON text, spliced in verbatim."""
    text = _manifest(root=None).decode().replace('"root": null', '"root": ' + root_json)
    return _zip(_entry("archive/manifest.json", text.encode()))


def _load_error(data: bytes, tmp_path, **kwargs) -> RuntimeError:
    """Load ``data`` from a file; it must fail with the documented error naming the file."""
    path = tmp_path / "hostile.pt"
    path.write_bytes(data)
    with pytest.raises(RuntimeError) as info:
        toolkit.load(path, **kwargs)
    assert "hostile.pt" in str(info.value) and "not a valid checkpoint" in str(info.value)
    assert info.value.__cause__ is not None
    return info.value


def _peak_while(fn) -> int:
    """Peak bytes traced (numpy's buffers included) while ``fn`` runs."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------------------------ linear time
class _CountingDict(dict):
    """A JSON object that counts how often the loader looks into it."""

    reads = 0

    def get(self, *args):
        _CountingDict.reads += 1
        return super().get(*args)

    def __getitem__(self, key):
        _CountingDict.reads += 1
        return super().__getitem__(key)


def _manifest_reads(n: int) -> int:
    """Lookups into manifest objects while loading a state dict of ``n`` small tensors."""
    buf = io.BytesIO()
    serialization.save_manifest({f"layer{i}.weight": toolkit.ones(2) for i in range(n)}, buf)
    with zipfile.ZipFile(buf) as zf:
        manifest = json.loads(zf.read("archive/manifest.json"), object_pairs_hook=_CountingDict)
        _CountingDict.reads = 0
        out = serialization._Reader(zf, manifest, None).decode(manifest["root"])
    assert len(out) == n
    return _CountingDict.reads


def test_load_is_linear_in_records():
    """Loading used to scan every tensor record for each tensor (a 121 KB file hung for a minute)."""
    small, large = _manifest_reads(500), _manifest_reads(1000)
    assert large <= 2.2 * small, (small, large)
    assert large <= 40 * 1000, large  # a few lookups per record


# ------------------------------------------------------------------------------------ bombs and lying sizes
@pytest.mark.parametrize("shape,what", [([GiB // 4], "tensor 0 of shape (268435456,)"), ([4], "archive/data/0")],
                         ids=["whole", "view"])
def test_decompression_bomb_tensor(shape, what, tmp_path):
    """1 MB of deflate expanding to a 1 GiB storage is refused before the 1 GiB is allocated, whether the
    tensor claims all of it or a few elements."""
    stream, crc = _repeated_deflate(bytes(MiB), 1024)
    assert len(stream) < 1.1 * MiB
    manifest = _manifest([_record(shape, [1])], {"0": {"nbytes": GiB}}, {"$": "tensor", "index": 0})
    data = _zip(_entry("archive/manifest.json", manifest),
                _entry("archive/data/0", stream, method=zipfile.ZIP_DEFLATED, usize=GiB, crc=crc))
    errors = []
    peak = _peak_while(lambda: errors.append(_load_error(data, tmp_path)))
    assert "max_bytes" in str(errors[0]) and what in str(errors[0])
    assert peak < 64 * MiB, peak


def test_decompression_bomb_manifest(tmp_path):
    """A manifest of 1 GiB (valid JSON: an object, then spaces) from 1 MB is refused before it is read."""
    head = _manifest()
    stream, _ = _repeated_deflate(b" " * MiB, 1024)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    prefix = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)  # the object, then the spaces
    crc = zlib.crc32(head)
    for _ in range(1024):
        crc = zlib.crc32(b" " * MiB, crc)
    data = _zip(_entry("archive/manifest.json", prefix + stream, method=zipfile.ZIP_DEFLATED,
                       usize=len(head) + GiB, crc=crc))
    errors = []
    peak = _peak_while(lambda: errors.append(_load_error(data, tmp_path)))
    assert "archive/manifest.json" in str(errors[0]) and "max_bytes" in str(errors[0])
    assert peak < 64 * MiB, peak


def test_max_bytes_bounds_what_may_expand(tmp_path):
    """A 64 MiB tensor deflated to 64 KB fits the default budget (2 x file + 256 MiB) but not a smaller one."""
    stream, crc = _repeated_deflate(bytes(MiB), 64)
    manifest = _manifest([_record([16 * MiB], [1])], {"0": {"nbytes": 64 * MiB}}, {"$": "tensor", "index": 0})
    data = _zip(_entry("archive/manifest.json", manifest),
                _entry("archive/data/0", stream, method=zipfile.ZIP_DEFLATED, usize=64 * MiB, crc=crc))
    assert toolkit.load(io.BytesIO(data)).shape == (16 * MiB,)
    err = _load_error(data, tmp_path, max_bytes=32 * MiB)
    assert "max_bytes=33554432" in str(err) and "pass a larger max_bytes" in str(err)
    buf = io.BytesIO()
    toolkit.save({"w": toolkit.ones(1000)}, buf)
    assert "max_bytes=1000" in str(_load_error(buf.getvalue(), tmp_path, max_bytes=1000))
    with pytest.raises(ValueError, match="max_bytes should be a non-negative int"):
        toolkit.load(io.BytesIO(buf.getvalue()), max_bytes=-1)


@pytest.mark.parametrize("claim", [4 * GiB, 64 * GiB, 1 << 40], ids=["4GiB", "64GiB", "1TiB"])
@pytest.mark.parametrize("max_bytes", [None, 1 << 42], ids=["default", "raised"])
def test_lying_zip_headers(claim, max_bytes, tmp_path):
    """Headers claiming 4 GiB to 1 TiB (the manifest agreeing) are checked against the real entry sizes:
    refused without allocating, even with the budget raised past the claim."""
    manifest = _manifest([_record([claim // 4], [1])], {"0": {"nbytes": claim}}, {"$": "tensor", "index": 0})
    stored = _entry("archive/data/0", bytes(64), usize=claim, csize=claim)
    deflated_data = zlib.compress(bytes(64))[2:-4]
    deflated = _entry("archive/data/0", deflated_data, method=zipfile.ZIP_DEFLATED, usize=claim)
    for lie in (stored, deflated):
        data = _zip(_entry("archive/manifest.json", manifest), lie)
        peak = _peak_while(lambda d=data: _load_error(d, tmp_path, max_bytes=max_bytes))
        assert peak < 64 * MiB, peak
    lying_manifest = _entry("archive/manifest.json", manifest, usize=claim, csize=claim)
    _load_error(_zip(lying_manifest), tmp_path, max_bytes=max_bytes)


@pytest.mark.parametrize("shape,stride,what", [
    ([1 << 40], [0], "max_bytes"),           # "4 TiB" from a 599-byte file
    ([1 << 62], [0], "max_bytes"),           # used to raise numpy's ValueError
    ([1 << 20, 1 << 20], [0, 0], "max_bytes"),
    ([1 << 63], [0], "bad shape"),           # not an int64
    ([0, 1 << 62], [1, 1], "cannot be made"),
    ([1] * 65, [1] * 65, "bad shape"),
    ([4], [1 << 63], "bad strides"),
])
def test_lying_manifest_shapes(shape, stride, what, tmp_path):
    err = _load_error(_one_tensor_file(bytes(16), shape, stride), tmp_path)
    assert what in str(err)


def test_lying_manifest_offset_and_storage(tmp_path):
    assert "bad storage offset" in str(_load_error(_one_tensor_file(bytes(16), [1], [1], offset=1 << 70), tmp_path))
    assert "needs" in str(_load_error(_one_tensor_file(bytes(16), [2], [1], offset=3), tmp_path))
    assert "unknown storage" in str(_load_error(_one_tensor_file(bytes(16), [1], [1], storage="9"), tmp_path))


def test_zero_stride_within_budget_loads():
    """A zero stride does not make a tensor larger than its storage: an expanded view within budget loads."""
    out = toolkit.load(io.BytesIO(_one_tensor_file(np.float32([7.0]).tobytes(), [1000, 3], [0, 0])))
    assert out.shape == (1000, 3) and float(out[999, 2]) == 7.0


# ------------------------------------------------------------------------------------ nesting and numbers
@pytest.mark.parametrize("depth", [102, 400, 900, 5000, 100_000])
def test_deep_nesting(depth, tmp_path):
    """Lists nested ``depth`` deep (the limit is 100 levels below the root, 101 lists) give the documented
    error, whether the JSON parser or the loader finds them too deep."""
    err = _load_error(_root_file("[" * depth + "]" * depth), tmp_path)
    assert "nested" in str(err)


def test_deep_dicts_and_the_limit_itself(tmp_path):
    deep = '{"$": "dict", "items": [["k", ' * 400 + "1" + "]]}" * 400
    assert "nested" in str(_load_error(_root_file(deep), tmp_path))
    obj = 1
    for _ in range(serialization._MAX_DEPTH):
        obj = {"k": obj}
    buf = io.BytesIO()
    serialization.save_manifest(obj, buf)
    buf.seek(0)
    assert toolkit.load(buf) == obj
    with pytest.raises(ValueError, match="nested more than 100 levels"):
        serialization.save_manifest({"k": obj}, io.BytesIO())


def test_huge_integers(tmp_path):
    digits = "1" + "0" * 4999
    err = _load_error(_root_file(digits), tmp_path)
    assert "4300 digits" in str(err)
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # a process that lifted Python's own limit gets the same answer
    try:
        assert "4300 digits" in str(_load_error(_root_file(digits), tmp_path))
    finally:
        sys.set_int_max_str_digits(old)
    assert "out of range" in str(_load_error(_root_file('{"$": "float", "v": 1' + "0" * 400 + "}"), tmp_path))
    assert "bad device entry" in str(_load_error(_root_file('{"$": "device", "type": "cpu", "index": '
                                                           + "9" * 30 + "}"), tmp_path))
    big = 10 ** 4299
    buf = io.BytesIO()
    serialization.save_manifest([big, -big], buf)
    buf.seek(0)
    assert toolkit.load(buf) == [big, -big]
    with pytest.raises(ValueError, match="more than 4300 digits"):
        serialization.save_manifest(10 ** 4300, io.BytesIO())
    buf = io.BytesIO()
    toolkit.save([10 ** 5000, -big], buf)  # a pickle holds integers in binary: no digit limit to guard
    buf.seek(0)
    assert toolkit.load(buf) == [10 ** 5000, -big]


# ------------------------------------------------------------------------------------ devices
def test_meta_device(tmp_path):
    data = _one_tensor_file(bytes(16), [4], [1], device="meta")
    err = _load_error(data, tmp_path)
    assert "'meta'" in str(err) and "map_location='cpu'" in str(err)
    out = toolkit.load(io.BytesIO(data), map_location="cpu")
    assert out.device == toolkit.device("cpu") and out.shape == (4,)
    good = _one_tensor_file(bytes(16), [4], [1])
    with pytest.raises(RuntimeError, match="map_location 'meta' puts tensor 0 on device 'meta'"):
        toolkit.load(io.BytesIO(good), map_location="meta")
    assert "bad device" in str(_load_error(_one_tensor_file(bytes(16), [4], [1], device="tpu:0"), tmp_path))


def test_map_location_errors_are_the_callers():
    def broken(storage, location):
        raise KeyError("from the caller")

    with pytest.raises(KeyError, match="from the caller"):
        toolkit.load(io.BytesIO(_one_tensor_file(bytes(16), [4], [1])), map_location=broken)


# ------------------------------------------------------------------------------------ one error type
def test_errors_keep_their_cause(tmp_path):
    bad_json = _zip(_entry("archive/manifest.json", b"{not json"))
    assert isinstance(_load_error(bad_json, tmp_path).__cause__, json.JSONDecodeError)
    assert isinstance(_load_error(_root_file("[" * 100_000 + "]" * 100_000), tmp_path).__cause__, RecursionError)
    checked = _load_error(_one_tensor_file(bytes(16), [1], [1], dtype="complex32"), tmp_path)
    assert "unknown dtype" in str(checked.__cause__)


_POOL = [None, True, -1, 0, 1 << 62, 1 << 70, -(1 << 70), 1.5, float("1e308"), "x", "../../etc/passwd", "meta",
         [], {}, [1 << 40], [-1], [[[]]], {"$": "tensor", "index": 0}, {"$": "tensor", "index": 99},
         {"$": "float", "v": "nan"}, {"$": "dict", "items": [[[], 1]]}, {"$": "bytes", "v": "zz"},
         {"$": "device", "type": "meta", "index": None}, {"$": "size", "v": [-1]}]


def _mutate(node, rng: random.Random):
    """``node`` (parsed JSON) with one randomly chosen value somewhere inside replaced from ``_POOL``."""
    if isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        keys = list(node) if isinstance(node, dict) else range(len(node))
        k = rng.choice(list(keys))
        node[k] = _mutate(node[k], rng)
        return node
    return json.loads(json.dumps(rng.choice(_POOL)))


def test_fuzzed_files_give_one_error_type(tmp_path):
    """Random manifest edits and byte flips of a real checkpoint: each file loads or gives the documented error."""
    x = toolkit.arange(12.0).reshape(3, 4)
    buf = io.BytesIO()
    serialization.save_manifest({"x": x, "t": x.t(), "n": [1, 2.5, (3, "s")], "i": toolkit.ones(2, dtype=toolkit.int64),
                                 "p": toolkit.nn.Parameter(toolkit.ones(2))}, buf)
    good = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(good)) as zf:
        manifest_text = zf.read("archive/manifest.json")
        data = zf.read("archive/data/0")
    rng = random.Random(17)
    path = tmp_path / "fuzz.pt"
    outcomes = {"loaded": 0, "refused": 0}
    for i in range(400):
        if i % 2:
            blob = bytearray(good)
            for _ in range(rng.randint(1, 4)):
                blob[rng.randrange(len(blob))] = rng.randrange(256)
            blob = bytes(blob)
        else:
            m = _mutate(json.loads(manifest_text), rng)
            blob = _zip(_entry("archive/manifest.json", json.dumps(m).encode()), _entry("archive/data/0", data))
        path.write_bytes(blob)
        try:
            toolkit.load(path)
            outcomes["loaded"] += 1
        except RuntimeError as e:
            assert "fuzz.pt" in str(e) and e.__cause__ is not None, e
            outcomes["refused"] += 1
    assert outcomes["refused"] > 100 and outcomes["loaded"] >= 5, outcomes


# ------------------------------------------------------------------------------------ what must keep holding
def test_planted_pickle_never_runs(tmp_path):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    pkl = pickle.dumps(Payload(), protocol=2)
    path = tmp_path / "planted.pt"
    path.write_bytes(_zip(_entry("archive/data.pkl", pkl)))
    for kwargs in ({}, {"weights_only": True}):
        with pytest.raises(pickle.UnpicklingError, match="(?s)planted.pt.*GLOBAL posix.mkdir whose module posix is blocked"):
            toolkit.load(path, **kwargs)
    # Beside a manifest, a data.pkl is never read, whatever weights_only says: the manifest is the checkpoint.
    path.write_bytes(_zip(_entry("archive/data.pkl", pkl), _entry("archive/manifest.json", _manifest(root=3))))
    assert toolkit.load(path, weights_only=False) == 3
    assert not marker.exists()


def test_dotdot_names_write_nothing(tmp_path):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    manifest = _manifest([_record([4], [1], storage="../../../escaped")], {"../../../escaped": {"nbytes": 16}},
                         {"$": "tensor", "index": 0})
    data = _zip(_entry("archive/manifest.json", manifest), _entry("archive/data/../../../escaped", bytes(16)),
                _entry("../../escaped2", b"x"))
    before = sorted(p for p in tmp_path.rglob("*"))
    (work / "ckpt.pt").write_bytes(data)
    toolkit.load(work / "ckpt.pt")
    assert sorted(p for p in tmp_path.rglob("*")) == sorted([*before, work / "ckpt.pt"])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit.script and torch.jit.save
def test_torchscript_and_legacy_pytorch_files_refused(tmp_path):
    import torch

    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), tmp_path / "script.pt")
    with pytest.raises(RuntimeError, match="script.pt.*TorchScript archive"):
        toolkit.load(tmp_path / "script.pt")
    torch.save({"w": torch.ones(2)}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy.pt.*PyTorch's legacy \\(non-zip\\) format"):
        toolkit.load(tmp_path / "legacy.pt")


# ------------------------------------------------------------------------------------ killed saves
_CHILD = textwrap.dedent("""
    import sys
    import toolkit
    if sys.argv[2] == "named":
        toolkit.serialization.atomic._UNNAMED = False
    big = [toolkit.ones(4 * 1024 * 1024) for _ in range(16)]  # 256 MiB: writing it takes a while
    print("ready", flush=True)
    toolkit.save({"version": "new", "big": big}, sys.argv[1])
    print("done", flush=True)
""")


def _bytes_being_written(pid: int, directory: pathlib.Path) -> int:
    """The size of the largest file in ``directory`` that process ``pid`` holds open, named or not."""
    best = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(directory) + os.sep):
                best = max(best, os.stat(f"/proc/{pid}/fd/{fd}").st_size)
        except OSError:
            continue
    return best


@pytest.mark.skipif(not hasattr(signal, "SIGKILL") or not os.path.isdir("/proc/self/fd"),
                    reason="needs SIGKILL and /proc")
@pytest.mark.parametrize("mode", ["unnamed", "named"])
def test_sigkill_during_save_keeps_old_checkpoint_and_leaves_no_orphan(mode, tmp_path):
    """A save killed while writing leaves the old checkpoint intact; its temporary file is gone at once
    (an unnamed O_TMPFILE file) or after the next save to the same path (a named one, its writer dead)."""
    target = tmp_path / "ckpt.pt"
    toolkit.save({"version": "old", "w": toolkit.arange(10.0)}, target)
    before = target.read_bytes()
    repo = pathlib.Path(__file__).resolve().parents[1]
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(target), mode], cwd=repo, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and _bytes_being_written(child.pid, tmp_path) <= MiB:
            time.sleep(0.001)
        assert _bytes_being_written(child.pid, tmp_path) > MiB, "the save never started writing"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    assert target.read_bytes() == before
    left = sorted(p.name for p in tmp_path.iterdir())
    if mode == "unnamed" and hasattr(os, "O_TMPFILE"):
        assert left == ["ckpt.pt"]
    else:
        assert len(left) == 2 and ".ckpt.pt.toolkit-save-" in left[0]  # the orphan, until the next save
    loaded = toolkit.load(target)
    assert loaded["version"] == "old"
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(10.0, dtype=np.float32))
    toolkit.save({"version": "next"}, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]
    assert toolkit.load(target) == {"version": "next"}


_LIVE_WRITER = textwrap.dedent("""
    import sys
    from toolkit.serialization import atomic
    tmp = atomic.temp_path(sys.argv[1])
    with open(tmp, "wb") as f:
        f.write(b"partial")
    print(tmp, flush=True)
    sys.stdin.read()  # stays alive until the test closes its stdin
""")


@pytest.mark.skipif(os.name != "posix", reason="liveness of writers is probed on POSIX")
def test_temporary_files_of_live_writers_are_kept(tmp_path):
    target = tmp_path / "ckpt.pt"
    repo = pathlib.Path(__file__).resolve().parents[1]
    child = subprocess.Popen([sys.executable, "-c", _LIVE_WRITER, str(target)], cwd=repo, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        theirs = pathlib.Path(child.stdout.readline().strip())
        ours = pathlib.Path(atomic.temp_path(str(target)))  # a concurrent save in another thread of this process
        ours.write_bytes(b"partial")
        host, pid, start, token = ours.name.removesuffix(".tmp").split("-")[-4:]
        reused = ours.with_name(ours.name.replace(f"-{pid}-{start}-", f"-{pid}-{int(start) + 1}-"))
        reused.write_bytes(b"partial")  # this pid's earlier life (as PID 1 of a restarted container): dead
        other = "0" * 8 if host != "0" * 8 else "1" * 8
        other_host = ours.with_name(ours.name.replace(f"-save-{host}-", f"-save-{other}-"))
        other_host.write_bytes(b"partial")  # a writer on another machine sharing the directory
        toolkit.save({"v": 1}, target)
        assert theirs.exists() and ours.exists() and other_host.exists() and not reused.exists()
    finally:
        child.stdin.close()
        child.wait(timeout=60)
    toolkit.save({"v": 2}, target)
    assert not theirs.exists() and ours.exists() and other_host.exists()


@pytest.mark.parametrize("unnamed", [True, False])
def test_failed_write_leaves_nothing(unnamed, tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "_UNNAMED", unnamed)
    target = tmp_path / "x.pt"

    def write(f):
        f.write(b"some bytes" * 1000)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic.write_atomically(str(target), write)
    assert list(tmp_path.iterdir()) == []
    atomic.write_atomically(str(target), lambda f: f.write(b"ok"))
    assert [p.name for p in tmp_path.iterdir()] == ["x.pt"] and target.read_bytes() == b"ok"
