# %% [markdown]
# # TensorBoard
#
# The material of notebooks/07_tensorboard.ipynb as a jupytext percent script (`# %%` cells):
# run it with `python tutorials/tensorboard_logging.py`, or open it as a notebook with jupytext.
#
# `toolkit.utils.tensorboard.SummaryWriter` writes TensorBoard's event files: scalars, histograms and the graph of a traced model (with its module scopes and fusion groups). Run `tensorboard --logdir runs` to look at them; here they are read back with TensorBoard's own reader.

# %%
import os
import tempfile

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import toolkit
from toolkit.utils.tensorboard import SummaryWriter

toolkit.manual_seed(0)
log_dir = tempfile.mkdtemp(prefix='runs-')
writer = SummaryWriter(log_dir)
model = toolkit.nn.Sequential(toolkit.nn.Linear(4, 8), toolkit.nn.ReLU(), toolkit.nn.Linear(8, 1))
opt = toolkit.optim.SGD(model.parameters(), lr=0.05)
x = toolkit.randn(64, 4)
y = x.sum(dim=1, keepdim=True)
for step in range(50):
    opt.zero_grad()
    loss = toolkit.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    writer.add_scalar('Loss/train', loss.item(), step)
writer.add_histogram('fc1/weight', model[0].weight, 50)
writer.add_graph(model, (x,))
writer.close()
print(sorted(os.listdir(log_dir)))

# %%
acc = EventAccumulator(log_dir)
acc.Reload()
scalars = acc.Scalars('Loss/train')
assert len(scalars) == 50 and scalars[-1].value < scalars[0].value
assert 'fc1/weight' in acc.Tags()['histograms']
assert acc.Tags()['graph']
print([round(s.value, 4) for s in scalars[::10]])

# %% [markdown]
# ## visdom
#
# `toolkit.utils.visdom` sends the same kinds of plots to a running visdom server (`python -m visdom.server`, then `Visdom(server='http://127.0.0.1', port=8097)`); it needs that server, so this tutorial only names it.
