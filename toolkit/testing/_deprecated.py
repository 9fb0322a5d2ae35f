"""``assert_allclose``: ``torch.testing``'s comparison before ``assert_close``, kept so old tests run (it warns).

It differs from ``assert_close`` as PyTorch's did: looser default tolerances per dtype, NaNs equal by default, and
no dtype check (``expected`` is converted to ``actual``'s dtype)::

    toolkit.testing.assert_allclose(x, [1.0, 2.0])       # FutureWarning: use assert_close
"""

from __future__ import annotations

import warnings
from typing import Any

from .._core import dtypes as _dt
from ..factories import tensor
from ..tensor import Tensor
from ._comparison import assert_close

# assert_allclose's own (rtol, atol) per dtype; other dtypes compare exactly.
_PRECISIONS = {_dt.float16: (1e-3, 1e-3), _dt.float32: (1e-4, 1e-5), _dt.float64: (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated since PyTorch 1.12: use ``toolkit.testing.assert_close``."""
    warnings.warn("`toolkit.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `toolkit.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol = max(_PRECISIONS.get(d, (0.0, 0.0))[0] for d in (actual.dtype, expected.dtype))
        atol = max(_PRECISIONS.get(d, (0.0, 0.0))[1] for d in (actual.dtype, expected.dtype))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
