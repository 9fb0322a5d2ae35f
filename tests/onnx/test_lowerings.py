"""Tests generated from the op registry: every op with an ONNX lowering, on each of its samples.

Each sample (floating arrays as float32) is traced through the op's public call, exported, checked with
onnx's full check, run in ONNX Runtime and compared with toolkit's eager result, dtype included. Nothing here
names an op: adding ``@op.symbolic`` adds its tests. A sample the exporter refuses with a reason (a call ONNX
cannot express) is skipped with that reason.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.onnx
from toolkit.ops import registry
from toolkit.ops.registry import INPLACE

from ..conftest import assert_close
from ..ops.test_registry import _call_tk

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

OPS = [o for o in registry.all_ops() if o.kind != INPLACE and o.onnx_lowering is not None and o.samples]


def _samples(o) -> list:
    return list(o.samples(np.random.default_rng(0)))


def _cases():
    for o in OPS:
        for i, _ in enumerate(_samples(o)):
            yield pytest.param(o, i, id=f"{o.schema.full_name}-{i}")


def _float32(x):
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return x.astype(np.float32)
    if isinstance(x, (list, tuple)):
        return type(x)(_float32(e) for e in x)
    return x


def _flat_arrays(x, out: list):
    """Replace each array by a placeholder index into ``out`` (the traced inputs), keeping the structure."""
    if isinstance(x, np.ndarray):
        out.append(toolkit.tensor(x))
        return ("__input__", len(out) - 1)
    if isinstance(x, list):
        return [_flat_arrays(e, out) for e in x]
    if isinstance(x, tuple):
        return tuple(_flat_arrays(e, out) for e in x)
    return x


def _rebuild(x, tensors):
    if isinstance(x, tuple) and len(x) == 2 and x[0] == "__input__":
        return tensors[x[1]]
    if isinstance(x, list):
        return [_rebuild(e, tensors) for e in x]
    if isinstance(x, tuple):
        return tuple(_rebuild(e, tensors) for e in x)
    return x


def _tensors_of(result) -> list:
    if isinstance(result, toolkit.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _tensors_of(r)]
    return []


@pytest.mark.parametrize("o, i", list(_cases()))
def test_lowering_matches_eager(o, i):
    args, kwargs = _float32(_samples(o)[i])
    inputs: list = []
    template = _flat_arrays((tuple(args), dict(kwargs)), inputs)
    if not inputs:
        pytest.skip("the sample has no tensor input")

    def call(*tensors):
        a, k = _rebuild(template, tensors)
        return tuple(_tensors_of(_call_tk(o, a, k)))

    try:
        expected = call(*inputs)
    except Exception as e:  # the sample is an error case of the op itself
        pytest.skip(f"the sample raises in eager mode: {type(e).__name__}")
    if not expected or any(t.numel() == 0 for t in expected):
        pytest.skip("no non-empty tensor result")
    if any(not toolkit.equal(a, b) for a, b in zip(expected, call(*inputs)) if not a.dtype.is_floating_point
           or not (a.isnan().any() or b.isnan().any())):
        pytest.skip("the op is random: two eager calls differ")
    traced = toolkit.jit.trace(call, tuple(inputs), check_trace=False)
    if not any(n.op is o for n in traced.graph.all_nodes()):
        pytest.skip("the public call does not record this overload")
    try:
        proto = toolkit.onnx.export(traced, tuple(inputs), None)
        onnx.checker.check_model(proto, full_check=True)
        session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    except toolkit.onnx.UnsupportedOperatorError as e:
        if e.name == o.qualified_name and e.reason is not None:
            pytest.skip(f"ONNX cannot express this call: {e.reason}")
        raise
    except Exception as e:  # an op ONNX or ONNX Runtime has no kernel for at this dtype
        message = str(e)
        if "has unsupported type" not in message and "Could not find an implementation" not in message:
            raise
        pytest.skip(f"ONNX (Runtime) has no such op for this dtype: {message[message.find('op_type'):][:120]}")
    feeds = {s.name: t.numpy() for s, t in zip(session.get_inputs(), inputs)}
    got = session.run(None, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_close(toolkit.tensor(np.asarray(g)), e, atol=1e-5, rtol=1e-4)
