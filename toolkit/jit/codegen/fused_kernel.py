"""A fusion group's subgraph as one numba kernel: a loop over the output with every node's formula inlined.

The generated module holds a ``serial`` and a ``parallel`` (``prange``) loop
nest over the group's iteration space; inputs are read in place through their
strides (broadcast inputs through zero strides), intermediates live in
registers, and only the group's outputs are written. Source files go to the
kernel cache directory named by the hash of their source (see
:mod:`toolkit.backends.cpu.cache`), so numba's ``cache=True`` keeps the machine
code across processes and a second process loads instead of compiling.

At run time the launcher checks its inputs against the shapes and dtypes the
kernel was specialized for (a guard): anything else runs the subgraph through
the interpreter instead, so a changed input is slower, never wrong.
"""

from __future__ import annotations

import inspect
import textwrap
import threading
import time

from ...backends.cpu.cache import kernel_dir, load_source, source_hash
from ...backends.cpu.codegen import _helper_constants, _helpers_needed, free_names
from ...backends.cpu.scalar import HELPERS
from ...ops import registry as R
from ..ir import Graph, Node, Value
from .allocator import POOL
from .elementwise import accumulator, node_expression

RACE_UNFUSED = True  # time each new layout against the group's ops one by one and keep the faster (tests turn it off)
PARALLEL_MIN = 1 << 16  # as the eager map kernels: below this the thread start-up costs more than it saves
_JIT = 'numba.njit(cache=True, nogil=True, error_model="numpy"{extra})'


def _is_reduction(n: Node) -> bool:
    return n.op is not None and n.op.kind is R.REDUCTION


def _group_shape(sub: Graph) -> tuple:
    """The iteration space: the shape every elementwise member computes (a trailing reduction's input's)."""
    shapes = {tuple(n.inputs[0].type.sizes) if _is_reduction(n) else tuple(n.outputs[0].type.sizes)
              for n in sub.block.nodes if n.kind != "prim::Constant"}
    if len(shapes) != 1:
        raise RuntimeError(f"a fusion group's members must share one shape, got {sorted(shapes)}")
    return shapes.pop()


def generate_source(sub: Graph, rank: int, masks: tuple | None = None) -> str:
    """The module source for ``sub`` looping over ``rank`` dimensions (after collapsing), sizes ``n0, n1, ...``.

    ``masks[k][d]`` is True where input ``k`` is broadcast along loop dimension
    ``d``: it is read at index 0 there, so broadcasting costs nothing at run time.
    """
    idx = ", ".join(f"i{d}" for d in range(rank))
    if masks is None:
        masks = tuple((False,) * rank for _ in sub.inputs)

    def index_of(k: int) -> str:
        return ", ".join("0" if b else f"i{d}" for d, b in enumerate(masks[k]))
    locals_: dict[Value, str] = {}
    hoisted: dict[str, str] = {}
    loads: list[str] = []
    body: list[str] = []
    for k, v in enumerate(sub.inputs):
        locals_[v] = f"x{k}"

    def local_of(v: Value) -> str:
        name_ = locals_[v]
        if v in sub.inputs and name_ not in loaded:
            k = sub.inputs.index(v)
            loads.append(f"{name_} = in{k}[{index_of(k)}]")
            loaded.add(name_)
        return name_

    def hoist(src: str) -> str:
        if src not in hoisted:
            hoisted[src] = f"c{len(hoisted)}"
        return hoisted[src]

    loaded: set = set()
    formulas = []
    inits: list[str] = []
    post: list[str] = []
    for n in sub.block.nodes:
        if n.kind == "prim::Constant":
            continue
        if _is_reduction(n):
            acc = f"acc{len(inits)}"
            init, final = accumulator(n)
            inits.append(f"{acc} = {init}")
            body.append(f"{acc} += {local_of(n.inputs[0])}")
            locals_[n.outputs[0]] = acc
            post.append(final.format(acc=acc))
            formulas.append(f"{n.kind}: accumulated in the loop")
            continue
        expr = node_expression(n, local_of, hoist)
        target = f"t{len(locals_)}"
        locals_[n.outputs[0]] = target
        body.append(f"{target} = {expr}")
        formulas.append(f"{n.kind}: {n.op.formula}")
    finals = dict(zip([f"acc{j}" for j in range(len(post))], post))
    tail: list[str] = []
    for k, v in enumerate(sub.outputs):
        name_ = local_of(v)
        if name_ in finals:
            tail.append(f"out{k}[0] = {finals[name_]}")
        else:
            body.append(f"out{k}[{idx}] = {name_}")
    params = ", ".join([f"out{k}" for k in range(len(sub.outputs))] + [f"in{k}" for k in range(len(sub.inputs))]
                       + [f"n{d}" for d in range(rank)])
    consts = "".join(f"    {name_} = {src}\n" for src, name_ in hoisted.items())
    helpers = []
    used = set().union(*(free_names(b.split("=", 1)[1]) for b in body if "=" in b)) if body else set()
    for h in _helpers_needed(used):
        src = textwrap.dedent(inspect.getsource(HELPERS[h]))
        helpers.append(f"@{_JIT.format(extra='')}\n{src.rstrip()}\n")
    module_consts = "".join(f"{k} = {v!r}\n" for k, v in _helper_constants(helpers).items())

    def loop(fn: str, outer: str, parallel: bool) -> str:
        lines = [f"@{_JIT.format(extra=', parallel=True' if parallel else '')}", f"def {fn}({params}):", consts.rstrip("\n")]
        lines = [ln for ln in lines if ln] + ["    " + i for i in inits]
        for d in range(rank):
            rng = outer if d == 0 else "range"
            lines.append("    " * (d + 1) + f"for i{d} in {rng}(n{d}):")
        pad = "    " * (rank + 1)
        lines += [pad + s for s in loads + body]
        lines += ["    " + t for t in tail]
        return "\n".join(lines) + "\n"

    header = ('"""A toolkit fused kernel, generated from the registry\'s formulas; do not edit.\n\n'
              + "\n".join(formulas) + '\n"""\n\nimport math\n\nimport numba\nimport numpy as np\n\n\n')
    parts = ([module_consts] if module_consts else []) + helpers + [
        loop("serial", "range", False), loop("parallel", "numba.prange", True)]
    return header + "\n\n".join(parts)


def collapse(shape: tuple, strides_list: list, bcast_list: list | None = None) -> tuple:
    """Merge adjacent dimensions that every operand walks contiguously: the smallest loop nest that works.

    ``bcast_list[k][d]`` says operand ``k`` is broadcast along dimension ``d``
    (it has size 1 or lacks it there); dimensions merge only where every
    operand walks both contiguously and is broadcast along both or neither.
    Returns the collapsed shape and, per operand, which collapsed dimensions
    it is broadcast along.
    """
    if bcast_list is None:
        bcast_list = [tuple(st[d] == 0 and shape[d] > 1 for d in range(len(shape))) for st in strides_list]
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    if not dims:
        return (1,), [(False,) for _ in strides_list]
    groups = [[dims[0]]]
    for d in dims[1:]:
        last = groups[-1][-1]
        if all(st[last] == st[d] * shape[d] and bc[last] == bc[d] for st, bc in zip(strides_list, bcast_list)):
            groups[-1].append(d)
        else:
            groups.append([d])
    flat = []
    for g in groups:
        n = 1
        for d in g:
            n *= shape[d]
        flat.append(n)
    masks = [tuple(bc[g[0]] for g in groups) for bc in bcast_list]
    return tuple(flat), masks


def _broadcast_flags(shape: tuple, in_shape: tuple) -> tuple:
    """Per dimension of ``shape``: whether an input of ``in_shape`` is broadcast along it."""
    lead = len(shape) - len(in_shape)
    return tuple(d < lead or (in_shape[d - lead] == 1 and shape[d] != 1) for d in range(len(shape)))


def _broadcast_strides(shape: tuple, in_shape: tuple, strides: tuple) -> tuple:
    """The strides of ``in_shape`` broadcast to ``shape`` (0 along new or stretched dimensions)."""
    lead = len(shape) - len(in_shape)
    out = [0] * lead
    for s_in, s_out, st in zip(in_shape, shape[lead:], strides):
        out.append(st if s_in == s_out else 0)
    return tuple(out)


class FusedKernel:
    """The compiled form of one ``prim::FusionGroup`` node: call it with the group's input tensors."""

    def __init__(self, node: Node, name: str = "fusion_group"):
        self.node = node
        self.name = name
        self.subgraph: Graph = node["Subgraph"]
        self.shape = _group_shape(self.subgraph)
        self.in_shapes = [tuple(v.type.sizes) for v in self.subgraph.inputs]
        self.in_dtypes = [v.type.dtype.np for v in self.subgraph.inputs]
        self.out_dtypes = [v.type.dtype.np for v in self.subgraph.outputs]
        self.out_reduced = [v.node is not None and _is_reduction(v.node) for v in self.subgraph.outputs]
        self._any_reduced = any(self.out_reduced)
        self._launch: dict = {}
        self._modules: dict = {}
        self._lock = threading.Lock()
        self._fallback = None
        self.compile_seconds = 0.0  # time of the calls that compiled or loaded a loop
        self.decisions: dict = {}  # input strides -> ("fused" | "unfused", kernel seconds, ops-one-by-one seconds)
        self.calls = 0
        self.fallbacks = 0

    # -- source and compilation -------------------------------------------------------------
    def source(self, layout: tuple | None = None) -> str:
        """The generated module for a loop layout ``(rank, masks)`` (the last one run, else a contiguous one)."""
        if layout is None:
            layout = next(reversed(self._modules)) if self._modules else self._default_layout()
        return generate_source(self.subgraph, layout[0], layout[1])

    def source_path(self, layout: tuple | None = None):
        """Where the generated source lives in the kernel cache (written on first use)."""
        return kernel_dir() / f"fused_{source_hash(self.source(layout))}.py"

    def _default_layout(self) -> tuple:
        n_out = len(self.out_dtypes) - sum(self.out_reduced)
        strides = [_broadcast_strides(self.shape, s, _c_strides(s)) for s in self.in_shapes]
        strides += [_c_strides(self.shape)] * n_out
        flags = [_broadcast_flags(self.shape, s) for s in self.in_shapes] + [(False,) * len(self.shape)] * n_out
        flat, masks = collapse(self.shape, strides, flags)
        return len(flat), tuple(masks[: len(self.in_shapes)])

    def _module(self, layout: tuple):
        m = self._modules.get(layout)
        if m is None:
            with self._lock:
                m = self._modules.get(layout)
                if m is None:
                    src = generate_source(self.subgraph, layout[0], layout[1])
                    m = self._modules[layout] = load_source(src, "fused")
        return m

    def compile(self, arrays: list) -> None:
        """Compile (or load from the disk cache) the loop this call will run, and time it."""
        t0 = time.perf_counter()
        self.run(arrays)
        self.compile_seconds += time.perf_counter() - t0

    # -- running ----------------------------------------------------------------------------
    def matches(self, arrays: list) -> bool:
        """The guard: the inputs have the shapes and dtypes this kernel was specialized for."""
        if len(arrays) != len(self.in_shapes):
            return False
        for a, s, d in zip(arrays, self.in_shapes, self.in_dtypes):
            if a.shape != s or a.dtype != d:
                return False
        return True

    def run(self, arrays: list) -> list:
        """The group's outputs (new arrays) for input arrays that pass the guard."""
        key = tuple(a.strides for a in arrays)
        plan = self._launch.get(key)
        if plan is None:
            plan = self._launch[key] = self._plan(arrays)
        fn, in_shapes, flat = plan
        shape = self.shape
        outs = [POOL.empty(() if r else shape, d) for d, r in zip(self.out_dtypes, self.out_reduced)]
        if fn is None:  # zero-size
            return self._empty_reductions(outs)
        ins = [a if a.shape == s else a.reshape(s) for a, s in zip(arrays, in_shapes)]
        if flat == shape and not self._any_reduced:
            fn(*outs, *ins, *flat)
        else:
            fn(*[o.reshape((1,) if r else flat) for o, r in zip(outs, self.out_reduced)], *ins, *flat)
        self.calls += 1
        return outs

    def _empty_reductions(self, outs: list) -> list:
        """A reduction over zero elements: 0 for sum, nan for mean (as PyTorch)."""
        for k, r in enumerate(self.out_reduced):
            if r:
                n = self.subgraph.outputs[k].node
                outs[k][()] = float("nan") if n.kind == "aten::mean" else 0
        return outs

    def _plan(self, arrays: list) -> tuple:
        """(loop function, each input's shape in the collapsed loop, the collapsed shape) for these strides."""
        shape = self.shape
        if 0 in shape:
            return None, None, None
        strides = [_broadcast_strides(shape, a.shape, a.strides) for a in arrays]
        outs = [_c_strides(shape, d.itemsize) for d, r in zip(self.out_dtypes, self.out_reduced) if not r]
        flags = [_broadcast_flags(shape, a.shape) for a in arrays] + [(False,) * len(shape)] * len(outs)
        flat, masks = collapse(shape, strides + outs, flags)
        masks = tuple(masks[: len(arrays)])
        in_shapes = [tuple(1 if b else n for b, n in zip(m, flat)) for m in masks]
        n = 1
        for d in flat:
            n *= d
        m = self._module((len(flat), masks))
        return (m.parallel if n >= PARALLEL_MIN else m.serial), in_shapes, flat

    def __repr__(self) -> str:
        return f"<FusedKernel {self.name}: {len(self.subgraph.block.nodes)} nodes, shape {self.shape}>"


def _c_strides(shape: tuple, itemsize: int = 1) -> tuple:
    out = []
    acc = itemsize
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))
