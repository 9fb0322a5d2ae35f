"""``custom_op``: a Python function (numba inside, or a C++ extension's function) made a registry op.

The decorated function is the op's kernel; its type hints give the schema (or ``schema=`` does). The result, a
``CustomOpDef``, calls the op through the dispatcher, so autograd (with ``register_autograd``), the tracer, script,
the profiler, ``graph_for`` and JIT archives see one ``<ns>::<name>`` op, as torch's ``torch.library.custom_op``.

Example::

    @toolkit.library.custom_op("mylib::twice", mutates_args=())
    def twice(x: toolkit.Tensor) -> toolkit.Tensor:
        return x * 2

    twice.register_fake(lambda x: toolkit.empty_like(x))
    twice.register_autograd(lambda ctx, g: g * 2)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..ops import registry as R
from ._entry import LibraryOp
from ._library import duplicate_error, library_op, name_taken
from ._schema import infer_schema, parse_library_schema, split_name


class CustomOpDef:
    """The op ``custom_op`` made: call it like the function; ``register_fake``, ``register_autograd`` and
    ``register_kernel`` complete it. ``_opoverload`` is its registry ``OpDef`` (also ``toolkit.ops.<ns>.<name>``)."""

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable, device_types=None):
        self._namespace, self._name = namespace, name
        self._qualname = f"{namespace}::{name}"
        parsed = parse_library_schema(self._qualname, schema)
        taken = name_taken(parsed)
        if any(not (isinstance(getattr(o, "library_op", None), LibraryOp) and o.library_op.custom) for o in taken):
            raise duplicate_error(parsed)
        for o in taken:  # an earlier custom_op of this name (a re-run cell, a reloaded module): replaced, as torch's
            R.unregister(o)
        self._entry = LibraryOp(parsed, (fn.__doc__ or "") if fn is not None else "", custom=True)
        R.register(self._entry.op)
        if fn is not None:
            self._entry.set_kernel(device_types, fn)
        self.__name__ = name
        self.__doc__ = fn.__doc__ if fn is not None else None
        self.__module__ = getattr(fn, "__module__", __name__)
        # What script sees: the registry op itself (``toolkit.jit.script`` resolves the call to it).
        self.__wrapped_ops__ = (self._entry.op,)

    @property
    def _opoverload(self) -> R.OpDef:
        return self._entry.op

    @property
    def _schema(self):
        return self._entry.op.schema

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._entry.op(*args, **kwargs)

    def register_fake(self, fn: Callable) -> Callable:
        """The op's shape function: ``fn`` gets tensors with the inputs' shapes and dtypes (empty: never read
        their values) and returns tensors with the outputs' (``toolkit.empty_like(x)``, ``x.new_empty(n)``)."""
        self._entry.set_fake(fn)
        return fn

    def register_autograd(self, backward: Callable, /, *, setup_context: Callable | None = None) -> None:
        """``backward(ctx, *grads) -> one gradient per input`` (None for non-Tensor inputs);
        ``setup_context(ctx, inputs, output)`` saves what it needs on ``ctx``."""
        self._entry.set_autograd(backward, setup_context)

    def register_kernel(self, device_types: str | Iterable[str] | None, fn: Callable | None = None):
        """A kernel for some device types (``"cpu"``, ``"cuda"``); usable as a decorator."""
        return register_kernel(self, device_types, fn)

    def _destroy(self) -> None:
        """Remove the op from the registry."""
        R.unregister(self._entry.op)


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args: Iterable[str] | str,
              device_types: str | Iterable[str] | None = None, schema: str | None = None):
    """torch.library.custom_op: make ``fn`` the op ``name`` (``"mylib::twice"``). ``mutates_args`` names the
    Tensor arguments it writes (``()``: none); ``device_types`` limits its kernel to some devices; ``schema``
    replaces the schema inferred from the type hints (``"(Tensor x, float s) -> Tensor"``)."""
    ns, opname = split_name(name)
    if isinstance(mutates_args, str) and mutates_args != "unknown":
        raise ValueError(f"custom_op({name!r}): mutates_args must be a tuple of argument names or 'unknown', got "
                         f"{mutates_args!r}")

    def inner(f: Callable) -> CustomOpDef:
        text = schema if schema is not None else infer_schema(f, mutates_args)
        return CustomOpDef(ns, opname, text, f, device_types)

    return inner if fn is None else inner(fn)


def register_fake(op, fn: Callable | None = None, /, *, lib=None):
    """torch.library.register_fake: the shape function of ``op`` (``"ns::name"``, a CustomOpDef or the op)."""
    entry = library_op(op)

    def inner(f: Callable) -> Callable:
        entry.set_fake(f)
        return f

    return inner if fn is None else inner(fn)


def register_autograd(op, backward: Callable, /, *, setup_context: Callable | None = None, lib=None) -> None:
    """torch.library.register_autograd: ``backward`` (and ``setup_context``) of ``op``."""
    library_op(op).set_autograd(backward, setup_context)


def register_kernel(op, device_types, fn: Callable | None = None, /, *, lib=None):
    """torch.library.register_kernel: a kernel of ``op`` for some device types; usable as a decorator."""
    entry = library_op(op)

    def inner(f: Callable) -> Callable:
        entry.set_kernel(device_types, f)
        return f

    return inner if fn is None else inner(fn)
