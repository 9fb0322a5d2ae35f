"""``toolkit.jit.freeze``: a compiled module with its parameters and attributes folded into its graph as constants.

An inference model's weights never change, so ``freeze`` reads each ``prim::GetAttr``
of the module (``self.l.weight``, ``self.training``, ``self.k``) once and puts the value
in the graph as a ``prim::Constant``; constant propagation then precomputes what
depends on weights alone, and the dropped submodule reads leave a flat graph. As in
PyTorch the module must be in eval mode, the result owns copies (changing the original
afterwards does not change it), and ``preserved_attrs`` names the attributes that stay
attributes (read at run time, settable) and the methods that are kept besides ``forward``.

Example::

    >>> frozen = toolkit.jit.freeze(toolkit.jit.script(model.eval()))
    >>> print(frozen.graph)      # %self.fc.weight : Float(10, 20, ...) = prim::Constant[value=<Tensor>]()
"""

from __future__ import annotations

import copy
import inspect

from ..nn.modules.module import Module
from ..tensor import Tensor
from .frontend.script.api import CompiledMethod, RecursiveScriptModule
from .ir import kinds as K
from .ir import types as T
from .ir.graph import Graph, Value
from .passes import AliasSets, run_passes
from .passes.fold_conv_arith import fold_conv_arith_changed
from .passes.fold_conv_bn import fold_conv_bn_changed
from .passes.manager import DEFAULT_PIPELINE
from .runtime.executor import ProfilingExecutor
from .script_module import ScriptModule as _CompiledModule

__all__ = ["freeze", "optimize_for_inference"]

_CONSTANT_TYPES = (bool, int, float, str, type(None))


def freeze(mod: _CompiledModule, preserved_attrs: list[str] | None = None,
           optimize_numerics: bool = True) -> RecursiveScriptModule:
    """A copy of the compiled module ``mod`` whose ``forward`` reads parameters and attributes as constants.

    ``mod`` comes from ``toolkit.jit.script`` or ``toolkit.jit.trace`` and is in eval mode.
    ``preserved_attrs`` lists attributes kept as attributes and methods kept besides
    ``forward``. After folding, as PyTorch's ``optimize_frozen_module``, dropout that is not training
    goes and, with ``optimize_numerics`` (results change by rounding only), eval-mode batch norm folds
    into the convolution or linear layer before it and constant shifts and scales of a convolution's
    output fold into its bias and weight.
    """
    if not isinstance(mod, _CompiledModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use toolkit.jit.script or "
                           f"toolkit.jit.trace to script your 'nn.Module' (got {type(mod).__name__}).")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    preserved = list(preserved_attrs or [])
    source, methods = _methods_of(mod)
    for name in preserved:
        if name not in methods and not _has_attribute(source, name):
            raise RuntimeError(f"Unknown name: {name} (freeze: preserved_attrs names neither an attribute nor a "
                               f"compiled method of {type(source).__name__})")
    keep = [n for n in preserved if n not in methods]
    frozen_graphs = {name: _frozen_graph(m.graph, source, set(keep))
                     for name, m in methods.items() if name == "forward" or name in preserved}
    for g in frozen_graphs.values():
        optimize_frozen_graph(g, optimize_numerics)
    holder = _holder(source, keep, frozen_graphs.values())
    frozen = {name: _FrozenMethod(holder, name, g, methods[name]) for name, g in frozen_graphs.items()}
    return RecursiveScriptModule(holder, frozen)


# -- what is frozen ------------------------------------------------------------------------------------
def _methods_of(mod) -> tuple[Module, dict]:
    """The module compiled code runs with as ``self``, and its compiled methods (name -> object with ``.graph``)."""
    d = mod.__dict__
    if "_methods" in d:  # toolkit.jit.script(module)
        return d["_original"], dict(d["_methods"])
    if "_original" in d:  # toolkit.jit.trace(module): the flat graph takes the module as its first input
        return d["_original"], {"forward": _TracedForward(mod.inlined_graph)}
    return mod, dict(d.get("_compiled_methods", {}))  # a ScriptModule subclass with @script_method methods


class _TracedForward:
    """A traced ``forward``: its graph and a positional signature built from the graph's inputs."""

    def __init__(self, graph: Graph):
        self.graph = graph
        params = [inspect.Parameter(f"input{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(len(graph.inputs) - 1)]
        self._signature = inspect.Signature(params)
        self._types = [T.ANY for _ in params]


def _has_attribute(m: Module, name: str) -> bool:
    d = m.__dict__
    return any(name in d.get(k, {}) for k in ("_parameters", "_buffers", "_modules")) or name in d


def _resolve(root: Module, path: tuple):
    obj = root
    for name in path:
        obj = getattr(obj, name)
    return obj


# -- folding -------------------------------------------------------------------------------------------
def _frozen_graph(graph: Graph, root: Module, keep: set) -> Graph:
    """``graph`` (whose first input is ``self``) with every attribute read outside ``keep`` made a constant, then
    optimized."""
    g = run_passes(graph.copy(), ["inline_calls"])
    while _fold_attributes(g, root, keep):
        # folding ``self.training`` drops branches, and with them writes that kept other attributes unfolded
        run_passes(g, DEFAULT_PIPELINE)
    g.verify()
    return g


def _fold_attributes(g: Graph, root: Module, keep: set) -> bool:
    """Replace the graph's reads of module attributes by constants; whether any was replaced."""
    if not g.inputs:
        return False
    paths: dict[Value, tuple] = {g.inputs[0]: ()}
    written = set()
    for n in g.all_nodes():
        if n.kind == K.GET_ATTR and n.inputs[0] in paths:
            paths[n.output()] = paths[n.inputs[0]] + (n["name"],)
        elif n.kind == K.SET_ATTR and n.inputs[0] in paths:
            written.add(paths[n.inputs[0]] + (n["name"],))
    aliases = AliasSets(g)
    front = 0
    for n in list(g.all_nodes()):
        out = n.outputs[0] if n.kind == K.GET_ATTR else None
        if out is None or out not in paths:
            continue
        path = paths[out]
        if path[0] in keep or path in written or any(w[: len(path)] == path for w in written):
            continue
        try:
            value = _resolve(root, path)
        except AttributeError:
            continue
        if isinstance(value, Tensor):
            if aliases.is_mutated(out):
                continue  # written in place by the graph: stays module state
            value = value.detach().clone()
        elif not isinstance(value, _CONSTANT_TYPES):
            continue  # a submodule (its reads fold; the read itself goes once unused) or an opaque object
        c = g.create(K.CONSTANT).output()
        if value is not None:
            c.node["value"] = value
        c.type = T.type_of_constant(value)
        g.block.nodes.insert(front, c.node)  # at the top, in the order read, so every use is dominated
        c.node.owning_block = g.block
        front += 1
        c.node.source = n.source
        c.set_debug_name("self." + ".".join(path))
        out.replace_all_uses_with(c)
        n.destroy()
    return front > 0


def optimize_frozen_graph(g: Graph, optimize_numerics: bool = True) -> Graph:
    """PyTorch's ``OptimizeFrozenGraph``: drop eval-mode dropout; with ``optimize_numerics``, fold batch norm and
    constant shifts and scales into convolution and linear weights until nothing more folds."""
    run_passes(g, ["remove_dropout"])
    if optimize_numerics:
        while fold_conv_bn_changed(g) | fold_conv_arith_changed(g):
            pass
    run_passes(g, DEFAULT_PIPELINE)
    return g


def optimize_for_inference(mod: _CompiledModule, other_methods: list[str] | None = None) -> RecursiveScriptModule:
    """``mod`` frozen (unless it already is) and optimized for running inference.

    As ``torch.jit.optimize_for_inference``: a module not yet frozen is frozen with ``other_methods`` preserved,
    which drops eval-mode dropout and folds batch norm and constant arithmetic into convolution and linear
    weights. PyTorch then converts convolutions to its MKLDNN layouts; toolkit's CPU kernels have no such layout,
    so the folded graph is the result::

        >>> fast = toolkit.jit.optimize_for_inference(toolkit.jit.script(model.eval()))
    """
    if not isinstance(mod, _CompiledModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use toolkit.jit.script "
                           "or toolkit.jit.trace to script your 'nn.Module'.")
    if _is_frozen(mod):
        return mod
    return freeze(mod.eval(), preserved_attrs=other_methods)


def _is_frozen(mod) -> bool:
    """Whether ``mod`` is what ``freeze`` returns (its methods run frozen graphs)."""
    methods = mod.__dict__.get("_methods") or {}
    return bool(methods) and all(isinstance(m, _FrozenMethod) for m in methods.values())


# -- the frozen module ---------------------------------------------------------------------------------
def _holder(source: Module, keep: list, graphs) -> Module:
    """The module the frozen graphs run with as ``self``: copies of the kept attributes (and of those the graphs
    still read), nothing else. When a graph passes ``self`` itself to Python code, a copy of the whole module."""
    names = set(keep)
    for g in graphs:
        if not g.inputs:
            continue
        for u in g.inputs[0].uses:
            if u.user.kind in (K.GET_ATTR, K.SET_ATTR):
                names.add(u.user["name"])
            else:
                whole = copy.deepcopy(source)
                whole.train(False)
                return whole
    holder = type(source).__new__(type(source))
    Module.__init__(holder)
    d, src = holder.__dict__, source.__dict__
    for name in names:
        for table in ("_parameters", "_buffers", "_modules"):
            if name in src.get(table, {}):
                d[table][name] = copy.deepcopy(src[table][name])
                break
        else:
            if name in src:
                d[name] = copy.deepcopy(src[name])
    holder.train(False)
    return holder


class _FrozenMethod(CompiledMethod):
    """A frozen graph run as a method of the holder module, called with the original method's signature."""

    def __init__(self, module: Module, name: str, graph: Graph, original):
        self.module = module
        self.name = name
        self.graph = graph
        self._signature = original._signature
        self._types = original._types
        self._executor = ProfilingExecutor(graph, name)
