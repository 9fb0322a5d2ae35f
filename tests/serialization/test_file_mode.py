"""Saved files get the permission bits ``open`` gives (``0o666`` less the umask), as the files PyTorch's
``save``, ``jit.save`` and ``onnx.export`` write do: written through a private temporary file, they must not stay
readable by their owner alone."""

from __future__ import annotations

import os
import stat

import pytest
import torch

import toolkit


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _writers(lib, tmp_path):
    lin = lib.nn.Linear(3, 2)
    return {
        "save": lambda p: lib.save(lin.state_dict(), p),
        "jit.save": lambda p: lib.jit.save(lib.jit.trace(lin, lib.ones(1, 3)), p),
        "onnx.export": lambda p: lib.onnx.export(lin, (lib.ones(1, 3),), p, dynamo=False)
        if lib is torch else lib.onnx.export(lin, (lib.ones(1, 3),), p),
    }


@pytest.mark.parametrize("writer", ["save", "jit.save", "onnx.export"])
def test_saved_file_mode_matches_torch(writer, tmp_path, umask_022):
    if writer == "onnx.export":
        pytest.importorskip("onnx")
    mine, theirs = tmp_path / "toolkit.bin", tmp_path / "torch.bin"
    _writers(toolkit, tmp_path)[writer](mine)
    _writers(torch, tmp_path)[writer](theirs)
    assert _mode(mine) == _mode(theirs) == 0o644


def test_saved_file_mode_follows_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        toolkit.save({"a": toolkit.ones(2)}, tmp_path / "private.pt")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "private.pt") == 0o600


@pytest.mark.parametrize("writer", ["save", "jit.save", "onnx.export"])
def test_overwritten_file_keeps_its_mode_as_torch_does(writer, tmp_path, umask_022):
    """``open(path, "wb")`` keeps an existing file's bits: re-saving a checkpoint made private must not widen it."""
    if writer == "onnx.export":
        pytest.importorskip("onnx")
    mine, theirs = tmp_path / "toolkit.bin", tmp_path / "torch.bin"
    for lib, path in ((toolkit, mine), (torch, theirs)):
        _writers(lib, tmp_path)[writer](path)
        os.chmod(path, 0o600)
        _writers(lib, tmp_path)[writer](path)
    assert _mode(mine) == _mode(theirs) == 0o600
