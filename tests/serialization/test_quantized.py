"""Quantized tensors in checkpoints, against real ``torch``: toolkit writes what ``torch.save`` writes
(``torch._utils._rebuild_qtensor`` over a ``torch.QInt8Storage``, its scheme and parameters), each library reads
the other's file, and a file with bad quantization parameters is refused as the file's fault."""

from __future__ import annotations

import io
import pickletools
import zipfile

import numpy as np
import pytest
import torch

import toolkit

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # torch's deprecation of quantized tensors

_X = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
_SCALES, _ZPS = [0.05, 0.1, 0.2], [1, 0, 3]


def _quantized(lib):
    x = lib.tensor(_X)
    q8 = lib.quantize_per_tensor(x, 0.1, 3, lib.qint8)
    return {
        "per_tensor_qint8": q8,
        "per_tensor_quint8": lib.quantize_per_tensor(x, 0.02, 128, lib.quint8),
        "per_tensor_qint32": lib.quantize_per_tensor(x, 0.001, -5, lib.qint32),
        "transposed_view": q8.t(),
        "row_view": q8[1],
        "per_channel_axis0": lib.quantize_per_channel(x, lib.tensor(_SCALES, dtype=lib.float64),
                                                      lib.tensor(_ZPS), 0, lib.quint8),
        "per_channel_axis1": lib.quantize_per_channel(x.t().contiguous(), lib.tensor(_SCALES, dtype=lib.float64),
                                                      lib.tensor(_ZPS), 1, lib.qint8),
    }


def _same(mine, theirs) -> None:
    assert mine.is_quantized and theirs.is_quantized
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert str(mine.qscheme()).split(".")[-1] == str(theirs.qscheme()).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(mine.int_repr().numpy(), theirs.int_repr().numpy())
    if "per_tensor" in str(mine.qscheme()):
        assert (mine.q_scale(), mine.q_zero_point()) == (theirs.q_scale(), theirs.q_zero_point())
    else:
        np.testing.assert_array_equal(mine.q_per_channel_scales().numpy(), theirs.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(mine.q_per_channel_zero_points().numpy(),
                                      theirs.q_per_channel_zero_points().numpy())
        assert mine.q_per_channel_axis() == theirs.q_per_channel_axis()


def _save(lib, obj) -> bytes:
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


def _load(lib, data: bytes, **kw):
    return lib.load(io.BytesIO(data), **kw)


def test_toolkit_round_trip_keeps_quantization():
    mine = _quantized(toolkit)
    back = _load(toolkit, _save(toolkit, mine))
    for name, q in mine.items():
        _same(back[name], q)
        assert toolkit.equal(back[name], q)


def test_views_of_one_quantized_tensor_share_one_storage_after_loading():
    q = toolkit.quantize_per_tensor(toolkit.tensor(_X), 0.1, 3, toolkit.qint8)
    back = _load(toolkit, _save(toolkit, [q, q.t()]))
    assert back[0].untyped_storage().data_ptr() == back[1].untyped_storage().data_ptr()


def test_torch_reads_toolkit_quantized_tensors_with_weights_only():
    data = _save(toolkit, _quantized(toolkit))
    theirs = _load(torch, data, weights_only=True)
    for name, q in _quantized(torch).items():
        _same(theirs[name], q)


def test_toolkit_reads_torch_quantized_tensors():
    data = _save(torch, _quantized(torch))
    mine = _load(toolkit, data)
    for name, q in _quantized(toolkit).items():
        _same(mine[name], q)


def test_the_pickle_names_what_torch_save_names():
    def names(data):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            pkl = zf.read(next(n for n in zf.namelist() if n.endswith("/data.pkl")))
        return {arg.replace(" ", ".") for op, arg, _ in pickletools.genops(pkl) if op.name == "GLOBAL"}

    assert names(_save(toolkit, _quantized(toolkit))) == names(_save(torch, _quantized(torch)))


@pytest.mark.parametrize("scale, zero_point", [(-0.1, 3), (0.1, 300), (0.1, -129), (float("nan"), 3)])
def test_bad_quantization_parameters_are_the_files_fault(scale, zero_point, tmp_path):
    """A file whose quantized tensor has a negative or NaN scale, or a zero point its dtype cannot hold, is
    refused naming the file, never turned into a tensor that misreads its integers."""
    q = toolkit.quantize_per_tensor(toolkit.tensor(_X), 0.1, 3, toolkit.qint8)
    q._scale, q._zero_point = scale, zero_point  # what a damaged or hostile file would say
    path = tmp_path / "bad.pt"
    toolkit.save({"q": q}, path)
    with pytest.raises(RuntimeError, match="(?s)bad.pt.*bad per-tensor parameters"):
        toolkit.load(path)


def test_float_zero_points_are_named_as_what_toolkit_cannot_load(tmp_path):
    """torch.save writes a per_channel_affine_float_qparams tensor (an embedding's weight) as per_channel_affine
    with float zero points; toolkit holds integer zero points only, so the file is refused for that reason rather
    than as out-of-range zero points."""
    q = torch.quantize_per_channel(torch.randn(3, 4), torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0.5, 1.0, 2.0]),
                                   0, torch.quint8)
    assert q.qscheme() is torch.per_channel_affine_float_qparams
    path = tmp_path / "embedding.pt"
    torch.save({"q": q}, path)
    with pytest.raises(RuntimeError, match=r"(?s)embedding.pt.*float zero points \(per_channel_affine_float_qparams\)"):
        toolkit.load(path)
