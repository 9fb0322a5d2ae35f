"""``toolkit.nn.intrinsic``: the older name of :mod:`toolkit.ao.nn.intrinsic`, kept as PyTorch keeps
``torch.nn.intrinsic``."""

from toolkit.ao.nn.intrinsic import *  # noqa: F401, F403
from toolkit.ao.nn.intrinsic import __all__, _FusedModule  # noqa: F401
