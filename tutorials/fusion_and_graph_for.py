# %% [markdown]
# # Fusion and `graph_for`, as a script
#
# The material of notebooks/05_fusion_and_graph_for.ipynb in jupytext's percent format: trace a
# function, look at the graph that runs after specialization and fusion, read the generated kernel,
# and save the interactive `GraphView` (open the HTML file in a browser; click the green box).

# %%
import os
import tempfile

import toolkit
from toolkit.jit.passes import PassManager
from toolkit.notebook import GraphView, ProfileView


def f(x, y):
    return toolkit.sigmoid(x * y + 1.5) * toolkit.tanh(x) - y


x, y = toolkit.randn(64, 128), toolkit.randn(64, 128)
traced = toolkit.jit.trace(f, (x, y))
optimized = traced.graph_for(x, y)
print(optimized)

# %% one fused kernel, same numbers as eager
groups = [n for n in optimized.graph.nodes() if n.kind == 'prim::FusionGroup']
assert len(groups) == 1 and len(optimized.kernels) == 1
assert toolkit.allclose(traced(x, y), f(x, y), atol=1e-6)
print(optimized.kernels[0].source())

# %% before and after, side by side: six ops become one fusion group
view = GraphView.compare(traced, x, y)
before, after = (model for _, model in view.panes)
assert sum(n['role'] == 'op' for n in before['nodes'].values()) == 6
assert sum(n['role'] == 'fusion' for n in after['nodes'].values()) == 1

# %% profile it, then save the before/after view with the fused kernel's time
with toolkit.profiler.profile() as prof:
    for _ in range(10):
        traced(x, y)
profiled = GraphView(traced.graph_for(x, y), profile=prof)
group = next(n for n in profiled.model['nodes'].values() if n['role'] == 'fusion')
assert group['calls'] == 10
out = tempfile.mkdtemp(prefix="toolkit-views-")
view = GraphView.compare(traced, x, y, profile=prof)
print(view, "->", view.save(os.path.join(out, "graph_for.html")))
print(ProfileView(prof), "->", ProfileView(prof).save(os.path.join(out, "profile.html")))

# %% [markdown]
# ## Passes
#
# Passes are functions from graph to graph; the manager runs them in order, verifies after each, and keeps
# the history, so each step can be looked at.


# %%
def g(x):
    a = x * 2
    b = x * 2
    unused = x + 1  # noqa: F841 (dead code, for the dce pass to remove)
    return a + b


tg = toolkit.jit.trace(g, (x,))
graph = tg.graph.copy()
pm = PassManager(['cse', 'dce'])
pm.run(graph)
print(pm.report())
kinds = [n.kind for n in graph.nodes()]
assert kinds.count('aten::mul') == 1 and 'aten::add' in kinds
print(graph)

# %% fusion can be switched off
toolkit.jit.set_fusion_enabled(False)
unfused = toolkit.jit.trace(f, (x, y))
assert not unfused.graph_for(x, y).kernels
toolkit.jit.set_fusion_enabled(True)

# %% [markdown]
# ## Plans without gradients run as Python code
#
# A call that records no gradients (inputs that do not require grad, or `toolkit.no_grad()`) runs its plan as
# one generated Python function: each op whose types are known calls its kernel on arrays, loops stay Python
# loops, and tensors are made only where values leave. `python_source` shows that function.


# %%
@toolkit.jit.script
def rnn(x, w, u):
    h = toolkit.zeros(x.size(1), u.size(0))
    for t in range(x.size(0)):
        h = toolkit.tanh(x[t] @ w + h @ u)
    return h


xs, w, u = toolkit.randn(10, 3, 5), toolkit.randn(5, 5), toolkit.randn(5, 5)
loop_plan = rnn.graph_for(xs, w, u)
print(loop_plan.python_source)
assert "for " in loop_plan.python_source
