"""``toolkit.nn.functional``: every registry op in the ``nn.functional`` namespace, plus wrappers.

Ops whose PyTorch functional signature matches the op's schema come straight
from the registry; the ``_*.py`` modules hold wrappers where PyTorch's Python
signature differs (``inplace=``, ``return_indices=``, ``training=``, ``reduction=``).
"""

from ...ops import api as _api

globals().update(_api.exported("nn.functional"))
for _name in ("relu", "sigmoid", "tanh", "softmax", "log_softmax"):
    if _name not in globals():
        globals()[_name] = _api.function_for(_name)

from ._activation import *  # noqa: E402, F403
from ._attention import *  # noqa: E402, F403
from ._conv import *  # noqa: E402, F403
from ._distance import *  # noqa: E402, F403
from ._dropout import *  # noqa: E402, F403
from ._embedding import *  # noqa: E402, F403
from ._fold import *  # noqa: E402, F403
from ._linear import *  # noqa: E402, F403
from ._loss import *  # noqa: E402, F403
from ._normalization import *  # noqa: E402, F403
from ._normalize import *  # noqa: E402, F403
from ._padding import *  # noqa: E402, F403
from ._pooling import *  # noqa: E402, F403
from ._sampling import *  # noqa: E402, F403
from ._shuffle import *  # noqa: E402, F403
