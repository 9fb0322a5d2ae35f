"""``toolkit.fft``: the registry's ``namespace="fft"`` ops, as ``torch.fft`` spells them.

``toolkit.fft.fft``, ``rfft``, ``irfftn``, ``hfft2``, ``fftfreq``, ``fftshift``... are the registry's ops
(``aten::fft_fft`` and so on), compositions of the three transforms in ``toolkit.ops.fft_primitives``::

    x = toolkit.randn(8)
    toolkit.fft.irfft(toolkit.fft.rfft(x), n=8)   # x again
"""

from __future__ import annotations

from .ops import api as _api

globals().update(_api.exported("fft"))

__all__ = sorted(_api.exported("fft"))
