"""Runs one ``prim::FusionGroup`` node: its generated kernel, or its ops one by one, whichever is faster.

The interpreter and compiled plans call a group through its runner; the
runner keeps, per input layout, the prepared step that won the race between
the fused kernel and the ops run one by one.
"""

from __future__ import annotations

import operator
import time
import weakref

from ... import dispatch
from ...autograd.grad_mode import LOCAL as _GRAD_MODE  # this thread's grad mode (STATE's is a summary)
from ...tensor import wrap
from ..codegen import FusedKernel, fused_kernel
from ..ir import kinds as K
from ..ir.graph import Node
from ..kinds.effects import is_mutating, is_random
from .interpreter import Interpreter

_UNSET = object()


_wrap_cpu = wrap  # a CPU group's outputs wrap as tensors; a CUDA group's get a wrapper naming the device


class _GroupRunner:
    """Runs one ``prim::FusionGroup`` node: its fused kernel, or its subgraph where the kernel cannot serve.

    The kernel has no autograd, so a call that must record gradients, or inputs
    that fail the kernel's guard (other shapes or dtypes than it was generated
    for), run the subgraph node by node instead: slower, never wrong.

    Each input layout (strides) seen gets a prepared step (the kernel's launch
    or the subgraph, whichever won the race), so a call pays for gathering its
    inputs, the guard and one dict look-up. The guard checks only inputs that
    are not graph inputs: a plan is specialized to its graph inputs' shapes and
    dtypes, so only values computed inside (data-dependent shapes) can differ.
    """

    __slots__ = ("node", "kernel", "_sub", "_compiled", "_wrap", "_steps", "_launches", "_inputs", "_outputs",
                 "_guarded")

    def __init__(self, node: Node):
        from ..codegen.cuda_fused_kernel import (  # lazy: loads toolkit.backends.cuda, toolkit.backends.cuda.array only when used
            CudaFusedKernel,
            group_device,
        )

        self.node = node
        self._sub = None
        self._compiled = _UNSET
        self._wrap = _wrap_cpu
        if group_device(node) == "cuda":  # a numba.cuda kernel; its outputs wrap as tensors on the group's device
            self.kernel = CudaFusedKernel(node)
            device = node.outputs[0].type.device
            self._wrap = lambda a: wrap(a, None, device)
        else:
            self.kernel = FusedKernel(node)
        self._steps: dict = {}  # input strides -> step(args, arrays) -> output tensors (the race's winner)
        self._launches: dict = {}  # input strides -> launch(arrays) -> output arrays, where the kernel won
        self._inputs = tuple(node.inputs)
        self._outputs = tuple(node.outputs)
        graph_inputs = set(node.graph.inputs)
        shapes, dtypes = self.kernel.in_shapes, self.kernel.in_dtypes
        self._guarded = tuple((k, tuple(shapes[k]), dtypes[k])
                              for k, v in enumerate(self._inputs) if v not in graph_inputs)

    def subgraph_interpreter(self) -> Interpreter:
        if self._sub is None:
            self._sub = Interpreter(self.node["Subgraph"])
        return self._sub

    def __call__(self, n: Node, env: dict) -> None:
        for o in dispatch.STATE.observers:  # the profiler: one range per fused-kernel run
            if hasattr(o, "on_fusion_group"):
                return o.on_fusion_group(n, lambda: self._run(n, env))
        self._run(n, env)

    def _run(self, n: Node, env: dict) -> None:
        args = [env[v] for v in self._inputs]
        arrays = [a._data for a in args]
        if not (dispatch.STATE.grad_enabled and _GRAD_MODE.grad_enabled and True in [a._requires_grad for a in args]):
            step = self._steps.get(tuple(map(_STRIDES, arrays)))
            if step is not None:
                for k, shape, dtype in self._guarded:
                    a = arrays[k]
                    if a.shape != shape or a.dtype != dtype:
                        step = None
                        break
                if step is not None:
                    for v, r in zip(self._outputs, step(args, arrays)):
                        env[v] = r
                    return
        self._run_checked(n, env, args, arrays)

    def run_arrays(self, *arrays) -> list:
        """The group on arrays, for a compiled plan (no gradients; inputs of the dtypes the group was made
        for): output arrays. A prepared step is found by the inputs' shapes and strides, so a hit needs no guard.
        """
        key = tuple(map(_SHAPE_STRIDES, arrays))
        launch = self._launches.get(key)
        if launch is not None:
            return launch(arrays)
        env = {v: self._wrap(a) for v, a in zip(self._inputs, arrays)}
        self._run(self.node, env)
        step = self._launches.get(tuple(map(_STRIDES, arrays)))
        if step is not None and self.kernel.matches(list(arrays)):
            self._launches[key] = step
        return [env[v]._data for v in self._outputs]

    def compiled_subgraph(self):
        """The subgraph as one Python function on arrays, where every op in it calls its kernel directly
        (CPU groups); None where it cannot (then the interpreter runs the subgraph)."""
        if self._compiled is _UNSET:
            self._compiled = None
            if self._wrap is _wrap_cpu:
                from ..codegen.python_plan import (
                    CompiledPlan,  # lazy: loads toolkit.backends.cuda, toolkit.backends.cuda.array only when used
                )

                c = CompiledPlan(self.node["Subgraph"], {}, arrays=True)
                if c.runs_everything_directly:
                    self._compiled = c
        return self._compiled

    def _step(self, wins: bool, arrays: list):
        """The prepared step for the layout of ``arrays`` (which pass the kernel's guard)."""
        kernel = self.kernel
        if not wins:
            compiled = self.compiled_subgraph()
            if compiled is not None:
                run = compiled.run_arrays
                self._launches[tuple(map(_STRIDES, arrays))] = run
                wrap = self._wrap

                def unfused_compiled(args: list, arrays: list) -> list:
                    kernel.fallbacks += 1
                    return [wrap(o) for o in run(arrays)]
                return unfused_compiled
            sub = self.subgraph_interpreter()

            def unfused(args: list, arrays: list) -> list:
                kernel.fallbacks += 1
                return sub.run(args)
            return unfused
        launch = kernel.launcher(arrays) if hasattr(kernel, "launcher") else kernel.run
        self._launches[tuple(map(_STRIDES, arrays))] = launch
        wrap = self._wrap

        def fused(args: list, arrays: list) -> list:
            return [wrap(o) for o in launch(arrays)]
        return fused

    def _run_checked(self, n: Node, env: dict, args: list, arrays: list) -> None:
        """The full path: grad mode, the whole guard, the race on a new layout; prepares the layout's step."""
        kernel = self.kernel
        needs_grad = dispatch.STATE.grad_enabled and _GRAD_MODE.grad_enabled and any(a._requires_grad for a in args)
        if needs_grad or not kernel.matches(arrays):
            kernel.fallbacks += 1
            outs = self.subgraph_interpreter().run(args)
        else:
            key = tuple(map(_STRIDES, arrays))
            step = self._steps.get(key)
            if step is None:
                race = fused_kernel.RACE_UNFUSED and getattr(kernel, "race", True) and self._replayable()
                wins = self._race(args, arrays) if race else True
                step = self._steps[key] = self._step(wins, arrays)
            outs = step(args, arrays)
        for v, r in zip(n.outputs, outs):
            env[v] = r

    def _replayable(self) -> bool:
        """Whether the group's ops may run more than once in a call: none writes a tensor or draws random
        numbers (the registry's facts; fusion never groups such ops, this keeps the race honest if it did)."""
        return not any(is_mutating(m) or is_random(m) for m in self.node["Subgraph"].all_nodes())

    def _race(self, args: list, arrays: list) -> bool:
        """Time the kernel against the group's ops run one by one (best of up to three each), once per layout.

        Fusion must win in wall time: the generated loop calls scalar math
        functions, which lose to numpy's vectorized ones on large float32
        tensors (tanh: ~15 ns against ~0.4 ns an element). Where the ops one by
        one are faster they run instead, and the graph still shows the group.
        Racing runs the group's ops several times, so only groups without side
        effects race (``_replayable``).
        """
        kernel = self.kernel
        launch = kernel.launcher(arrays) if hasattr(kernel, "launcher") else kernel.run
        launch(arrays)  # compiles or loads the loop first
        compiled = self.compiled_subgraph()
        if compiled is not None:
            def ops_one_by_one():
                return compiled.run_arrays(arrays)
        else:
            sub = self.subgraph_interpreter()

            def ops_one_by_one():
                return sub.run(args)
        fused = unfused = float("inf")
        for _ in range(3):  # a third round only while the first two leave it close
            t0 = time.perf_counter()
            launch(arrays)
            t1 = time.perf_counter()
            ops_one_by_one()
            t2 = time.perf_counter()
            fused, unfused = min(fused, t1 - t0), min(unfused, t2 - t1)
            if max(fused, unfused) > 3 * min(fused, unfused):
                break  # a clear winner (large tensors: each round costs the ops' full time)
        kernel.decisions[tuple(a.strides for a in arrays)] = ("fused" if fused <= unfused else "unfused",
                                                            fused, unfused)
        return fused <= unfused


_STRIDES = operator.attrgetter("strides")
_SHAPE_STRIDES = operator.attrgetter("shape", "strides")
_GROUP_RUNNERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def group_runner(n: Node) -> _GroupRunner:
    """The runner (and so the compiled kernel) of a FusionGroup node, made on first use."""
    r = _GROUP_RUNNERS.get(n)
    if r is None:
        r = _GROUP_RUNNERS[n] = _GroupRunner(n)
    return r


def _fusion_group(n: Node, env: dict) -> None:
    group_runner(n)(n, env)


K.set_step_maker(K.FUSION_GROUP, group_runner)
K.set_handler(K.FUSION_GROUP, _fusion_group)
