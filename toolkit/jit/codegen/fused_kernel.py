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

import numpy as np

from ...backends.cpu.cache import kernel_dir, load_source, source_hash
from ...backends.cpu.codegen import _helper_constants, _helpers_needed, free_names
from ...backends.cpu.scalar import HELPERS
from ..ir import Graph, Node, Value
from .allocator import POOL
from .elementwise import constant_of, node_expression

PARALLEL_MIN = 1 << 16  # as the eager map kernels: below this the thread start-up costs more than it saves
_JIT = 'numba.njit(cache=True, nogil=True, error_model="numpy"{extra})'


def _group_shape(sub: Graph) -> tuple:
    shapes = {tuple(o.type.sizes) for o in sub.outputs}
    if len(shapes) != 1:
        raise RuntimeError(f"a fusion group's outputs must share one shape, got {sorted(shapes)}")
    return shapes.pop()


def generate_source(sub: Graph, rank: int, name: str = "fusion_group") -> str:
    """The module source for ``sub`` looping over ``rank`` dimensions (after collapsing)."""
    idx = ", ".join(f"i{d}" for d in range(rank))
    locals_: dict[Value, str] = {}
    hoisted: dict[str, str] = {}
    loads: list[str] = []
    body: list[str] = []
    for k, v in enumerate(sub.inputs):
        locals_[v] = f"x{k}"

    def local_of(v: Value) -> str:
        name_ = locals_[v]
        if v in sub.inputs and name_ not in loaded:
            loads.append(f"{name_} = in{sub.inputs.index(v)}[{idx}]")
            loaded.add(name_)
        return name_

    def hoist(src: str) -> str:
        if src not in hoisted:
            hoisted[src] = f"c{len(hoisted)}"
        return hoisted[src]

    loaded: set = set()
    formulas = []
    for n in sub.block.nodes:
        if n.kind == "prim::Constant":
            continue
        expr = node_expression(n, local_of, hoist)
        target = f"t{len(locals_)}"
        locals_[n.outputs[0]] = target
        body.append(f"{target} = {expr}")
        formulas.append(f"{n.kind}: {n.op.formula}")
    for k, v in enumerate(sub.outputs):
        is_const, value = constant_of(v)
        body.append(f"out{k}[{idx}] = {local_of(v)}")
    params = ", ".join([f"out{k}" for k in range(len(sub.outputs))] + [f"in{k}" for k in range(len(sub.inputs))])
    consts = "".join(f"    {name_} = {src}\n" for src, name_ in hoisted.items())
    helpers = []
    used = set().union(*(free_names(b.split(" = ", 1)[1]) for b in body)) if body else set()
    for h in _helpers_needed(used):
        src = textwrap.dedent(inspect.getsource(HELPERS[h]))
        helpers.append(f"@{_JIT.format(extra='')}\n{src.rstrip()}\n")
    module_consts = "".join(f"{k} = {v!r}\n" for k, v in _helper_constants(helpers).items())

    def loop(fn: str, outer: str, parallel: bool) -> str:
        lines = [f"@{_JIT.format(extra=', parallel=True' if parallel else '')}", f"def {fn}({params}):", consts.rstrip("\n")]
        lines = [ln for ln in lines if ln]
        for d in range(rank):
            rng = outer if d == 0 else "range"
            lines.append("    " * (d + 1) + f"for i{d} in {rng}(out0.shape[{d}]):")
        pad = "    " * (rank + 1)
        lines += [pad + s for s in loads + body]
        return "\n".join(lines) + "\n"

    header = (f'"""A toolkit fused kernel for {name}, generated from the registry\'s formulas; do not edit.\n\n'
              + "\n".join(formulas) + '\n"""\n\nimport math\n\nimport numba\nimport numpy as np\n\n\n')
    parts = ([module_consts] if module_consts else []) + helpers + [
        loop("serial", "range", False), loop("parallel", "numba.prange", True)]
    return header + "\n\n".join(parts)


def collapse(shape: tuple, strides_list: list) -> tuple:
    """Merge adjacent dimensions that every operand walks contiguously: the smallest loop nest that works."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    if not dims:
        return (1,)
    out = [shape[dims[0]]]
    last = dims[0]
    for d in dims[1:]:
        if all(st[last] == st[d] * shape[d] for st in strides_list):
            out[-1] *= shape[d]
        else:
            out.append(shape[d])
        last = d
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
        self._launch: dict = {}
        self._modules: dict = {}
        self._lock = threading.Lock()
        self._fallback = None
        self.compile_seconds = 0.0
        self.calls = 0
        self.fallbacks = 0

    # -- source and compilation -------------------------------------------------------------
    def source(self, rank: int | None = None) -> str:
        """The generated module for a loop nest of ``rank`` dimensions (the collapsed shape's by default)."""
        if rank is None:
            rank = max(self._modules) if self._modules else len(self._collapsed_default())
        return generate_source(self.subgraph, rank, self.name)

    def source_path(self, rank: int | None = None):
        """Where the generated source lives in the kernel cache (written on first use)."""
        return kernel_dir() / f"fused_{source_hash(self.source(rank))}.py"

    def _collapsed_default(self) -> tuple:
        strides = [_c_strides(self.shape)] * (len(self.in_shapes) + len(self.out_dtypes))
        return collapse(self.shape, strides)

    def _module(self, rank: int):
        m = self._modules.get(rank)
        if m is None:
            with self._lock:
                m = self._modules.get(rank)
                if m is None:
                    m = self._modules[rank] = load_source(generate_source(self.subgraph, rank, self.name), "fused")
        return m

    def compile(self, arrays: list) -> None:
        """Compile (or load from the disk cache) the loop this call will run, and time it."""
        t0 = time.perf_counter()
        self.run(arrays)
        self.compile_seconds += time.perf_counter() - t0

    # -- running ----------------------------------------------------------------------------
    def matches(self, arrays: list) -> bool:
        """The guard: the inputs have the shapes and dtypes this kernel was specialized for."""
        for a, s, d in zip(arrays, self.in_shapes, self.in_dtypes):
            if a.shape != s or a.dtype != d:
                return False
        return len(arrays) == len(self.in_shapes)

    def run(self, arrays: list) -> list:
        """The group's outputs (new arrays) for input arrays that pass the guard."""
        shape = self.shape
        key = tuple(a.strides for a in arrays)
        plan = self._launch.get(key)
        if plan is None:
            plan = self._launch[key] = self._plan(arrays)
        flat_shape, reshape_in = plan
        outs = [POOL.empty(shape, d) for d in self.out_dtypes]
        if flat_shape is None:  # zero-size
            return outs
        ins = []
        for a, s in zip(arrays, self.in_shapes):
            if s != shape:
                a = np.broadcast_to(a, shape)
            ins.append(a.reshape(flat_shape) if reshape_in else a)
        o = [x.reshape(flat_shape) for x in outs]
        n = 1
        for s in flat_shape:
            n *= s
        m = self._module(len(flat_shape))
        (m.parallel if n >= PARALLEL_MIN else m.serial)(*o, *ins)
        self.calls += 1
        return outs

    def _plan(self, arrays: list) -> tuple:
        shape = self.shape
        if 0 in shape:
            return None, False
        views = [np.broadcast_to(a, shape) if a.shape != shape else a for a in arrays]
        strides = [v.strides for v in views] + [_c_strides(shape, d.itemsize) for d in self.out_dtypes]
        if not shape:
            return (1,), True
        flat = collapse(shape, strides)
        return flat, flat != shape

    def __repr__(self) -> str:
        return f"<FusedKernel {self.name}: {len(self.subgraph.block.nodes)} nodes, shape {self.shape}>"


def _c_strides(shape: tuple, itemsize: int = 1) -> tuple:
    out = []
    acc = itemsize
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))
