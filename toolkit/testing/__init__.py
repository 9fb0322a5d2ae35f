"""``toolkit.testing``: ``assert_close`` and ``make_tensor``, as ``torch.testing`` has them.

Tests written against PyTorch's helpers run unchanged, with the same default
tolerances per dtype and the same failure messages::

    toolkit.testing.assert_close(model(x), expected)
    x = toolkit.testing.make_tensor(2, 3, dtype=toolkit.float32, device="cpu")
"""

from __future__ import annotations

from ._comparison import assert_close
from ._creation import make_tensor
from ._deprecated import assert_allclose
from ._filecheck import FileCheck

__all__ = ["FileCheck", "assert_allclose", "assert_close", "make_tensor"]
