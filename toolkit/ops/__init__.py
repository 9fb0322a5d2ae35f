"""Op families; importing this package registers every op in the registry."""

from . import (  # noqa: F401
    comparison,
    conversion,
    elementwise,
    factory,
    indexing,
    linalg,
    nn,
    random,
    reduction,
    shape,
    view,
)
from .registry import all_ops, get, op  # noqa: F401
