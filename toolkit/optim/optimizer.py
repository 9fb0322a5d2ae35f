"""``Optimizer``: the base class every optimizer derives from, with PyTorch's param groups and state dicts.

An optimizer holds ``param_groups`` (dicts with a ``"params"`` list and per-group options) and ``state``
(a dict keyed by parameter). ``state_dict()`` replaces parameters by their integer index so that a saved
state can be loaded into a fresh optimizer over new (equal-shaped) parameters, exactly as in PyTorch.
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable
from copy import deepcopy
from typing import Any

import toolkit
from toolkit.autograd.handle import RemovableHandle
from toolkit.tensor import Tensor

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook", "required"]

_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


class _RequiredParameter:
    """Marks an option that has no default: each param group must give it."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: Any) -> str:
    """``torch.typename``: the qualified class name of ``obj``."""
    if isinstance(obj, Tensor):
        return "toolkit." + type(obj).__name__
    module = type(obj).__module__
    qualname = type(obj).__qualname__
    return qualname if module in ("builtins", "__builtin__", None) else f"{module}.{qualname}"


def _use_grad_for_differentiable(func: Callable) -> Callable:
    """Run ``step`` with grad mode set to the ``differentiable`` option (off by default)."""

    @functools.wraps(func)
    def _use_grad(self, *args, **kwargs):
        prev = toolkit.is_grad_enabled()
        try:
            toolkit.set_grad_enabled(self.defaults["differentiable"])
            return func(self, *args, **kwargs)
        finally:
            toolkit.set_grad_enabled(prev)

    return _use_grad


def _get_value(x: Any) -> Any:
    """A Python number from a 0-d tensor (the ``step`` counters are tensors, as in PyTorch)."""
    return x.item() if isinstance(x, Tensor) else x


def _to_scalar(x: Any) -> Any:
    """A 1-element hyperparameter tensor squeezed to 0-d; numbers unchanged."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _scalar_value(x: Any) -> Any:
    """A hyperparameter as a Python number for ``alpha=``/``value=`` arguments."""
    return x.item() if isinstance(x, Tensor) else x


def _lerp_(t: Tensor, end: Tensor, weight: float) -> Tensor:
    """``t.lerp_(end, weight)`` for a number ``weight``, in PyTorch's two-sided form, without the tensor-weight path."""
    if abs(weight) < 0.5:
        return t.add_(end.sub(t), alpha=weight)
    return t.copy_(end.sub(t).mul_(weight - 1).add_(end))


def _get_scalar_dtype() -> Any:
    """The dtype of the ``step`` counters: float64 when that is the default dtype, else float32."""
    return toolkit.float64 if toolkit.get_default_dtype() == toolkit.float64 else toolkit.float32


def _step_counter(value: float = 0.0) -> Tensor:
    return toolkit.tensor(float(value), dtype=_get_scalar_dtype())


def _new_step(p: Tensor) -> Tensor:
    """A fresh step counter for parameter ``p``'s state (what ``_gather_group_state`` makes per parameter)."""
    return _step_counter()


def _check_fused(fused, differentiable, foreach) -> None:
    """PyTorch's refusals of ``fused`` combinations (accepted otherwise: there is one CPU path)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _device_dtype_check_for_fused(p: Tensor) -> None:
    """``fused=True`` takes floating-point parameters only (PyTorch's check, on a parameter's first step)."""
    if not (p.device.type in _FUSED_DEVICES and p.is_floating_point()):
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of supported devices: "
                           f"{_FUSED_DEVICES} but {p.dtype} and {p.device.type}")


_OPTION_NAMES = {"lr": "learning rate", "eps": "epsilon value"}


def _check_options(options: dict[str, Any], *, refuse_nan: bool = True, positive: tuple[str, ...] = ()) -> None:
    """PyTorch's checks of an optimizer's hyperparameters, with its messages, in the order ``options`` gives them.

    A tensor ``lr`` must hold one element; ``betas[0]`` and ``betas[1]`` must lie in [0, 1), ``rho`` in
    [0, 1], ``etas`` must satisfy ``0 < etas[0] < 1 < etas[1]``; every other option must be at least 0, or
    above 0 when named in ``positive`` (SparseAdam's ``lr`` and ``eps``). ``refuse_nan=False`` is SGD's form
    of the check (``value < 0.0`` refuses), which lets a NaN through where the other optimizers'
    (``not 0.0 <= value``) refuses it.

    Example::

        _check_options({"lr": lr, "eps": eps, "betas": betas})   # ValueError("Invalid learning rate: -1")
    """
    lr = options.get("lr")
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    for name, value in options.items():
        if name == "betas":
            for i in (0, 1):
                if not 0.0 <= value[i] < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {value[i]}")
        elif name == "etas":
            if not 0.0 < value[0] < 1.0 < value[1]:
                raise ValueError(f"Invalid eta values: {value[0]}, {value[1]}")
        elif name == "rho":
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Invalid rho value: {value}")
        elif name in positive:
            if not 0.0 < value:
                raise ValueError(f"Invalid {_OPTION_NAMES.get(name, name + ' value')}: {value}")
        elif not 0.0 <= value if refuse_nan else value < 0.0:
            raise ValueError(f"Invalid {_OPTION_NAMES.get(name, name + ' value')}: {value}")


def _run_closure(closure: Callable[[], Any] | None) -> Any:
    """The loss ``closure`` returns, computed with grad mode on (``step`` itself runs without it, and the
    closure calls ``backward``); None without a closure."""
    if closure is None:
        return None
    with toolkit.enable_grad():
        return closure()


def _steps_as_tensors(optimizer) -> None:
    """State loaded from an older format may hold ``step`` as a number: make it the 0-d counter tensor."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            p_state = optimizer.state.get(p, {})
            if "step" in p_state and not isinstance(p_state["step"], Tensor):
                p_state["step"] = _step_counter(float(p_state["step"]))


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter groups).
        defaults: default values of the optimization options, used when a group does not give them.
    """

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + _typename(params)
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ------------------------------------------------------------------------- pickling and repr
    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def _fill_group_defaults(self, **defaults: Any) -> None:
        """Give every param group (e.g. one unpickled from an older version) the options it lacks, in order."""
        for group in self.param_groups:
            for key, value in defaults.items():
                group.setdefault(key, value)

    def _gather_group_state(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                            **named_state: tuple[list, Callable[[Tensor], Tensor]]) -> None:
        """Append each parameter of ``group`` that has a gradient, its gradient, and its named state tensors.

        ``named_state`` maps a state key to ``(out_list, init)``; on a parameter's first step (empty state)
        every key is created with ``init(p)`` in the order given, which is the order of its state dict.
        """
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                for key, (_, init) in named_state.items():
                    state[key] = init(p)
            for key, (out, _) in named_state.items():
                out.append(state[key])

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    # ------------------------------------------------------------------------- step hooks
    def _patch_step_function(self) -> None:
        """Wrap the class's ``step`` once so that step pre/post hooks run around it."""
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = self.profile_hook_step(cls.step)
            cls.step.hooked = True

    @staticmethod
    def profile_hook_step(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            for pre_hook in itertools.chain(_global_optimizer_pre_hooks.values(),
                                            self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but got "
                                           f"{result}.")
            out = func(*args, **kwargs)
            for post_hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                             _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out

        return wrapper

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before ``step``; it may return new ``(args, kwargs)``."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ------------------------------------------------------------------------- state dicts
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}`` as in PyTorch."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param: Tensor, value: Tensor, param_id: Any,
                                                 param_groups: list[dict], key: Hashable = None) -> Tensor:
        """State tensors follow their parameter's dtype; ``step`` counters keep theirs."""
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=toolkit.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict from ``state_dict()`` (of this optimizer or of one over equal-shaped params)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             "group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                        for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, str):
                return type(value)(_cast(param, v, param_id=param_id, param_groups=param_groups) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k, param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ------------------------------------------------------------------------- gradients and groups
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: to ``None`` (default) or, with ``set_to_none=False``, to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad = p.grad.detach()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (the rest taken from ``defaults``)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        param_set: set[int] = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not param_set.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
