"""Op families; importing this package registers every op in the registry."""

from . import (  # noqa: F401
    activation,
    comparison,
    conversion,
    decomposition,
    elementwise,
    extrema,
    factorization,
    factory,
    indexing,
    linalg,
    moments,
    nn,
    norms,
    pointwise,
    random,
    reduction,
    selection,
    shape,
    shape_order,
    sorting,
    transcendental,
    view,
    view_order,
    view_parts,
)
from .registry import all_ops, get, op  # noqa: F401
