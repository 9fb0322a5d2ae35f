"""Layers. Each module file lists its public classes in ``__all__``."""

from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .attention import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .channelshuffle import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .instancenorm import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .transformer_decoder import *  # noqa: F403
from .transformer_model import *  # noqa: F403
from .upsampling import *  # noqa: F403
