"""``toolkit.nn.qat``: the older name of :mod:`toolkit.ao.nn.qat`, kept as PyTorch keeps ``torch.nn.qat``."""

from toolkit.ao.nn.qat import *  # noqa: F401, F403
from toolkit.ao.nn.qat import __all__  # noqa: F401
