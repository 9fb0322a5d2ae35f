"""One library-defined op: its registry ``OpDef`` and the user's functions behind it.

``toolkit.library`` adds no second call path. An op it defines is an ordinary registry entry (named with its
namespace, ``extension::lltm_forward``) whose CPU/CUDA kernels, meta rule and derivative are thin adapters over the
user's Python functions, kept here:

- kernels take and return Tensors (as torch's custom-op kernels do), while the dispatcher hands kernels arrays: the
  adapter wraps the arrays as Tensors without copying, runs the user's kernel without recording autograd, and checks
  what comes back against the schema (count, type, no alias of an input, as torch refuses);
- the meta rule runs the fake (``register_fake``) on empty tensors of the inputs' shapes and dtypes, so the JIT's
  types and eager errors come from it; the first eager call of each input signature checks the fake against the
  kernel's real outputs, so a fake giving the wrong shape is an error naming the op, not a wrong graph type;
- the derivative calls ``setup_context(ctx, inputs, output)`` and ``backward(ctx, *grads)`` (``register_autograd``)
  with the saved inputs and outputs, so eager autograd, double backward (when ``backward`` uses toolkit ops) and the
  autograd graph's names work as for a built-in op. Without ``register_autograd``, backward through the op raises
  torch's error.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from .._core.device import as_device
from .._core.dtypes import FROM_NUMPY
from .._core.meta import TensorMeta
from ..autograd.function import FunctionCtx
from ..autograd.grad_mode import no_grad
from ..ops import registry as R
from ..ops.schema import Schema
from ..tensor import Tensor, wrap

DEVICE_TYPES = ("cpu", "cuda")
_CHECKED_LIMIT = 4096  # input signatures whose fake was checked, per op (then no more are remembered)


class BackwardContext(FunctionCtx):
    """The ``ctx`` of ``setup_context``/``backward``: ``save_for_backward``/``saved_tensors``,
    ``needs_input_grad`` (one flag per input of the schema) and any attribute ``setup_context`` sets."""

    def __init__(self, needs_input_grad: tuple):
        self.to_save = ()
        self.needs_input_grad = needs_input_grad

    @property
    def saved_tensors(self) -> tuple:
        return tuple(self.to_save)


class LibraryOp:
    """A registry op defined through ``toolkit.library``, with the user's kernels, fake and autograd functions."""

    def __init__(self, schema: Schema, doc: str = "", *, custom: bool = False):
        self.custom = custom  # made by ``custom_op`` (a later ``custom_op`` of the same name replaces it)
        self.kernels: dict[str, Callable] = {}  # device type -> fn(*args) taking and returning Tensors
        self.fake: Callable | None = None
        self.backward: Callable | None = None
        self.setup_context: Callable | None = None
        self._checked: set = set()
        d = R.OpDef(schema, kind=R.NN, cpu=None, promotion=R.PROMOTE_NONE, method=False, function=False,
                     out=False, doc=doc)
        self.op = d
        self.name = d.qualified_name
        d.tested_elsewhere("a library op is tested where it is defined")
        ns, _, base = d.qualified_name.partition("::")
        d.grad_fn = f"GeneratedBackwardFor_{ns}_{base}_{d.overload or 'default'}Backward"  # torch's class name
        d.meta = self.meta
        d.library_op = self
        d.written_args = tuple(i for i, a in enumerate(schema.args) if a.alias.endswith("!"))  # mutates_args
        d.derivative_rule(self._missing_backward_rule())

    # -- kernels ---------------------------------------------------------------------------------------------------
    def set_kernel(self, device_types, fn: Callable) -> None:
        """Run ``fn`` on tensors of these device types (``None``: every device)."""
        if not callable(fn):
            raise TypeError(f"{self.name}: a kernel must be callable, got {type(fn).__name__}")
        types = DEVICE_TYPES if device_types is None else (
            (device_types,) if isinstance(device_types, str) else tuple(device_types))
        for t in types:
            t = as_device(t).type
            if t not in DEVICE_TYPES:
                raise ValueError(f"{self.name}: unsupported device type {t!r} (one of {DEVICE_TYPES})")
            self.kernels[t] = fn
            self.op.kernels[t] = self._array_kernel(t)

    def _array_kernel(self, device_type: str) -> Callable:
        def kernel(*arrays):
            return self.run_kernel(device_type, arrays)

        kernel.__name__ = f"{self.name}[{device_type}]"
        return kernel

    def run_kernel(self, device_type: str, arrays: tuple):
        """The dispatcher's kernel call: arrays in, arrays out, the user's function on Tensors in between."""
        d = self.op
        device = as_device(device_type)
        args, inputs = list(arrays), []
        for i in d.tensor_args:
            a = arrays[i]
            if isinstance(a, list):
                args[i] = [None if e is None else wrap(e, None, device) for e in a]
                inputs.extend(e for e in a if e is not None)
            elif a is not None:
                args[i] = wrap(a, None, device)
                inputs.append(a)
        try:
            with no_grad():
                out = self.kernels[device_type](*args)
        except _KERNEL_ERRORS as e:
            named = _naming(self.name, e)
            if named is e:
                raise
            raise named from e
        result = self._unwrap(out, inputs)
        if self.fake is not None and len(self._checked) < _CHECKED_LIMIT:
            self._check_fake(arrays, result)
        return result

    def _unwrap(self, out, inputs: list):
        d = self.op
        if not d.schema.returns:
            if out is not None:
                raise RuntimeError(f"{self.name}: the kernel returned {type(out).__name__}, the schema returns nothing")
            return None
        if d.returns_list:
            outs, n = (list(out) if isinstance(out, (list, tuple)) else None), None
        else:
            n = d.n_outputs
            outs = [out] if n == 1 else (list(out) if isinstance(out, (tuple, list)) else None)
        if outs is None or (n is not None and len(outs) != n):
            got = f"{len(out)} values" if isinstance(out, (tuple, list)) else type(out).__name__
            raise RuntimeError(f"{self.name}: the kernel returned {got}, the schema {d.schema} returns "
                               f"{n if n is not None else 'a list'}")
        arrays = []
        for k, (t, r) in enumerate(zip(outs, d.schema.returns if n is not None else [d.schema.returns[0]] * len(outs))):
            if r.type.startswith("Tensor"):
                if not isinstance(t, Tensor):
                    raise RuntimeError(f"{self.name}: output {k} of the kernel is {type(t).__name__}, the schema says "
                                       f"{r.type}")
                a = t._data
                if isinstance(a, np.ndarray) and any(isinstance(i, np.ndarray) and np.may_share_memory(a, i)
                                                     for i in inputs):
                    raise RuntimeError(
                        f"{self.name}: The output of this custom operator (1) must not also be an input to this "
                        "custom operator and (2) may not alias any inputs to this custom operator or other returns. "
                        "The most common way to trigger this error is if we have y = custom_op(x) and y and x are the "
                        "same Tensor. Please instead return a clone of the offending output tensor(s) (e.g. return "
                        "x.clone()) or refactor the custom operator to not return y.")
                arrays.append(a)
            else:
                arrays.append(t)
        if d.returns_list:
            return arrays
        return arrays[0] if n == 1 else tuple(arrays)

    # -- the fake: meta rule and its check ---------------------------------------------------------------------------
    def meta(self, *bound):
        """The registry's meta rule: the fake's outputs run on empty tensors with the inputs' metadata."""
        if self.fake is None:
            raise NotImplementedError(f"{self.name}: no fake registered (register_fake), so its output shapes are "
                                      "unknown before it runs")
        device = None
        args = list(bound)
        for i in self.op.tensor_args:
            v = bound[i]
            if isinstance(v, (list, tuple)):
                args[i] = [None if e is None else self._empty_like(e) for e in v]
                device = device or next((e.device for e in v if e is not None), None)
            elif v is not None:
                args[i] = self._empty_like(v)
                device = device or v.device
        with no_grad():
            out = self.fake(*args)
        outs = [out] if self.op.n_outputs == 1 and not self.op.returns_list else list(out or ())
        metas = []
        for k, t in enumerate(outs):
            if not isinstance(t, Tensor):
                raise RuntimeError(f"{self.name}: the fake (register_fake) returned {type(t).__name__} for output {k}, "
                                   "expected a Tensor")
            metas.append(TensorMeta(tuple(t.shape), t.dtype, device if device is not None else t.device))
        return metas[0] if len(metas) == 1 and self.op.n_outputs == 1 else metas

    @staticmethod
    def _empty_like(v) -> Tensor:
        shape = tuple(v.shape)
        return wrap(np.empty(shape, v.dtype.np if hasattr(v.dtype, "np") else v.dtype))

    def _check_fake(self, arrays: tuple, result) -> None:
        key = tuple((a.shape, a.dtype.str) if hasattr(a, "shape") else _hashable(a) for a in arrays)
        if key in self._checked:
            return
        bound = [wrap(a) if isinstance(a, np.ndarray) else a for a in arrays]
        bound = [[wrap(e) if isinstance(e, np.ndarray) else e for e in a] if isinstance(a, list) else a for a in bound]
        metas = self.meta(*bound)
        metas = [metas] if isinstance(metas, TensorMeta) else metas
        real = [result] if not isinstance(result, (tuple, list)) else list(result)
        if len(metas) != len(real):
            raise RuntimeError(f"{self.name}: the fake (register_fake) gives {len(metas)} outputs, the kernel "
                               f"{len(real)}")
        for k, (m, r) in enumerate(zip(metas, real)):
            if not hasattr(r, "shape"):
                continue
            if tuple(m.shape) != tuple(r.shape) or m.dtype is not FROM_NUMPY[np.dtype(r.dtype)]:
                shapes = ", ".join(str(tuple(a.shape)) for a in arrays if hasattr(a, "shape"))
                raise RuntimeError(
                    f"{self.name}: the fake (register_fake) and the kernel disagree on output {k}: the fake gives "
                    f"shape {tuple(m.shape)} and dtype {m.dtype}, the kernel returned shape {tuple(r.shape)} and dtype "
                    f"{FROM_NUMPY[np.dtype(r.dtype)]} (inputs of shapes {shapes}). Fix the fake: the JIT types the "
                    "op's outputs from it.")
        self._checked.add(key)

    def set_fake(self, fn: Callable) -> None:
        if not callable(fn):
            raise TypeError(f"{self.name}: the fake must be callable, got {type(fn).__name__}")
        self.fake = fn
        self._checked = set()

    # -- autograd ----------------------------------------------------------------------------------------------------
    def set_autograd(self, backward: Callable, setup_context: Callable | None) -> None:
        if not callable(backward) or (setup_context is not None and not callable(setup_context)):
            raise TypeError(f"{self.name}: register_autograd expects callables (backward, setup_context=...)")
        self.backward, self.setup_context = backward, setup_context
        names = self.op.arg_names
        params = [inspect.Parameter("grad", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in (*names, "result", "needs_input_grad")]

        def rule(grad, **saved):
            return self.run_backward(grad, saved)

        rule.__signature__ = inspect.Signature(params)
        self.op.__dict__.pop("_saver_plan", None)  # the names it saves changed
        self.op.derivative_rule(rule)

    def _missing_backward_rule(self) -> Callable:
        def rule(grad):
            raise RuntimeError(f"Trying to backward through {self.name} but no autograd formula was registered. "
                               "Please use register_autograd to add one.")

        return rule

    def run_backward(self, grad, saved: dict):
        d = self.op
        needs = saved.pop("needs_input_grad")
        result = saved.pop("result")
        per_input = [False] * len(d.arg_names)
        for i, need in zip(d.diff_args, needs):
            per_input[i] = bool(need)
        ctx = BackwardContext(tuple(per_input))
        inputs = tuple(saved[n] for n in d.arg_names)
        if self.setup_context is not None:
            self.setup_context(ctx, inputs, result)
        grads = self.backward(ctx, *(grad if isinstance(grad, tuple) and d.n_outputs > 1 else (grad,)))
        if not isinstance(grads, tuple):  # one input's gradient (a list: a Tensor[] input's)
            grads = (grads,)
        if len(grads) != len(d.arg_names):
            raise RuntimeError(f"{self.name}: expected the backward function (register_autograd) to return "
                               f"{len(d.arg_names)} gradients, one per input of {d.schema} (None for a non-Tensor "
                               f"input), got {len(grads)}")
        for i, g in enumerate(grads):
            if g is not None and i not in d.diff_args:
                raise RuntimeError(f"{self.name}: the backward function returned a gradient for non-Tensor input "
                                   f"{d.arg_names[i]!r}; return None for it")
        return tuple(grads[i] for i in d.diff_args)


# What dispatch turns into a RuntimeError naming the op unless the message names it already: the user's kernel keeps
# its error's type (a C++ extension's ValueError stays one, as under torch) with the op's name in front.
_KERNEL_ERRORS = (ValueError, IndexError, TypeError, ZeroDivisionError, OverflowError)


def _naming(name: str, e: Exception) -> Exception:
    if str(e).startswith(name):
        return e
    try:
        return type(e)(f"{name}: {e}")
    except Exception:  # an error type that takes other arguments: dispatch names the op instead
        return e


def _hashable(v):
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)
