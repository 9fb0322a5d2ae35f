"""``toolkit.jit.save``/``load`` of modules holding quantized tensors (buffers, attributes, graph constants): they
come back quantized, with their integers, dtype and parameters, in this process and in a fresh one, and a record
whose parameters were tampered with is refused."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import toolkit
from toolkit.jit import load, save

_X = (np.arange(6, dtype=np.float32).reshape(2, 3) / 7).astype(np.float32)


class Holder(toolkit.nn.Module):
    """A per-tensor quantized buffer and a per-channel quantized plain attribute (tracing makes it a constant)."""

    def __init__(self):
        super().__init__()
        x = toolkit.tensor(_X)
        self.register_buffer("qb", toolkit.quantize_per_tensor(x, 0.1, 3, toolkit.quint8))
        self.qc = toolkit.quantize_per_channel(x, toolkit.tensor([0.1, 0.2, 0.3], dtype=toolkit.float64),
                                               toolkit.tensor([0, 1, 2]), 1, toolkit.qint8)

    def forward(self, y):
        return self.qb.dequantize() + y + self.qc.dequantize()


def _roundtrip(obj):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf)


def _compiled(kind: str):
    m = Holder()
    y = toolkit.ones(2, 3)
    return (toolkit.jit.trace(m, (y,)) if kind == "trace" else toolkit.jit.script(m)), m, y


def assert_same_quantized(a, b) -> None:
    assert a.is_quantized and b.is_quantized
    assert a.dtype == b.dtype and a.qscheme() == b.qscheme()
    assert toolkit.equal(a, b)


@pytest.mark.parametrize("kind", ["trace", "script"])
def test_roundtrip_keeps_quantized_buffers_and_attributes(kind):
    compiled, m, y = _compiled(kind)
    loaded = _roundtrip(compiled)
    np.testing.assert_array_equal(loaded(y).numpy(), m(y).numpy())
    assert_same_quantized(loaded.qb, m.qb)
    assert loaded.qb.q_scale() == 0.1 and loaded.qb.q_zero_point() == 3
    if kind == "script":  # tracing folds the plain attribute into a constant
        assert_same_quantized(loaded.qc, m.qc)
        assert loaded.qc.q_per_channel_axis() == 1
        np.testing.assert_array_equal(loaded.qc.q_per_channel_scales().numpy(), [0.1, 0.2, 0.3])


def test_quantized_graph_constant_roundtrips():
    """Tracing makes the non-buffer attribute a ``prim::Constant`` of quantized type; it loads back quantized."""
    traced, m, y = _compiled("trace")
    consts = [n for n in traced.graph.nodes() if n.kind == "prim::Constant"
              and getattr(n.attributes.get("value"), "is_quantized", False)]
    assert len(consts) == 1
    assert str(consts[0].outputs[0].type) == "QInt8(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"
    loaded = _roundtrip(traced)
    (const,) = [n for n in loaded.graph.nodes() if n.kind == "prim::Constant"
                and isinstance(n.attributes.get("value"), toolkit.Tensor)]
    assert_same_quantized(const.attributes["value"], m.qc)
    np.testing.assert_array_equal(loaded(y * 2).numpy(), m(y * 2).numpy())


def test_loaded_buffer_shares_nothing_with_the_original():
    traced, m, _ = _compiled("trace")
    loaded = _roundtrip(traced)
    m.qb.int_repr()  # the original is untouched by loading
    assert loaded.qb.int_repr().numpy().tolist() == [[3, 4, 6], [7, 9, 10]]


def test_load_in_a_fresh_process(tmp_path):
    scripted, m, y = _compiled("script")
    save(scripted, tmp_path / "q.pt")
    out = tmp_path / "out.pt"
    script = textwrap.dedent(f"""
        import toolkit
        m = toolkit.jit.load({str(tmp_path / 'q.pt')!r})
        y = m(toolkit.ones(2, 3))
        toolkit.save({{"y": y, "qb": m.qb, "qc": m.qc}}, {str(out)!r})
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=str(tmp_path), capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert r.returncode == 0, r.stderr
    got = toolkit.load(out)
    np.testing.assert_array_equal(got["y"].numpy(), m(y).numpy())
    assert_same_quantized(got["qb"], m.qb)
    assert_same_quantized(got["qc"], m.qc)


def _tampered(change) -> io.BytesIO:
    """The scripted Holder's archive with ``change(record)`` applied to its quantized tensors' records."""
    scripted, _, _ = _compiled("script")
    buf = io.BytesIO()
    save(scripted, buf)
    buf.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("manifest.json"):
                manifest = json.loads(data)
                for rec in manifest["tensors"]:
                    if "quantized" in rec:
                        change(rec["quantized"])
                data = json.dumps(manifest).encode()
            zout.writestr(info, data)
    out.seek(0)
    return out


@pytest.mark.parametrize("change", [
    lambda q: q.update(scale=-1.0 if q["qscheme"] == "per_tensor_affine" else [0.1, -0.2, 0.3]),
    lambda q: q.update(zero_point=300 if q["qscheme"] == "per_tensor_affine" else [0, 1, 999]),
    lambda q: q.update(dtype="float32"),
    lambda q: q.update(qscheme="per_tensor_symmetric"),
    lambda q: q.update(axis=5 if q["qscheme"] != "per_tensor_affine" else 0),
    lambda q: q.pop("axis"),
], ids=["scale", "zero_point", "dtype", "qscheme", "axis", "missing"])
def test_tampered_quantization_record_is_refused(change):
    with pytest.raises(RuntimeError, match="not a valid archive"):
        load(_tampered(change))


def test_dtype_that_disagrees_with_the_stored_integers_is_refused():
    """A quint8 record over int8 integers would read them with the wrong range."""
    def change(q):
        q["dtype"] = "quint8" if q["dtype"] == "qint8" else "qint8"

    with pytest.raises(RuntimeError, match="not a valid archive.*quantized tensor"):
        load(_tampered(change))
