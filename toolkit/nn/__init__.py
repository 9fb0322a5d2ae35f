"""``toolkit.nn``: modules, functional ops, initialisation and utilities, shaped like ``torch.nn``."""

from . import functional, init, parallel, utils
from .modules import *  # noqa: F403
from .parallel import DataParallel as DataParallel
from .parameter import *  # noqa: F403
