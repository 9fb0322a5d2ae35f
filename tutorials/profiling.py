# %% [markdown]
# # Profiling
#
# The material of notebooks/06_profiling.ipynb as a jupytext percent script (`# %%` cells):
# run it with `python tutorials/profiling.py`, or open it as a notebook with jupytext.
#
# `toolkit.profiler.profile` records every op, backward node and fused kernel. In a notebook a profile draws
# itself as a `ProfileView` (a sortable table, per-op bars, a timeline where fused kernels are green and
# backward work orange); here the same view is saved to an HTML file. The notebook's magics (`%%profile`,
# `%%pyprofile`, `%graph_for`) appear below as the plain calls they stand for.

# %%
import cProfile
import os
import pstats
import tempfile

import toolkit
from toolkit.notebook import ProfileView

toolkit.manual_seed(0)
model = toolkit.nn.Sequential(toolkit.nn.Linear(64, 128), toolkit.nn.Tanh(), toolkit.nn.Linear(128, 10))
x = toolkit.randn(32, 64)
scripted = toolkit.jit.trace(model, (x,))
with toolkit.profiler.profile(record_shapes=True) as prof:
    with toolkit.profiler.record_function('train_step'):
        scripted(x).pow(2).sum().backward()
print(prof.key_averages().table(sort_by='self_cpu_time_total', row_limit=8))

# %%
names = {e.name for e in prof.events()}
assert 'aten::linear' in names and 'train_step' in names
assert any(n.startswith('autograd::engine::evaluate_function') for n in names)

# %%
view = ProfileView(prof)
kinds = {b['kind'] for b in view.timeline()}
assert {'forward', 'backward', 'annotation'} <= kinds, kinds
out = tempfile.mkdtemp(prefix='toolkit-profile-')
print(view, '->', view.save(os.path.join(out, 'profile.html')))

# %% [markdown]
# ## What the magics do
#
# `%%profile --sort self_cpu_time_total --row-limit 6` runs its cell under the op profiler and prints the table:

# %%
with toolkit.profiler.profile() as cell_prof:
    scripted(x).sum().backward()
table = cell_prof.key_averages().table(sort_by='self_cpu_time_total', row_limit=6)
assert 'aten::linear' in table
print(table)

# %% [markdown]
# `%%pyprofile --no-server --limit 5` runs it under cProfile and writes the `.prof` file that snakeviz reads
# (`snakeviz file.prof`):

# %%
python_prof = os.path.join(out, 'cell.prof')
profiler = cProfile.Profile()
profiler.enable()
for _ in range(20):
    model(x)
profiler.disable()
profiler.dump_stats(python_prof)
pstats.Stats(python_prof).sort_stats('cumulative').print_stats(5)

# %% [markdown]
# `%graph_for scripted x` prints the optimized graph the traced model runs for `x`:

# %%
print(scripted.graph_for(x))

# %% [markdown]
# `prof.export_chrome_trace('trace.json')` writes a trace for chrome://tracing or Perfetto.

# %%
path = os.path.join(tempfile.mkdtemp(), 'trace.json')
prof.export_chrome_trace(path)
assert os.path.getsize(path) > 0
