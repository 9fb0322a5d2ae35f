"""The optimizers' functional forms in one namespace, as ``torch.optim._functional`` gathers them: each runs
one optimizer's update over lists of parameters, gradients and state tensors.

``sparse_adam`` is not here: it needs sparse gradients, which toolkit does not have.
"""

from .adadelta import adadelta
from .adagrad import adagrad
from .adam import adam
from .adamax import adamax
from .adamw import adamw
from .asgd import asgd
from .nadam import nadam
from .radam import radam
from .rmsprop import rmsprop
from .rprop import rprop
from .sgd import sgd

__all__ = ["adadelta", "adagrad", "adam", "adamax", "adamw", "asgd", "nadam", "radam", "rmsprop", "rprop", "sgd"]
