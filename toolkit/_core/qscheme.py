"""``toolkit.qscheme`` and its values (``toolkit.per_tensor_affine``...): how a quantized tensor maps its integers
back to real numbers, one scale and zero point for the whole tensor or one pair per channel along an axis::

    q = toolkit.quantize_per_tensor(x, 0.1, 10, toolkit.quint8)
    q.qscheme()        # toolkit.per_tensor_affine
"""

from __future__ import annotations

from .named import Named


class qscheme(Named):  # noqa: N801  (PyTorch's name)
    """One quantization scheme, printed as PyTorch prints it (``toolkit.per_tensor_affine``); one object each."""

    __slots__ = ()

    def __reduce__(self):
        return (_by_name, (self.name,))


qscheme.__module__ = "toolkit"

per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")

_NAMES = {s.name: s for s in (per_tensor_affine, per_channel_affine, per_tensor_symmetric, per_channel_symmetric,
                              per_channel_affine_float_qparams)}


def _by_name(name: str) -> qscheme:
    return _NAMES[name]
