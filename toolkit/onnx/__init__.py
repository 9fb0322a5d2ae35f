"""``toolkit.onnx``: export models to ONNX, as ``torch.onnx`` (its TorchScript-based exporter).

::

    toolkit.onnx.export(model, (x,), "model.onnx", input_names=["x"], output_names=["y"],
                        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    toolkit.onnx.verify(model, (x,))  # runs the file in ONNX Runtime and compares with toolkit

An op is exported by the lowering beside its definition (``@op.symbolic`` in ``toolkit/ops``), a JIT
node kind by the one attached to its declared kind (``_prim.py``). The ``onnx`` and ``onnxruntime``
packages are optional: they are imported when a model is exported or run, never by ``import toolkit``.
``import_onnx`` reads an ONNX model back into a runnable toolkit module, and ``show`` draws one beside the
toolkit IR it came from.

``import toolkit`` makes ``toolkit.onnx`` reachable, as ``import torch`` does ``torch.onnx``; the exporter's
modules load on the first use of one of their names, so importing toolkit does not pay for them.
"""

from __future__ import annotations

import importlib

from . import errors

# name -> the module of this package that defines it, loaded on first use
_LAZY = {
    "export": "export", "is_in_onnx_export": "export", "OperatorExportTypes": "export", "TrainingMode": "export",
    "verify": "verify", "VerificationResult": "verify",
    "OnnxExporterError": "errors", "UnsupportedOperatorError": "errors",
    "OnnxImportError": "_import", "import_onnx": "_import", "show": "_import",
}

__all__ = ["export", "verify", "is_in_onnx_export", "OperatorExportTypes", "TrainingMode", "errors",
           "OnnxExporterError", "UnsupportedOperatorError", "VerificationResult", "OnnxImportError",
           "import_onnx", "show"]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit.onnx' has no attribute '{name}'")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later reads find it directly
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
