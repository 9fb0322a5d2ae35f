"""Checkpoints in PyTorch's layout against real ``torch``: toolkit writes, torch reads, and the other way."""

from __future__ import annotations

import io
import pickletools
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close

TORCH_DTYPES = {toolkit.bool: torch.bool, toolkit.uint8: torch.uint8, toolkit.int8: torch.int8,
                toolkit.int16: torch.int16, toolkit.int32: torch.int32, toolkit.int64: torch.int64,
                toolkit.float16: torch.float16, toolkit.float32: torch.float32, toolkit.float64: torch.float64}


def _globals(data: bytes) -> set[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        pkl = zf.read(next(n for n in zf.namelist() if n.endswith("/data.pkl")))
    return {arg.replace(" ", ".") for op, arg, _ in pickletools.genops(pkl) if op.name == "GLOBAL"}


def _toolkit_bytes(obj) -> bytes:
    buf = io.BytesIO()
    toolkit.save(obj, buf)
    return buf.getvalue()


def _torch_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


# ------------------------------------------------------------------------------------ toolkit writes, torch reads
@pytest.mark.parametrize("dtype", list(TORCH_DTYPES), ids=str)
def test_torch_reads_each_dtype(dtype):
    a = (np.random.default_rng(0).standard_normal((3, 4)) * 50).astype(dtype.np)
    out = torch.load(io.BytesIO(_toolkit_bytes(toolkit.from_numpy(a))), weights_only=True)
    assert out.dtype == TORCH_DTYPES[dtype]
    np.testing.assert_array_equal(out.numpy(), a)


def test_torch_reads_views_parameters_and_containers():
    x = toolkit.arange(12.0).reshape(3, 4)
    sd = OrderedDict(w=toolkit.nn.Parameter(toolkit.randn(2, 3)), x=x, t=x.t(), row=x[1], col=x[:, 2],
                     frozen=toolkit.nn.Parameter(toolkit.ones(2), requires_grad=False),
                     g=toolkit.ones(2, requires_grad=True))
    sd._metadata = {"": {"version": 1}}
    obj = {"sd": sd, "n": [1, -2 ** 70, 2.5, None, True, "s"], "t": (toolkit.float16, toolkit.device("cpu"),
           toolkit.Size([2, 3]), b"\x00\xff"), "set": {1, 2}, "nested": {3: {"deep": [toolkit.tensor([1, 2])]}}}
    data = _toolkit_bytes(obj)
    assert _globals(data) <= {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
                              "torch._utils._rebuild_parameter", "torch.FloatStorage", "torch.LongStorage",
                              "torch.float16", "torch.device", "torch.Size", "_codecs.encode", "__builtin__.set"}
    out = torch.load(io.BytesIO(data), weights_only=True)
    osd = out["sd"]
    assert type(osd) is OrderedDict and list(osd) == list(sd) and osd._metadata == {"": {"version": 1}}
    assert type(osd["w"]) is torch.nn.Parameter and osd["w"].requires_grad
    assert type(osd["frozen"]) is torch.nn.Parameter and not osd["frozen"].requires_grad
    assert osd["g"].requires_grad and not osd["x"].requires_grad
    for k in ("x", "t", "row", "col"):
        assert osd[k].stride() == sd[k].stride() and osd[k].storage_offset() == sd[k].storage_offset()
        np.testing.assert_array_equal(osd[k].numpy(), sd[k].numpy())
    assert len({osd[k].untyped_storage().data_ptr() for k in ("x", "t", "row", "col")}) == 1
    assert out["n"] == obj["n"] and out["set"] == {1, 2}
    assert out["t"] == (torch.float16, torch.device("cpu"), torch.Size([2, 3]), b"\x00\xff")
    np.testing.assert_array_equal(out["nested"][3]["deep"][0].numpy(), [1, 2])


def test_torch_reads_a_module_state_dict_and_runs_the_same_numbers(tmp_path):
    toolkit.manual_seed(0)
    model = toolkit.nn.Sequential(toolkit.nn.Conv2d(3, 4, 3), toolkit.nn.BatchNorm2d(4), toolkit.nn.ReLU(),
                                  toolkit.nn.Flatten(), toolkit.nn.Linear(4 * 6 * 6, 5))
    model.eval()
    toolkit.save(model.state_dict(), tmp_path / "resnetish.pt")
    twin = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5)).eval()
    twin.load_state_dict(torch.load(tmp_path / "resnetish.pt", weights_only=True))
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    assert_close(model(toolkit.from_numpy(x)), twin(torch.from_numpy(x)))


def test_torch_reads_a_bare_storage():
    t = toolkit.arange(4, dtype=toolkit.int32)
    out = torch.load(io.BytesIO(_toolkit_bytes(t.untyped_storage())), weights_only=True)
    twin = torch.load(io.BytesIO(_torch_bytes(torch.arange(4, dtype=torch.int32).untyped_storage())),
                      weights_only=True)
    assert type(out) is type(twin) and out.nbytes() == 16 and list(out) == list(twin)
    back = toolkit.load(io.BytesIO(_toolkit_bytes(t.untyped_storage())))
    np.testing.assert_array_equal(back.base.view(np.int32), [0, 1, 2, 3])


# ------------------------------------------------------------------------------------ torch writes, toolkit reads
def test_toolkit_reads_torch_state_dict_of_a_model(tmp_path):
    torch.manual_seed(0)
    twin = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5)).eval()
    twin(torch.randn(2, 3, 8, 8))
    torch.save(twin.state_dict(), tmp_path / "torch_model.pth")
    sd = toolkit.load(tmp_path / "torch_model.pth")
    assert type(sd) is OrderedDict and list(sd) == list(twin.state_dict())
    assert sd["1.num_batches_tracked"].dtype == toolkit.int64
    model = toolkit.nn.Sequential(toolkit.nn.Conv2d(3, 4, 3), toolkit.nn.BatchNorm2d(4), toolkit.nn.ReLU(),
                                  toolkit.nn.Flatten(), toolkit.nn.Linear(4 * 6 * 6, 5)).eval()
    model.load_state_dict(sd)
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    assert_close(model(toolkit.from_numpy(x)), twin(torch.from_numpy(x)))


def test_toolkit_reads_torch_tensors_views_and_parameters():
    base = torch.arange(24.0).reshape(2, 3, 4)
    obj = {"t": base, "perm": base.permute(2, 0, 1), "step": base.view(-1)[1::5], "h": torch.ones(3, dtype=torch.half),
           "i": torch.tensor([1, -2], dtype=torch.int64), "b": torch.tensor([True, False]),
           "p": torch.nn.Parameter(torch.ones(2, 2)), "g": torch.ones(2, requires_grad=True),
           "meta": (torch.float64, torch.device("cpu"), torch.Size([1, 2]), b"xy", 1.5, None, {"k": [1, 2]})}
    p_with_attr = torch.nn.Parameter(torch.zeros(1))
    p_with_attr.tag = "decoder"
    obj["pa"] = p_with_attr
    out = toolkit.load(io.BytesIO(_torch_bytes(obj)))
    for k in ("t", "perm", "step", "h", "i", "b"):
        assert out[k].dtype == {v: k for k, v in TORCH_DTYPES.items()}[obj[k].dtype]
        assert out[k].stride() == obj[k].stride() and out[k].storage_offset() == obj[k].storage_offset()
        np.testing.assert_array_equal(out[k].numpy(), obj[k].numpy())
    assert out["t"].untyped_storage() is out["perm"].untyped_storage() is out["step"].untyped_storage()
    assert type(out["p"]) is toolkit.nn.Parameter and out["p"].requires_grad
    assert out["g"].requires_grad and out["g"].is_leaf
    assert type(out["pa"]) is toolkit.nn.Parameter and out["pa"].tag == "decoder"
    assert out["meta"] == (toolkit.float64, toolkit.device("cpu"), toolkit.Size([1, 2]), b"xy", 1.5, None,
                           {"k": [1, 2]})


def test_map_location_forms_on_torch_files():
    data = _torch_bytes({"x": torch.arange(3.0)})
    seen = []
    for ml in ("cpu", toolkit.device("cpu"), {"cpu": "cpu"}, lambda s, loc: seen.append(loc), lambda s, loc: s):
        out = toolkit.load(io.BytesIO(data), map_location=ml)
        assert out["x"].device == toolkit.device("cpu")
        np.testing.assert_array_equal(out["x"].numpy(), [0.0, 1.0, 2.0])
    assert seen == ["cpu"]
    if not toolkit.cuda.is_available():
        with pytest.raises(RuntimeError, match="deserialize object on a CUDA device"):
            toolkit.load(io.BytesIO(data), map_location="cuda")


def test_dtypes_toolkit_lacks_are_named():
    with pytest.raises(RuntimeError, match="torch.BFloat16Storage, of a dtype toolkit does not support"):
        toolkit.load(io.BytesIO(_torch_bytes(torch.ones(2, dtype=torch.bfloat16))))
    with pytest.raises(RuntimeError, match="dtype torch.uint16, which toolkit does not support"):
        toolkit.load(io.BytesIO(_torch_bytes(torch.ones(2, dtype=torch.uint16))))


def test_mmap_maps_storages(tmp_path):
    toolkit.save({"w": toolkit.arange(1000.0)}, tmp_path / "big.pt")
    out = toolkit.load(tmp_path / "big.pt", mmap=True)
    assert isinstance(out["w"].untyped_storage().base, np.memmap)
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(1000.0, dtype=np.float32))
    out["w"][0] = 5.0  # copy-on-write: the file keeps its data
    assert float(toolkit.load(tmp_path / "big.pt")["w"][0]) == 0.0
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
        toolkit.load(io.BytesIO(b""), mmap=True)


# ------------------------------------------------------------------------------------ whole objects
def test_whole_module_round_trip_with_weights_only_false(tmp_path):
    toolkit.manual_seed(0)
    model = toolkit.nn.Sequential(toolkit.nn.Linear(4, 3), toolkit.nn.ReLU(), toolkit.nn.Linear(3, 2))
    opt = toolkit.optim.Adam(model.parameters(), lr=0.1)
    model(toolkit.randn(5, 4)).sum().backward()
    opt.step()
    toolkit.save({"model": model, "opt": opt.state_dict(), "step": 1}, tmp_path / "whole.pt")
    out = toolkit.load(tmp_path / "whole.pt", weights_only=False)
    assert type(out["model"]) is toolkit.nn.Sequential and out["step"] == 1
    x = toolkit.randn(2, 4)
    np.testing.assert_array_equal(out["model"](x).detach().numpy(), model(x).detach().numpy())
    assert type(out["model"][0].weight) is toolkit.nn.Parameter
    fresh = toolkit.optim.Adam(out["model"].parameters(), lr=0.1)
    fresh.load_state_dict(out["opt"])  # optimizer state dicts are tensors and containers: weights-only works too
    assert toolkit.load(tmp_path / "whole.pt", weights_only=False)["opt"]["param_groups"][0]["lr"] == 0.1
    with pytest.raises(Exception, match="(?s)Weights only load failed.*GLOBAL toolkit.nn.modules"):
        toolkit.load(tmp_path / "whole.pt")


def test_whole_torch_module_maps_onto_toolkit(tmp_path):
    torch.manual_seed(0)
    torch.save(torch.nn.Linear(3, 2), tmp_path / "linear.pt")
    lin = toolkit.load(tmp_path / "linear.pt", weights_only=False)
    assert isinstance(lin, toolkit.nn.Linear) and type(lin.weight) is toolkit.nn.Parameter
    assert lin.weight.shape == (2, 3)
