"""The errors of ONNX export, named as ``torch.onnx.errors`` names them."""

from __future__ import annotations


class OnnxExporterError(RuntimeError):
    """Export could not write the model."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the model has no ONNX lowering, or its lowering cannot express this call.

    The message names the op (``aten::xxx``) and where the model calls it, so the user knows which line to
    change or which lowering to add (``@op.symbolic`` beside the op's definition).
    """

    def __init__(self, name: str, version: int, reason: str | None = None, source: str | None = None):
        self.name, self.version, self.reason, self.source = name, version, reason, source
        if reason is None:
            message = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported."
        else:
            message = f"Exporting the operator '{name}' to ONNX opset version {version} failed: {reason}"
        if source:
            message += f" (called at {source})"
        super().__init__(message)


class SymbolicValueError(OnnxExporterError):
    """A value given to a lowering is not what it can write (a dynamic value where a constant is needed)."""


class UnsupportedLowering(Exception):
    """What ``g.unsupported(why)`` gives a lowering to raise; the exporter turns it into an
    ``UnsupportedOperatorError`` naming the op and the model's line."""
