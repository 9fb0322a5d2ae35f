"""Atomic file writes (``toolkit._core.files.write_atomic``): whole files or the old ones, never a part or a leftover."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from toolkit._core import files
from toolkit._core.files import write_atomic


def _names(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("unnamed", [True, False])
def test_bytes_text_and_a_writing_function(unnamed, tmp_path):
    target = tmp_path / "f.bin"
    assert write_atomic(target, b"\x00\x01", unnamed=unnamed) is True
    assert target.read_bytes() == b"\x00\x01"
    assert write_atomic(str(target), "héllo\n", unnamed=unnamed)
    assert target.read_bytes() == "héllo\n".encode()
    assert write_atomic(target, "héllo", encoding="latin-1", unnamed=unnamed)
    assert target.read_bytes() == "héllo".encode("latin-1")
    write_atomic(target, lambda f: (f.write(b"a"), f.write(b"b")), unnamed=unnamed)
    assert target.read_bytes() == b"ab"
    write_atomic(target, lambda f: f.write("text"), encoding="utf-8", unnamed=unnamed)
    assert target.read_text() == "text"
    assert _names(tmp_path) == ["f.bin"]


@pytest.mark.parametrize("unnamed", [True, False])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(unnamed, tmp_path):
    target = tmp_path / "ckpt"
    target.write_bytes(b"old")

    def write(f):
        f.write(b"new" * 10000)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, write, unnamed=unnamed)
    assert target.read_bytes() == b"old" and _names(tmp_path) == ["ckpt"]


def test_a_failed_rename_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "folder"
    target.mkdir()
    (target / "inside").write_text("kept")
    with pytest.raises(OSError):
        write_atomic(target, b"data")  # a non-empty folder cannot be replaced by a file
    assert _names(tmp_path) == ["folder"] and (target / "inside").read_text() == "kept"


def test_write_once_does_not_clobber_an_existing_file(tmp_path):
    target = tmp_path / "kernel.py"
    assert write_atomic(target, "x = 1\n", once=True) is True
    assert write_atomic(target, "x = 2\n", once=True) is False
    assert target.read_text() == "x = 1\n" and _names(tmp_path) == ["kernel.py"]
    assert write_atomic(target, "x = 2\n") is True and target.read_text() == "x = 2\n"


def test_concurrent_write_once_places_exactly_one_whole_file(tmp_path):
    target = tmp_path / "shared.txt"
    texts = [f"{i}\n" * 50000 for i in range(8)]
    placed = [None] * len(texts)
    start = threading.Barrier(len(texts))

    def writer(i):
        start.wait()
        placed[i] = write_atomic(target, texts[i], once=True)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert placed.count(True) == 1
    assert target.read_text() == texts[placed.index(True)]
    assert _names(tmp_path) == ["shared.txt"]


def test_permissions(tmp_path):
    private = tmp_path / "private"
    write_atomic(private, b"x")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    shared = tmp_path / "shared"
    write_atomic(shared, b"x", mode=0o666)
    plain = tmp_path / "plain"
    plain.write_bytes(b"x")  # open() applies the umask to 0o666
    assert stat.S_IMODE(shared.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)


def test_makedirs_and_a_given_temporary_name(tmp_path):
    target = tmp_path / "a" / "b" / "page.html"
    with pytest.raises(FileNotFoundError):
        write_atomic(target, "<p>")
    assert not (tmp_path / "a").exists()
    write_atomic(target, "<p>", makedirs=True, temp=str(target.parent / ".page.html.mine.tmp"), durable=False)
    assert target.read_text() == "<p>" and _names(target.parent) == ["page.html"]


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_umask_is_read_without_being_changed(mask, monkeypatch):
    """Reading the umask must not set it, even for a moment: another thread creating a file then would make it
    world-writable. Where /proc says the umask, os.umask is never called."""
    old = os.umask(mask)
    try:
        calls = []
        real = os.umask
        monkeypatch.setattr(os, "umask", lambda m: calls.append(m) or real(m))
        assert files._umask() == mask
        if os.path.exists("/proc/self/status"):
            assert calls == []
    finally:
        monkeypatch.undo()
        os.umask(old)
