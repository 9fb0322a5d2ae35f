# %% [markdown]
# # Tensors and the numpy bridge
#
# The material of notebooks/01_tensors_and_numpy_bridge.ipynb as a jupytext percent script (`# %%` cells):
# run it with `python tutorials/tensors_and_numpy_bridge.py`, or open it as a notebook with jupytext.
#
# The seed's tensor tutorial with `toolkit` in place of `torch`: every cell runs unchanged with `import torch as torch`. Each cell checks what it shows, against numpy.

# %%
import numpy as np

import toolkit as torch

torch.manual_seed(0)
x = torch.rand(5, 3)
assert x.shape == (5, 3) and x.dtype == torch.float32
assert bool(((x >= 0) & (x < 1)).all())
print(x)

# %% [markdown]
# Sizes, numpy-style indexing and arithmetic.

# %%
assert x.size() == torch.Size([5, 3]) and x.size(1) == 3
y = torch.rand(5, 3)
np.testing.assert_allclose((x + y).numpy(), x.numpy() + y.numpy())
np.testing.assert_allclose(torch.add(x, y).numpy(), (x + y).numpy())
assert x[:, 1].tolist() == [row[1] for row in x.tolist()]
print(x.size(), x[:, 1])

# %% [markdown]
# Broadcasting and type promotion follow PyTorch (and so, mostly, numpy): an integer tensor times a Python float is `float32`, not `float64`.

# %%
col, row = torch.arange(3).view(3, 1), torch.arange(4)
table = col * 10 + row
assert table.shape == (3, 4) and table.dtype == torch.int64
np.testing.assert_array_equal(table.numpy(), np.arange(3)[:, None] * 10 + np.arange(4))
assert (torch.arange(3) * 2.5).dtype == torch.float32
assert (torch.ones(2, dtype=torch.int32) + torch.ones(2, dtype=torch.int64)).dtype == torch.int64
print(table)

# %% [markdown]
# Views share storage: `view`, a transpose and a slice are windows on the same memory, and in-place changes show through them.

# %%
v = x.t()
assert not v.is_contiguous() and v.data_ptr() == x.data_ptr()
before = v[0].clone()
x.mul_(10)
np.testing.assert_allclose(v[0].numpy(), before.numpy() * 10, rtol=1e-6)
flat = x.view(15)
flat[0] = -1.0
assert x[0, 0].item() == -1.0
print(v.is_contiguous(), v[0])

# %% [markdown]
# ## The numpy bridge
#
# `tensor.numpy()` and `torch.from_numpy(array)` copy nothing: the tensor and the array share memory, so a change to either shows in the other. `torch.tensor(array)` copies.

# %%
a = torch.ones(5)
b = a.numpy()
a.add_(1)
assert b.tolist() == [2.0] * 5 and b.dtype == np.float32
print(b)

# %%
arr = np.ones(5)
t = torch.from_numpy(arr)
np.add(arr, 1, out=arr)
assert t.tolist() == [2.0] * 5 and t.dtype == torch.float64
copied = torch.tensor(arr)
arr[0] = 100
assert t[0].item() == 100 and copied[0].item() == 2
print(t, copied)

# %% [markdown]
# Dtypes map one to one.

# %%
pairs = {np.float32: torch.float32, np.float64: torch.float64, np.int64: torch.int64,
         np.int32: torch.int32, np.bool_: torch.bool}
for np_dtype, dtype in pairs.items():
    assert torch.from_numpy(np.zeros(2, dtype=np_dtype)).dtype == dtype
    assert torch.zeros(2, dtype=dtype).numpy().dtype == np_dtype
print(pairs)

# %% [markdown]
# A large tensor displays its statistics and a histogram of its values; `print` keeps the terminal text.

# %%
big = torch.randn(10000)
assert abs(big.mean().item()) < 0.05 and abs(big.std().item() - 1) < 0.05
print(big)
print(big)
