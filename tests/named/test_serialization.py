"""``toolkit.save``/``toolkit.load`` keep a tensor's names (in the rebuild call's metadata dict), also with
``weights_only=True``. PyTorch refuses to save named tensors, so this goes past it; values are checked against the
unnamed tensor."""

from __future__ import annotations

import io

import numpy as np
import pytest

import toolkit


def _round_trip(obj, weights_only=True):
    buf = io.BytesIO()
    toolkit.save(obj, buf)
    buf.seek(0)
    return toolkit.load(buf, weights_only=weights_only)


@pytest.mark.parametrize("weights_only", [True, False])
def test_plain_tensor_keeps_names(weights_only):
    x = toolkit.randn(2, 3, names=("N", None))
    y = _round_trip(x, weights_only)
    assert y.names == ("N", None)
    np.testing.assert_array_equal(y.rename(None).numpy(), x.rename(None).numpy())


def test_state_dict_and_views_keep_names():
    x = toolkit.randn(4, 3, names=("N", "C"))
    sd = {"w": x, "row": x[1], "t": x.t(), "plain": toolkit.ones(2), "grad": toolkit.randn(2, names=("a",),
                                                                                            requires_grad=True)}
    out = _round_trip(sd)
    assert out["w"].names == ("N", "C") and out["row"].names == ("C",) and out["t"].names == ("C", "N")
    assert not out["plain"].has_names() and out["grad"].names == ("a",) and out["grad"].requires_grad
    np.testing.assert_array_equal(out["t"].rename(None).numpy(), x.rename(None).numpy().T)
    out["w"].rename(None).add_(1)  # views of one saved storage still share it after loading
    np.testing.assert_array_equal(out["row"].rename(None).numpy(), out["w"].rename(None).numpy()[1])


def test_module_state_dict_round_trip():
    m = toolkit.nn.Linear(3, 2)
    sd = {k: v.detach().refine_names("out", *(("in",) if v.ndim == 2 else ())) for k, v in m.state_dict().items()}
    out = _round_trip(sd)
    assert out["weight"].names == ("out", "in") and out["bias"].names == ("out",)


def test_unnamed_files_unchanged():
    """An unnamed tensor's pickle carries no metadata: the bytes are what they were before names existed."""
    buf = io.BytesIO()
    toolkit.save(toolkit.ones(2), buf)
    assert b"names" not in buf.getvalue()


class _Scaled(toolkit.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", toolkit.ones(3, names=("C",)))
        self.w = toolkit.nn.Parameter(toolkit.randn(3, 3).refine_names("out", "in"))

    def forward(self, x):
        return x * self.scale


@pytest.mark.parametrize("compile_", ["trace", "script"])
def test_jit_archives_keep_names(compile_):
    """A compiled module's archive keeps its tensors' names, and a trace's graph keeps the names in its types."""
    m = _Scaled()
    x = toolkit.randn(2, 3, names=("N", "C"))
    compiled = toolkit.jit.trace(m, (x,)) if compile_ == "trace" else toolkit.jit.script(m)
    buf = io.BytesIO()
    toolkit.jit.save(compiled, buf)
    buf.seek(0)
    loaded = toolkit.jit.load(buf)
    assert loaded.scale.names == ("C",) and loaded.w.names == ("out", "in")
    assert isinstance(loaded.w, toolkit.nn.Parameter)
    assert loaded(x).names == ("N", "C")
    if compile_ == "trace":
        assert str(loaded.graph) == str(compiled.graph)
        assert "%x : Float(2, 3, names=['N', 'C'], strides=[3, 1]" in str(loaded.graph)


def test_parameter_keeps_names():
    p = toolkit.nn.Parameter(toolkit.randn(2, 3, names=("out", "in")))
    assert p.names == ("out", "in") and p.requires_grad


@pytest.mark.parametrize("bad", [["N", "N"], ["N"], [1, None], "NC", ["1x", None]])
def test_archive_type_with_bad_names_is_refused(bad):
    from toolkit.jit.serialization.archive_decode import decode_type
    from toolkit.serialization.format import _Corrupt

    entry = {"k": "Tensor", "dtype": "float32", "sizes": [2, 3], "strides": [3, 1], "device": "cpu",
             "requires_grad": False, "names": bad}
    with pytest.raises(_Corrupt, match="bad names in a tensor type"):
        decode_type(entry)
    entry["names"] = ["N", None]
    assert decode_type(entry).names == ("N", None)


def _manifest_file(obj, edit=None) -> io.BytesIO:
    """``obj`` saved as a manifest archive, its manifest's JSON changed by ``edit`` if given."""
    import json
    import zipfile

    from toolkit.serialization.format import _MANIFEST
    from toolkit.serialization.writer import save_manifest

    buf = io.BytesIO()
    save_manifest(obj, buf)
    if edit is None:
        buf.seek(0)
        return buf
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith(_MANIFEST):
                manifest = json.loads(data)
                edit(manifest)
                data = json.dumps(manifest).encode()
            dst.writestr(info, data)
    out.seek(0)
    return out


def test_manifest_archives_keep_names_and_refuse_bad_ones():
    x = toolkit.randn(2, 3, names=("N", None))
    assert toolkit.load(_manifest_file({"x": x}))["x"].names == ("N", None)

    def duplicate(manifest):
        manifest["tensors"][0]["names"] = ["N", "N"]

    with pytest.raises(RuntimeError, match="is not a valid checkpoint: tensor 0 has bad names"):
        toolkit.load(_manifest_file({"x": x}, duplicate))
