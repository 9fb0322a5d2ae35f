"""``toolkit.nn.intrinsic.qat``: the older name of :mod:`toolkit.ao.nn.intrinsic.qat`."""

from toolkit.ao.nn.intrinsic.qat import *  # noqa: F401, F403
from toolkit.ao.nn.intrinsic.qat import __all__  # noqa: F401
