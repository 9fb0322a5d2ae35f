"""A fusion group on ``cuda`` as one numba.cuda kernel: one thread per output element, every formula inlined.

The CPU's :mod:`.fused_kernel` writes a loop nest; on the device the same
subgraph becomes a grid-stride kernel built like the eager CUDA map kernels
(:mod:`toolkit.backends.cuda.codegen`): each thread turns its flat index into
every operand's buffer position through the operand's element strides (zero
strides for broadcast dimensions, so broadcasting and transposed or sliced
inputs cost no copies), loads the inputs, evaluates each member's expression
exactly as :func:`.elementwise.node_expression` renders it for the CPU (the
same promotion, typed literals and output casts), and writes only the group's
outputs. Intermediates stay in registers: one launch and one pass over memory
instead of one per op.

The guard is the CPU kernel's (shapes and dtypes it was specialized for, and
device arrays); anything else runs the subgraph through the interpreter.
"""

from __future__ import annotations

from ...backends.cpu.cache import load_source
from ...backends.cpu.codegen import free_names
from ...backends.cuda import runtime
from ...backends.cuda.array import CudaArray
from ...backends.cuda.codegen import broadcast_estrides, helper_source, index_lines
from ..ir import kinds as K
from ..ir.graph import Graph, Node, Value
from .elementwise import node_expression
from .fused_kernel import GroupKernel, _is_reduction


def generate_cuda_source(sub: Graph, rank: int) -> str:
    """The module source of ``kernel(out<k>, o_out<k>, st_out<k>, ..., _k_n, _k_sh, in_x<k>, o_x<k>, st_x<k>, ...)``.

    ``o_*`` are element offsets into the 1-d buffers, ``st_*`` element strides
    over the ``rank`` dimensions of the output shape ``_k_sh``.
    """
    for n in sub.block.nodes:
        if _is_reduction(n):
            raise NotImplementedError(f"a CUDA fusion group cannot end in {n.kind}: reductions stay unfused on cuda")
    locals_: dict[Value, str] = {v: f"x{k}" for k, v in enumerate(sub.inputs)}
    hoisted: dict[str, str] = {}
    loaded: list[str] = []
    body: list[str] = []
    formulas: list[str] = []

    def local_of(v: Value) -> str:
        name = locals_[v]
        if v in sub.inputs and name not in loaded:
            loaded.append(name)
        return name

    def hoist(src: str) -> str:
        if src not in hoisted:
            hoisted[src] = f"c{len(hoisted)}"
        return hoisted[src]

    for n in sub.block.nodes:
        if n.kind == K.CONSTANT:
            continue
        expr = node_expression(n, local_of, hoist)
        target = f"t{len(locals_)}"
        locals_[n.outputs[0]] = target
        body.append(f"{target} = {expr}")
        formulas.append(f"{n.kind}: {n.op.formula}")
    outs = [f"out{k}" for k in range(len(sub.outputs))]
    for k, v in enumerate(sub.outputs):
        body.append(f"b_out{k}[_k_p_out{k}] = {local_of(v)}")
    ins = [f"x{k}" for k in range(len(sub.inputs))]
    sig = []
    for o in outs:
        sig += [f"b_{o}", f"o_{o}", f"st_{o}"]
    sig += ["_k_n", "_k_sh"]
    for x in ins:
        sig += [f"in_{x}", f"o_{x}", f"st_{x}"]
    pad = "        "
    lines = [f"    {name} = {src}" for src, name in hoisted.items()]
    lines += ["    _k_i = cuda.grid(1)", "    _k_step = cuda.gridsize(1)", "    while _k_i < _k_n:"]
    lines += index_lines(rank, outs + [x for x in ins if x in loaded], pad)
    lines += [f"{pad}{x} = in_{x}[_k_p_{x}]" for x in ins if x in loaded]
    lines += [pad + b for b in body]
    lines.append(f"{pad}_k_i += _k_step")
    used = set().union(*(free_names(b.split("=", 1)[1]) for b in body)) if body else set()
    header = ('"""A toolkit CUDA fused kernel, generated from the registry\'s formulas; do not edit.\n\n'
              + "\n".join(formulas) + '\n"""\n\nimport math\n\nimport numpy as np\nfrom numba import cuda\n\n\n')
    # cache=True: numba.cuda keeps the compiled kernel beside the source file, so a second process loads it
    return (header + helper_source(used) + "@cuda.jit(cache=True)\ndef kernel(" + ", ".join(sig) + "):\n"
            + "\n".join(lines) + "\n")


def group_device(node: Node) -> str:
    """``"cuda"`` or ``"cpu"``: where a FusionGroup's outputs live (all members share one device)."""
    for v in list(node.outputs) + list(node.inputs):
        dev = getattr(v.type, "device", None)
        if dev is not None:
            return getattr(dev, "type", str(dev).split(":")[0])
    return "cpu"


class CudaFusedKernel(GroupKernel):
    """The compiled form of one ``prim::FusionGroup`` node on ``cuda``; the interface of ``FusedKernel``.

    The guard also asks for device arrays; ``compile`` loads the module and runs
    once (numba.cuda compiles on the first launch).
    """

    race = False  # one launch always beats one launch per op on the device: no timing race
    _PREFIX = "cuda_fused"
    _DEVICE_ARRAYS = True

    def __init__(self, node: Node, name: str = "fusion_group"):
        super().__init__(node, name)
        self._module_ = None

    def source(self, layout: tuple | None = None) -> str:
        """The generated kernel module (one per group: strides are kernel arguments, not baked in)."""
        return generate_cuda_source(self.subgraph, len(self.shape))

    def _module(self):
        m = self._module_
        if m is None:
            with self._lock:
                if self._module_ is None:
                    self._module_ = load_source(self.source(), self._PREFIX)
                m = self._module_
        return m

    def run(self, arrays: list) -> list:
        """The group's outputs (new contiguous device arrays) for inputs that pass the guard."""
        shape = self.shape
        outs = [CudaArray.empty(shape, d) for d in self.out_dtypes]
        n = outs[0].size if outs else 0
        self.calls += 1
        if n == 0:
            return outs
        args = []
        for o in outs:
            args += [o.buf, o.offset, o.estrides]
        args += [n, shape]
        for a in arrays:
            args += [a.buf, a.offset, broadcast_estrides(a, shape)]
        blocks, threads = runtime.launch_1d(n)
        self._module().kernel[blocks, threads](*args)
        return outs
