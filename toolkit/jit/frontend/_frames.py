"""Module calls while tracing: a frame per submodule call, so a trace can show calls as ``prim::CallMethod``.

Each frame keeps, in order, the nodes recorded while its module ran and the
frames of the calls it made. Parameters are read with ``prim::GetAttr`` from the
running frame's own module, and a submodule's ``self`` is read in its caller
just before the call's first node, so every call is one contiguous, self-contained
run of the flat graph (``call_graphs`` cuts it out).
"""

from __future__ import annotations

from ...tensor import Tensor
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Node, Value
from ._callers import attribute_value_name, param_names, user_frame


class Frame:
    """One module call while tracing: what it recorded, in order (nodes, and the calls it made as frames).

    The flat graph's nodes, walked frame by frame, are in graph order: a
    submodule's own ``self`` (``prim::GetAttr`` in its caller) is placed just
    before the call's first node, so each call is one contiguous run of nodes.
    ``call_graphs`` turns the frames into a graph per call.
    """

    __slots__ = ("module", "parent", "relpath", "self_value", "attrs", "locals", "items", "args", "arg_names",
                 "outputs", "tuple_output", "ok", "source", "scope", "call")

    def __init__(self, module, parent: Frame | None, relpath: tuple):
        self.module = module
        self.parent = parent
        self.relpath = relpath  # the module's attribute path from the parent frame's module
        self.self_value: Value | None = None
        self.attrs: dict[tuple, Value] = {}  # module values read in this frame, by path from its module
        self.locals: dict[int, tuple] = {}  # parameters (and parameter arguments) as this frame reads them
        self.items: list = []
        self.args: list[Value] = []
        self.arg_names: list = []
        self.outputs: list[Value] = []
        self.tuple_output = False
        self.ok = True  # tensors in, tensors out: the call can become a prim::CallMethod
        self.source = None
        self.scope = ""
        self.call = False


class CallFrames:
    """The tracer's part that keeps frames (mixed into ``Tracer``, which provides ``_insert`` and ``_mark``)."""

    frames: list
    root_frame: Frame | None

    def _frame(self) -> Frame | None:
        for f in reversed(self.frames):
            if f is not None:
                return f
        return None

    def set_self(self, self_value: Value, module) -> None:
        root = Frame(module, None, ())
        root.self_value = self_value
        self.root_frame = root
        self.frames.append(root)

    def _param_map(self, module) -> dict:
        """id(tensor) -> (path, name, tensor) for the parameters and buffers of ``module``'s tree."""
        e = self._param_maps.get(id(module))
        if e is None or e[0] is not module:
            params: dict = {}
            for prefix, m in module.named_modules():
                path = tuple(prefix.split(".")) if prefix else ()
                for name, p in list(m._parameters.items()) + list(m._buffers.items()):
                    if p is not None:
                        params.setdefault(id(p), (path, name, p))
            e = self._param_maps[id(module)] = (module, params)
        return e[1]

    def _path_in(self, module, sub) -> tuple | None:
        """The attribute path of ``sub`` inside ``module``'s tree, or None."""
        e = self._module_paths.get(id(module))
        if e is None or e[0] is not module:
            e = self._module_paths[id(module)] = (module, {id(m): (tuple(k.split(".")) if k else (), m)
                                                          for k, m in module.named_modules()})
        hit = e[1].get(id(sub))
        return hit[0] if hit is not None and hit[1] is sub else None

    def _self_of(self, f: Frame) -> Value:
        if f.self_value is None:
            f.self_value = self._module_in(f.parent, f.relpath)
        return f.self_value

    def _module_in(self, f: Frame, path: tuple) -> Value:
        """The value of ``f``'s module at ``path``, read (once per frame) with ``prim::GetAttr`` in ``f``."""
        if not path:
            return self._self_of(f)
        v = f.attrs.get(path)
        if v is None:
            parent = self._module_in(f, path[:-1])
            sub = f.module.get_submodule(".".join(path))
            n = self._insert_in(f, K.GET_ATTR, [parent])
            n["name"] = path[-1]
            v = n.output()
            v.type = T.ModuleType(type(sub))
            v.set_debug_name(attribute_value_name(path[-1]))
            f.attrs[path] = v
        return v

    def _module_value(self, path: tuple) -> Value:
        """The root module's submodule at ``path`` (compiled calls met while tracing read modules this way)."""
        return self._module_in(self.root_frame, path)

    def _insert_in(self, f: Frame, kind: str, inputs) -> Node:
        """A node of frame ``f``: at the end when ``f`` is running, else just before the call ``f`` is making."""
        self._sync()
        i = max(i for i, x in enumerate(self.frames) if x is f)
        child = next((x for x in self.frames[i + 1:] if x is not None), None)
        if child is None:
            return self._insert(kind, inputs)
        n = self.graph.create(kind, inputs, 1)
        self._mark(n)
        anchor = _first_node(child)
        if anchor is None:
            self.graph.insert_node(n)
        else:
            with self.graph.inserting_before(anchor):
                self.graph.insert_node(n)
        f.items.insert(len(f.items) - 1, n)  # the call in progress is the frame's last item
        self._recorded.add(n)
        return n

    def _sync(self, skip: Node | None = None) -> None:
        """Nodes added to the graph without ``_stamp`` (compiled calls copy theirs in) join the running frame."""
        f = self._frame()
        if f is None:
            return
        nodes, recorded = self.graph.block.nodes, self._recorded
        i = len(nodes)
        while i and (nodes[i - 1] is skip or nodes[i - 1] not in recorded):
            i -= 1
        for n in nodes[i:]:
            if n is not skip:
                f.items.append(n)
                recorded.add(n)

    # -- module calls ----------------------------------------------------------------------
    def enter_call(self, m, args: tuple) -> None:
        """A submodule's forward starts: a frame of its own when its module is reachable from the caller's."""
        parent = self._frame()
        path = None if parent is None or self._depth else self._path_in(parent.module, m)
        if not path:
            self.frames.append(None)
            return
        self._sync()
        f = Frame(m, parent, path)
        f.source = user_frame()
        f.scope = self.scopes[-1] if self.scopes else ""
        names = param_names(m.forward, len(args))
        for a, name in zip(args, names):
            if isinstance(a, Tensor):
                v = self.lookup(a)
                if v is None and self._param_map(parent.module).get(id(a), (0, 0, None))[2] is a:
                    v = self.tensor_value(a)
                if v is None:
                    f.ok = False  # a tensor the trace has not met: it will be a constant inside the call
                    continue
                f.args.append(v)
                f.arg_names.append(name)
                f.locals[id(a)] = (a, v)
            elif not (a is None or isinstance(a, (bool, int, float, str))):
                f.ok = False
        parent.items.append(f)
        self.frames.append(f)

    def exit_call(self, m, out) -> None:
        f = self.frames[-1] if self.frames else None
        if f is None or f.module is not m:
            if self.frames and f is None:
                self.frames.pop()
            return
        if f.ok:
            if isinstance(out, Tensor):
                outs = [out]
            elif isinstance(out, tuple) and out and all(isinstance(t, Tensor) for t in out):
                outs, f.tuple_output = list(out), True
            else:
                outs, f.ok = [], False
            try:
                f.outputs = [self.tensor_value(t) for t in outs]
            except RuntimeError:
                f.ok = False
        f.locals = {}  # the call's tensors are not needed once it returns
        self._sync()
        self.frames.pop()


def settle_call_results(f: Frame, returned: set) -> set:
    """Before dead code goes, as PyTorch's tracer: what each call returns is what its caller used.

    A call whose results nothing outside it reads returns ``None`` (its callee's
    graph then loses the nodes only they needed); the results of every other call
    are returned values of its callee, kept even where the caller then drops what
    it computed from them. Returns those values.
    """
    pinned: set = set()
    for item in f.items:
        if isinstance(item, Frame):
            pinned |= settle_call_results(item, returned)
    if f.parent is None or not f.ok or not f.outputs:
        return pinned
    members: set = set()
    for item in _walk(f):
        members.add(item)
    used = any(v in returned or any(_top(u.user) not in members for u in v.uses) for v in f.outputs)
    if used:
        pinned.update(f.outputs)
    else:
        f.outputs, f.tuple_output = [], False
    return pinned


def _walk(f: Frame):
    for item in f.items:
        if isinstance(item, Node):
            yield item
        else:
            yield from _walk(item)


def _top(n: Node) -> Node:
    while n.owning_block is not None and n.owning_block.owning_node is not None:
        n = n.owning_block.owning_node
    return n


def prune_frames(f: Frame, dead: set) -> None:
    """Forget the nodes dead code elimination removed from the flat graph.

    A call whose results all went (``settle_call_results`` keeps the used ones)
    returns ``None``; a call that lost only some results, or whose arguments
    went, stays inlined.
    """
    f.items = [item for item in f.items if not (isinstance(item, Node) and item in dead)]
    for item in f.items:
        if isinstance(item, Frame):
            prune_frames(item, dead)
    if f.parent is None or not f.ok:
        return
    gone = [v.node in dead for v in f.outputs]
    if f.outputs and all(gone):
        f.outputs, f.tuple_output = [], False
    elif any(gone) or any(v.node in dead for v in f.args):
        f.ok = False


def _first_node(f: Frame) -> Node | None:
    for item in f.items:
        n = item if isinstance(item, Node) else _first_node(item)
        if n is not None:
            return n
    return None
