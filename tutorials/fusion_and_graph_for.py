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
from toolkit.notebook import GraphView, ProfileView


def f(x, y):
    return toolkit.sigmoid(x * y + 1.5) * toolkit.tanh(x) - y


x, y = toolkit.randn(64, 128), toolkit.randn(64, 128)
traced = toolkit.jit.trace(f, (x, y))
optimized = traced.graph_for(x, y)
print(optimized)

# %% one fused kernel, same numbers as eager
assert len(optimized.kernels) == 1
assert toolkit.allclose(traced(x, y), f(x, y), atol=1e-6)
print(optimized.kernels[0].source())

# %% profile it, then save the before/after view with the fused kernel's time
with toolkit.profiler.profile() as prof:
    for _ in range(10):
        traced(x, y)
out = tempfile.mkdtemp(prefix="toolkit-views-")
view = GraphView.compare(traced, x, y, profile=prof)
print(view, "->", view.save(os.path.join(out, "graph_for.html")))
print(ProfileView(prof), "->", ProfileView(prof).save(os.path.join(out, "profile.html")))
