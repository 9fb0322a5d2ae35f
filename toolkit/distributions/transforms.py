"""Transforms: invertible (or not) maps between constrained spaces, with their log-det-Jacobians.

Every public name of PyTorch's ``torch.distributions.transforms``. The protocol and the combinators live in
``transform_base``, the elementwise maps in ``transforms_elementwise``, the maps of vectors and matrices in
``transforms_structured``.

Example::

    >>> t = ExpTransform()
    >>> y = t(toolkit.tensor([0.0, 1.0]))
    >>> t.inv(y), t.log_abs_det_jacobian(t.inv(y), y)
"""

from toolkit.distributions.transform_base import (
    ComposeTransform,
    IndependentTransform,
    ReshapeTransform,
    Transform,
    identity_transform,
)
from toolkit.distributions.transforms_elementwise import (
    AbsTransform,
    AffineTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
)
from toolkit.distributions.transforms_structured import (
    CatTransform,
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StackTransform,
    StickBreakingTransform,
)

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
    "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
    "identity_transform",
]
