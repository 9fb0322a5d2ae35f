"""``verify``: run an exported model in ONNX Runtime beside toolkit and report how far apart they are."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..autograd import no_grad
from ..tensor import Tensor
from .export import TrainingMode, _flatten, _mode, _split_args, to_model_proto


@dataclass(frozen=True)
class VerificationResult:
    """Per output (by the model's output names): the largest absolute difference between toolkit and ONNX
    Runtime, and whether the shapes and dtypes matched."""

    names: tuple
    max_abs_diff: tuple
    mismatches: tuple  # human-readable shape/dtype mismatches, empty when none

    @property
    def max_diff(self) -> float:
        """The largest difference over all outputs (inf where shapes differ)."""
        return max(self.max_abs_diff, default=0.0)

    def ok(self, atol: float = 1e-4) -> bool:
        return not self.mismatches and self.max_diff <= atol

    def __repr__(self) -> str:
        parts = ", ".join(f"{n}: {d:.3g}" for n, d in zip(self.names, self.max_abs_diff))
        extra = f"; mismatches: {'; '.join(self.mismatches)}" if self.mismatches else ""
        return f"VerificationResult(max |toolkit - onnxruntime| per output: {parts}{extra})"


def run_onnx(model, inputs: Sequence) -> list:
    """Run an ONNX model (a path, bytes or ``ModelProto``) in ONNX Runtime on CPU with the given arrays."""
    import onnxruntime  # optional dependency: only running exported models needs it

    if not isinstance(model, (str, os.PathLike, bytes)):
        model = model.SerializeToString()
    session = onnxruntime.InferenceSession(os.fspath(model) if not isinstance(model, bytes) else model,
                                           providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    if len(names) != len(inputs):
        raise ValueError(f"the model takes {len(names)} inputs ({names}), {len(inputs)} were given")
    return session.run(None, {n: np.asarray(a) for n, a in zip(names, inputs)})


def verify(model, args=(), path=None, *, kwargs: dict | None = None, training=TrainingMode.EVAL,
           **export_options) -> VerificationResult:
    """Export ``model`` (unless ``path`` names its exported file), run it in ONNX Runtime and in toolkit on
    ``args``, and return the largest absolute difference of each output. ``export_options`` go to ``export``."""
    args, kwargs = _split_args(args, kwargs)
    source = path if path is not None else to_model_proto(model, args, kwargs=kwargs, training=training,
                                                          **export_options)
    flat_in: list = []
    _flatten((args, kwargs), flat_in)
    arrays = [t.detach().numpy() for t in flat_in if isinstance(t, Tensor)]
    got = run_onnx(source, arrays)
    with no_grad(), _mode(model, TrainingMode(training)):
        expected_tree = model(*args, **kwargs)
    expected: list = []
    _flatten(expected_tree, expected)
    names = _output_names(source, len(got))
    diffs, mismatches = [], []
    for name, e, o in zip(names, expected, got):
        e = e.detach().numpy() if isinstance(e, Tensor) else np.asarray(e)
        if e.shape != o.shape:
            mismatches.append(f"{name}: shape {o.shape} in ONNX Runtime, {e.shape} in toolkit")
            diffs.append(float("inf"))
            continue
        if e.dtype != o.dtype:
            mismatches.append(f"{name}: dtype {o.dtype} in ONNX Runtime, {e.dtype} in toolkit")
        d = np.abs(e.astype(np.float64) - o.astype(np.float64)) if e.size else np.zeros(0)
        diffs.append(float(np.nanmax(d)) if d.size else 0.0)
    if len(expected) != len(got):
        mismatches.append(f"{len(got)} outputs in ONNX Runtime, {len(expected)} in toolkit")
    return VerificationResult(tuple(names), tuple(diffs), tuple(mismatches))


def _output_names(source, n: int) -> list:
    import onnx  # optional dependency: only running exported models needs it

    proto = source if hasattr(source, "graph") else onnx.load(os.fspath(source))
    names = [o.name for o in proto.graph.output]
    return names if len(names) == n else [f"output_{i}" for i in range(n)]
