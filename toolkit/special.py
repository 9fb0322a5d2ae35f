"""``toolkit.special``: the registry's ``namespace="special"`` ops, as ``torch.special`` spells them.

``toolkit.special.erfcx``, ``ndtr``, ``i0e``, ``zeta``, ``chebyshev_polynomial_t``... are the registry's ops
(``aten::special_erfcx`` and so on); ``erf``, ``psi``, ``expit``, ``gammaln``, ``softmax``... are other names
of ``toolkit``'s own ops, as in PyTorch.

>>> toolkit.special.ndtr(toolkit.tensor([0.0]))
tensor([0.5000])
"""

from __future__ import annotations

from .ops import api as _api

globals().update(_api.exported("special"))

__all__ = sorted(_api.exported("special"))
