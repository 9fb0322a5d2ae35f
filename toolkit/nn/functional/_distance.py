"""``F.cosine_similarity``, ``F.pairwise_distance``, ``F.pdist``: the registry's ops under torch.nn.functional.

PyTorch exposes these distance ops in both ``torch`` and ``torch.nn.functional`` with the same signature, so
the functional names are the ``toolkit`` functions themselves.
"""

from __future__ import annotations

from ...ops import api as _api

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]

cosine_similarity = _api.function_for("cosine_similarity")
pairwise_distance = _api.function_for("pairwise_distance")
pdist = _api.function_for("pdist")
