"""toolkit.library: define ops outside the package, as ``torch.library`` does.

``custom_op`` turns a Python function (numba inside it, or a C++ extension's function from
``toolkit.utils.cpp_extension``) into a registry op named with its namespace, ``extension::lltm_forward``;
``Library(ns, kind)`` with ``define``/``impl`` is the lower-level route. Either way the op is one registry entry, so
eager calls dispatch through the registry, autograd records it with the backward ``register_autograd`` gave,
``toolkit.jit.trace`` records one ``extension::...`` node, ``toolkit.jit.script`` resolves calls to it,
``graph_for`` shows it, the profiler lists it, and ``toolkit.jit.save``/``load`` round-trip a model calling it in a
process that has registered it (one that has not gets an error naming the op and how to register it).

The registered ops are also ``toolkit.ops.<ns>.<name>``, as ``torch.ops.<ns>.<name>``, for every namespace not
named like a module of the ``toolkit.ops`` package (``toolkit.ops.quantized`` is that package's module).

Example::

    @toolkit.library.custom_op("mylib::twice", mutates_args=())
    def twice(x: toolkit.Tensor) -> toolkit.Tensor:
        return x * 2

    @twice.register_fake
    def _(x):
        return toolkit.empty_like(x)

    twice.register_autograd(lambda ctx, grad: grad * 2)
    toolkit.ops.mylib.twice(toolkit.ones(3))        # the same op
"""

from ._custom_op import CustomOpDef, custom_op, register_autograd, register_fake, register_kernel
from ._library import Library
from ._schema import infer_schema

__all__ = ["CustomOpDef", "Library", "custom_op", "infer_schema", "register_autograd", "register_fake",
           "register_kernel"]
