# %% [markdown]
# # Tracing and scripting
#
# The material of notebooks/04_tracing_and_scripting.ipynb as a jupytext percent script (`# %%` cells):
# run it with `python tutorials/tracing_and_scripting.py`, or open it as a notebook with jupytext.
#
# `toolkit.jit.trace` records the ops a function runs; `toolkit.jit.script` compiles its Python, loops and
# branches included. Both give a TorchScript-shaped graph; `print` shows its text, and in a notebook cell it
# is drawn (click a node for its source line; click a dashed box to open a loop or branch).

# %%
import os
import tempfile

import toolkit


def f(x, y):
    return toolkit.sigmoid(x * y + 1.5) * toolkit.tanh(x) - y


x, y = toolkit.randn(4, 8), toolkit.randn(4, 8)
traced = toolkit.jit.trace(f, (x, y))
assert toolkit.allclose(traced(x, y), f(x, y))
print(traced.graph)

# %%
print(traced.code)
assert 'def f(' in traced.code or 'def forward(' in traced.code

# %% [markdown]
# Scripting keeps control flow: the loop and the branch are blocks of the graph. (The notebook writes this
# function to a file first, since scripting reads a function's source; here it is in this file.)


# %%
@toolkit.jit.script
def clipped_steps(x, n: int):
    y = x
    for _ in range(n):
        if bool(y.sum() > 0):
            y = y * 2
        else:
            y = y - 1
    return y.relu()


kinds = [n.kind for n in clipped_steps.graph.all_nodes()]
assert 'prim::Loop' in kinds and 'prim::If' in kinds
assert clipped_steps(toolkit.ones(3), 2).tolist() == [4.0, 4.0, 4.0]
print(clipped_steps.graph)

# %% [markdown]
# Modules trace with their parameters; the archive saves and loads back.

# %%
net = toolkit.nn.Sequential(toolkit.nn.Linear(8, 16), toolkit.nn.ReLU(), toolkit.nn.Linear(16, 2))
inp = toolkit.randn(5, 8)
traced_net = toolkit.jit.trace(net, (inp,))
path = os.path.join(tempfile.mkdtemp(), 'net.pt')
toolkit.jit.save(traced_net, path)
loaded = toolkit.jit.load(path)
assert toolkit.allclose(loaded(inp), net(inp))
print(traced_net.code)
