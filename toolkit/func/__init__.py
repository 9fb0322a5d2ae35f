"""``toolkit.func``: composable function transforms, as ``torch.func``.

``vmap`` maps a function over a batch dimension; ``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and
``hessian`` differentiate it; ``functional_call`` and ``stack_module_state`` turn modules into functions of
their parameters, so ``vmap(grad(loss))`` gives per-sample gradients of a model.
"""

from .functional_call import functional_call
from .jacobians import hessian, jacfwd, jacrev
from .module_state import replace_all_batch_norm_modules_, stack_module_state
from .transforms import functionalize, grad, grad_and_value, jvp, linearize, vjp
from .vmap import vmap

__all__ = [
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]
