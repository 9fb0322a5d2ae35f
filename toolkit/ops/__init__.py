"""Op families; importing this package registers every op in the registry."""

from . import (  # noqa: F401
    conversion,
    elementwise,
    factory,
    linalg,
    reduction,
    view,
)
from .registry import all_ops, get, op  # noqa: F401
