"""PyTorch's short names for graph nodes, as its error messages name the op that produced a tensor.

Kept apart from the node classes so that saved tensors, which the nodes hold,
can name a node in their version-mismatch error without importing the nodes.
"""

from __future__ import annotations

import re


def short_name(node) -> str:
    """``ExpBackward0`` -> ``Exp``, as PyTorch names a producer in its version-mismatch error."""
    cls = node if isinstance(node, type) else type(node)
    return re.sub(r"Backward\d*$", "", cls.__name__)
