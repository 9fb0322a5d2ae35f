"""A fusion group's subgraph as one numba kernel: a loop over the output with every node's formula inlined.

The generated module holds a ``serial`` and a ``parallel`` (``prange``) loop
nest over the group's iteration space (the parallel one for large calls while
other processes leave the cores free, see ``toolkit._core.load``); inputs are read in place through their
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
import operator
import textwrap
import threading
import time

import numpy as np

from ..._core.load import free_cores
from ..._core.shape import contiguous_strides
from ...backends.cpu.cache import kernel_dir, load_source, source_hash
from ...backends.cpu.codegen import free_names, helper_constants, helpers_needed
from ...backends.cpu.scalar import HELPERS
from ...ops import registry as R
from ..ir import kinds as K
from ..ir.graph import Graph, Node, Value
from .allocator import MIN_BYTES, POOL
from .elementwise import (
    accumulator,
    chunk_spec,
    empty_reduction,
    float32_math_sites,
    is_chunk,
    node_expression,
)
from .loop_statements import LoopStatements

RACE_UNFUSED = True  # time each new layout against the group's ops one by one and keep the faster (tests turn it off)
_strides = operator.attrgetter("strides")
MAX_EXPANDED_MATH = 2  # float32 exp/tanh calls a kernel writes out as vectorizable statements (see generate_source)
PARALLEL_MIN = 1 << 16  # as the eager map kernels: below this the thread start-up costs more than it saves
_JIT = 'numba.njit(cache=True, nogil=True, error_model="numpy"{extra})'


def _is_reduction(n: Node) -> bool:
    return n.op is not None and n.op.kind is R.REDUCTION


def chunk_layout(sub: Graph) -> tuple | None:
    """(pre-chunk shape, dim, chunks, nodes before the chunk) of a group holding ``aten::chunk``, else None.

    Such a group iterates over one part's shape; the nodes before the chunk are
    computed once per part, reading their inputs at the part's offset.
    """
    chunks = [n for n in sub.block.nodes if is_chunk(n)]
    if not chunks:
        return None
    specs = {chunk_spec(n) for n in chunks}
    if len(specs) != 1 or None in specs:
        raise RuntimeError(f"a fusion group's chunks must cut one shape the same way, got {sorted(map(str, specs))}")
    full, dim, n_chunks = specs.pop()
    pre = frozenset(n for n in sub.block.nodes if not _structural(n) and n.outputs
                    and tuple(n.outputs[0].type.sizes) == full)
    return full, dim, n_chunks, pre


def _structural(n: Node) -> bool:
    return n.kind in (K.CONSTANT, K.LIST_UNPACK) or is_chunk(n)


def _group_shape(sub: Graph) -> tuple:
    """The iteration space: the shape every elementwise member computes (a trailing reduction's input's).

    In a group holding a chunk that is one part's shape: the nodes before the chunk compute the whole.
    """
    info = chunk_layout(sub)
    pre = info[3] if info is not None else frozenset()
    shapes = {tuple(n.inputs[0].type.sizes) if _is_reduction(n) else tuple(n.outputs[0].type.sizes)
              for n in sub.block.nodes if not _structural(n) and n not in pre}
    if len(shapes) != 1:
        raise RuntimeError(f"a fusion group's members must share one shape, got {sorted(shapes)}")
    return shapes.pop()


def chunked_inputs(sub: Graph) -> tuple:
    """Per subgraph input: whether it is read before a chunk along the chunked dim (so at each part's offset)."""
    info = chunk_layout(sub)
    if info is None:
        return (False,) * len(sub.inputs)
    full, dim, _, pre = info
    out = []
    for v in sub.inputs:
        sizes = tuple(v.type.sizes)
        d = dim - (len(full) - len(sizes))
        read_pre = any(u.user in pre or is_chunk(u.user) for u in v.uses)
        out.append(read_pre and d >= 0 and sizes[d] == full[dim])
    return tuple(out)


def generate_source(sub: Graph, rank: int, masks: tuple | None = None, chunk_dim: int | None = None) -> str:
    """The module source for ``sub`` looping over ``rank`` dimensions (after collapsing), sizes ``n0, n1, ...``
    (passed as one int64 array ``sizes``).

    ``masks[k][d]`` is True where input ``k`` is broadcast along loop dimension
    ``d``: it is read at index 0 there, so broadcasting costs nothing at run time.
    In a group holding a chunk, loop dimension ``chunk_dim`` holds the chunked
    dim: an input read before the chunk is read at ``i{chunk_dim} + part * n{chunk_dim}``.
    """
    idx = ", ".join(f"i{d}" for d in range(rank))
    if masks is None:
        masks = tuple((False,) * rank for _ in sub.inputs)
    info = chunk_layout(sub)
    pre = info[3] if info is not None else frozenset()
    # Each expanded exp/tanh adds ~0.2 s of numba compile time: a group with many (an LSTM cell has five) keeps
    # libm's calls, so compiling it stays well under a second.
    sites = sum(float32_math_sites(n) * (info[2] if n in pre else 1) for n in sub.nodes())
    statements = LoopStatements(expand=sites <= MAX_EXPANDED_MATH)
    chunked = chunked_inputs(sub)
    if info is not None and chunk_dim is None:
        raise RuntimeError("a fusion group holding a chunk needs the loop dimension of the chunked dim")

    def index_of(k: int, part) -> str:
        return ", ".join("0" if b else (f"i{d} + {part} * n{d}" if part and d == chunk_dim else f"i{d}")
                         for d, b in enumerate(masks[k]))
    locals_: dict = {}  # (value, part or None) -> local name
    hoisted: dict[str, str] = {}
    loads: list[str] = []
    body: list[str] = []
    positions = {v: k for k, v in enumerate(sub.inputs)}

    def local_in(part):
        def local_of(v: Value) -> str:
            name_ = locals_.get((v, part)) or locals_.get((v, None))
            if name_ is not None:
                return name_
            k = positions[v]
            p = part if chunked[k] else None
            name_ = f"x{k}" if p is None else f"x{k}_{p}"
            locals_[(v, p)] = name_
            loads.append(f"{name_} = in{k}[{index_of(k, p)}]")
            return name_
        return local_of

    local_of = local_in(None)
    n_temps = [0]

    def hoist(src: str) -> str:
        if src not in hoisted:
            hoisted[src] = f"c{len(hoisted)}"
        return hoisted[src]

    formulas = []
    inits: list[str] = []
    post: list[str] = []
    for n in sub.block.nodes:
        if n.kind == K.CONSTANT or is_chunk(n):
            continue
        if n.kind == K.LIST_UNPACK:  # part j of the chunked tensor: its value at part j's offset
            src = n.inputs[0].node.inputs[0]
            for j, o in enumerate(n.outputs):
                locals_[(o, None)] = local_in(j)(src)
            continue
        if n in pre:
            for part in range(info[2]):
                target = f"t{n_temps[0]}"
                n_temps[0] += 1
                expr = node_expression(n, local_in(part), hoist, statements)
                body.extend(statements.take())
                body.append(f"{target} = {expr}")
                locals_[(n.outputs[0], part)] = target
            formulas.append(f"{n.kind}: {n.op.formula} (each of {info[2]} parts)")
            continue
        if _is_reduction(n):
            acc = f"acc{len(inits)}"
            init, final = accumulator(n)
            inits.append(f"{acc} = {init}")
            body.append(f"{acc} += {local_of(n.inputs[0])}")
            locals_[(n.outputs[0], None)] = acc
            post.append(final.format(acc=acc))
            formulas.append(f"{n.kind}: accumulated in the loop")
            continue
        expr = node_expression(n, local_of, hoist, statements)
        target = f"t{n_temps[0]}"
        n_temps[0] += 1
        locals_[(n.outputs[0], None)] = target
        body.extend(statements.take())
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
    # The loop sizes come as one int64 array: numba types an array argument several times faster than an int.
    params = ", ".join([f"out{k}" for k in range(len(sub.outputs))] + [f"in{k}" for k in range(len(sub.inputs))]
                       + ["sizes"])
    sizes = "".join(f"    n{d} = sizes[{d}]\n" for d in range(rank))
    consts = "".join(f"    {name_} = {src}\n" for src, name_ in hoisted.items())
    helpers = []
    used = set().union(*(free_names(b.split("=", 1)[1]) for b in body if "=" in b)) if body else set()
    for h in helpers_needed(used):
        src = textwrap.dedent(inspect.getsource(HELPERS[h]))
        helpers.append(f"@{_JIT.format(extra='')}\n{src.rstrip()}\n")
    module_consts = "".join(f"{k} = {v!r}\n" for k, v in helper_constants(helpers).items())

    def loop(fn: str, outer: str, parallel: bool) -> str:
        lines = [f"@{_JIT.format(extra=', parallel=True' if parallel else '')}", f"def {fn}({params}):",
                 (sizes + consts).rstrip("\n")]
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
    flat, masks, _ = _collapse(shape, strides_list, bcast_list)
    return flat, masks


def _collapse(shape: tuple, strides_list: list, bcast_list: list | None = None, split: int | None = None) -> tuple:
    """:func:`collapse`, keeping dimension ``split`` (a chunked dim) outermost in its loop dimension.

    Also returns which loop dimension holds ``split`` (None without one).
    """
    if bcast_list is None:
        bcast_list = [tuple(st[d] == 0 and shape[d] > 1 for d in range(len(shape))) for st in strides_list]
    dims = [d for d in range(len(shape)) if shape[d] != 1 or d == split]
    if not dims:
        return (1,), [(False,) for _ in strides_list], None
    groups = [[dims[0]]]
    for d in dims[1:]:
        last = groups[-1][-1]
        if d != split and all(st[last] == st[d] * shape[d] and bc[last] == bc[d]
                              for st, bc in zip(strides_list, bcast_list)):
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
    where = next((i for i, g in enumerate(groups) if g[0] == split), None)
    return tuple(flat), masks, where


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


class GroupKernel:
    """What the CPU and CUDA kernels of a ``prim::FusionGroup`` share: the types, the guard, the counters."""

    _PREFIX = "fused"  # the kernel cache's file name prefix
    _DEVICE_ARRAYS = False  # the guard also asks for device arrays

    def __init__(self, node: Node, name: str = "fusion_group"):
        self.node = node
        self.name = name
        self.subgraph: Graph = node["Subgraph"]
        self.shape = _group_shape(self.subgraph)
        self.in_shapes = [tuple(v.type.sizes) for v in self.subgraph.inputs]
        self.in_dtypes = [v.type.dtype.np for v in self.subgraph.inputs]
        self.out_dtypes = [v.type.dtype.np for v in self.subgraph.outputs]
        self._lock = threading.Lock()
        self.compile_seconds = 0.0  # time of the calls that compiled or loaded a loop
        self.decisions: dict = {}  # input strides -> ("fused" | "unfused", kernel seconds, ops-one-by-one seconds)
        self.calls = 0
        self.fallbacks = 0

    def source(self, layout: tuple | None = None) -> str:
        raise NotImplementedError

    def source_path(self, layout: tuple | None = None):
        """Where the generated source lives in the kernel cache (written on first use)."""
        return kernel_dir() / f"{self._PREFIX}_{source_hash(self.source(layout))}.py"

    def compile(self, arrays: list) -> None:
        """Compile (or load from the disk cache) what this call will run, and time it."""
        t0 = time.perf_counter()
        self.run(arrays)
        self.compile_seconds += time.perf_counter() - t0

    def run(self, arrays: list) -> list:
        raise NotImplementedError

    def matches(self, arrays: list) -> bool:
        """The guard: the inputs have the shapes and dtypes this kernel was specialized for."""
        if len(arrays) != len(self.in_shapes):
            return False
        device = self._DEVICE_ARRAYS
        for a, s, d in zip(arrays, self.in_shapes, self.in_dtypes):
            if a.shape != s or a.dtype != d or (device and not getattr(a, "_is_device_array", False)):
                return False
        return True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}: {len(self.subgraph.block.nodes)} nodes, shape {self.shape}>"


class FusedKernel(GroupKernel):
    """The compiled form of one ``prim::FusionGroup`` node: call it with the group's input tensors."""

    def __init__(self, node: Node, name: str = "fusion_group"):
        super().__init__(node, name)
        self.out_reduced = [v.node is not None and _is_reduction(v.node) for v in self.subgraph.outputs]
        self._any_reduced = any(self.out_reduced)
        info = chunk_layout(self.subgraph)
        self._parts = info[2] if info is not None else 1
        self._split = info[1] if info is not None else None  # the chunked dim, in the loop's dims
        self._chunked = chunked_inputs(self.subgraph)
        self._view_shapes = [_part_shape(s, self._split, len(self.shape), self._parts) if c else s
                             for s, c in zip(self.in_shapes, self._chunked)]
        self._launch: dict = {}
        self._modules: dict = {}

    # -- source and compilation -------------------------------------------------------------
    def source(self, layout: tuple | None = None) -> str:
        """The generated module for a loop layout ``(rank, masks)`` (the last one run, else a contiguous one)."""
        if layout is None:
            layout = next(reversed(self._modules)) if self._modules else self._default_layout()
        return generate_source(self.subgraph, *layout)

    def _default_layout(self) -> tuple:
        n_out = len(self.out_dtypes) - sum(self.out_reduced)
        strides = [_broadcast_strides(self.shape, v, contiguous_strides(s)) for s, v in zip(self.in_shapes, self._view_shapes)]
        strides += [contiguous_strides(self.shape)] * n_out
        flags = [_broadcast_flags(self.shape, v) for v in self._view_shapes] + [(False,) * len(self.shape)] * n_out
        flat, masks, where = _collapse(self.shape, strides, flags, self._split)
        return self._layout(flat, masks, where)

    def _layout(self, flat: tuple, masks: list, where) -> tuple:
        masks = tuple(masks[: len(self.in_shapes)])
        return (len(flat), masks) if self._split is None else (len(flat), masks, where)

    def _module(self, layout: tuple):
        m = self._modules.get(layout)
        if m is None:
            with self._lock:
                m = self._modules.get(layout)
                if m is None:
                    src = generate_source(self.subgraph, *layout)
                    m = self._modules[layout] = load_source(src, self._PREFIX)
        return m

    # -- running ----------------------------------------------------------------------------
    def run(self, arrays: list) -> list:
        """The group's outputs (new arrays) for input arrays that pass the guard."""
        key = tuple(map(_strides, arrays))
        launch = self._launch.get(key)
        if launch is None:
            launch = self.launcher(arrays)
        return launch(arrays)

    def launcher(self, arrays: list):
        """The launch for the layout (strides) of ``arrays``, which pass the guard: ``launch(arrays) -> outputs``.

        Everything that depends only on the layout is decided here once: the
        loop function, which inputs need a reshape to the collapsed loop, how
        each output is allocated (small ones straight from numpy, large ones
        from the pool), so a call pays for little more than the numba call.
        """
        key = tuple(map(_strides, arrays))
        launch = self._launch.get(key)
        if launch is not None:
            return launch
        fn, in_shapes, flat = self._plan(arrays)
        sizes = np.array(flat, np.int64) if flat is not None else None
        shape = self.shape
        allocs = []
        for d, r in zip(self.out_dtypes, self.out_reduced):
            out_shape = () if r else shape
            n = 1
            for x in out_shape:
                n *= x
            allocs.append((np.empty if n * np.dtype(d).itemsize < MIN_BYTES else POOL.empty, out_shape, np.dtype(d)))
        if fn is None:  # zero-size
            def launch(arrays: list) -> list:
                return self._empty_reductions([a(s, d) for a, s, d in allocs])
        else:
            reshaped = tuple(k for k, (a, s) in enumerate(zip(arrays, in_shapes)) if a.shape != s)
            views = tuple((1,) if r else flat for r in self.out_reduced)
            direct = flat == shape and not self._any_reduced
            if len(allocs) == 1 and direct and not reshaped:  # the common case, with nothing to decide per call
                alloc, out_shape, out_dtype = allocs[0]

                def launch(arrays: list) -> list:
                    out = alloc(out_shape, out_dtype)
                    fn(out, *arrays, sizes)
                    self.calls += 1
                    return [out]
                self._launch[key] = launch
                return launch
            if len(allocs) == 1 and direct:  # one output, some inputs broadcast (a bias row)
                alloc, out_shape, out_dtype = allocs[0]
                reshapes = tuple((k, in_shapes[k]) for k in reshaped)
                last = [(None, None)] * len(arrays)  # per input: the array last reshaped and its reshape

                def launch(arrays: list) -> list:
                    out = alloc(out_shape, out_dtype)
                    ins = list(arrays)
                    for k, s in reshapes:
                        a = ins[k]
                        seen, r = last[k]
                        if seen is not a:  # a weight or bias comes again and again: reshaped once
                            r = a.reshape(s)
                            last[k] = (a, r)
                        ins[k] = r
                    fn(out, *ins, sizes)
                    self.calls += 1
                    return [out]
                self._launch[key] = launch
                return launch

            def launch(arrays: list) -> list:
                outs = [a(s, d) for a, s, d in allocs]
                ins = arrays
                if reshaped:
                    ins = list(arrays)
                    for k in reshaped:
                        ins[k] = ins[k].reshape(in_shapes[k])
                if direct:
                    fn(*outs, *ins, sizes)
                else:
                    fn(*[o.reshape(v) for o, v in zip(outs, views)], *ins, sizes)
                self.calls += 1
                return outs
        self._launch[key] = launch
        return launch

    def _empty_reductions(self, outs: list) -> list:
        """A reduction over zero elements: 0 for sum, nan for mean (as PyTorch)."""
        for k, r in enumerate(self.out_reduced):
            if r:
                outs[k][()] = empty_reduction(self.subgraph.outputs[k].node)
        return outs

    def _plan(self, arrays: list) -> tuple:
        """(loop function, each input's shape in the collapsed loop, the collapsed shape) for these strides."""
        shape = self.shape
        if 0 in shape:
            return None, None, None
        views = self._view_shapes
        strides = [_broadcast_strides(shape, v, a.strides) for v, a in zip(views, arrays)]
        outs = [contiguous_strides(shape, d.itemsize) for d, r in zip(self.out_dtypes, self.out_reduced) if not r]
        flags = [_broadcast_flags(shape, v) for v in views] + [(False,) * len(shape)] * len(outs)
        flat, masks, where = _collapse(shape, strides + outs, flags, self._split)
        layout = self._layout(flat, masks, where)
        in_shapes = [tuple(1 if b else (n * self._parts if c and d == where else n)
                           for d, (b, n) in enumerate(zip(m, flat)))
                     for m, c in zip(layout[1], self._chunked)]
        n = 1
        for d in flat:
            n *= d
        m = self._module(layout)
        if n < PARALLEL_MIN:
            return m.serial, in_shapes, flat
        parallel, serial = m.parallel, m.serial

        def fn(*args):  # prange waits for every worker: beside busy processes the serial loop is faster
            return (parallel if free_cores() > 1 else serial)(*args)
        return fn, in_shapes, flat


def _part_shape(shape: tuple, dim: int, rank: int, parts: int) -> tuple:
    """An input read before a chunk, seen as one part: its size along loop dim ``dim`` divided by ``parts``."""
    out = list(shape)
    out[dim - (rank - len(shape))] //= parts
    return tuple(out)


