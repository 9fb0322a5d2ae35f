"""``toolkit.optim``: optimizers and learning-rate schedulers, shaped like ``torch.optim``."""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
