# %% [markdown]
# # Autograd
#
# The material of notebooks/02_autograd.ipynb as a jupytext percent script (`# %%` cells):
# run it with `python tutorials/autograd_basics.py`, or open it as a notebook with jupytext.
#
# Tensors with `requires_grad=True` record the ops applied to them; `backward()` walks that graph back and fills `.grad`. Each cell checks its gradients against the formula worked out by hand or against finite differences.

# %%
import numpy as np

import toolkit as torch

torch.manual_seed(0)
x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
assert type(out.grad_fn).__name__ == 'MeanBackward0' and x.grad_fn is None
out.backward()
# out = mean(3 (x + 2)^2), so d out / dx = 6 (x + 2) / 4 = 4.5 at x = 1
assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]
print(x.grad)

# %% [markdown]
# ## The RNN step
#
# The step from the seed's slides. `grad_fn` links the graph: each node names the backward of the op that made the tensor, and `next_functions` points at its inputs' nodes.

# %%
w_h = torch.randn(20, 20, requires_grad=True)
w_x = torch.randn(20, 10, requires_grad=True)
x = torch.randn(1, 10)
prev_h = torch.randn(1, 20)
next_h = (torch.mm(w_x, x.t()) + torch.mm(w_h, prev_h.t())).tanh()
assert type(next_h.grad_fn).__name__ == 'TanhBackward0'
assert [type(f).__name__ for f, _ in next_h.grad_fn.next_functions] == ['AddBackward0']
next_h.backward(torch.ones(20, 1))
assert w_h.grad.shape == w_h.shape and w_x.grad.shape == w_x.shape
print(next_h.grad_fn, next_h.grad_fn.next_functions)

# %% [markdown]
# The gradient by hand: with `s = 1 - tanh(pre)^2`, `dL/dW_h = s · prev_hᵀ` and `dL/dW_x = s · xᵀ`.

# %%
s = 1 - next_h.detach() ** 2
np.testing.assert_allclose(w_h.grad.numpy(), (s @ prev_h).numpy(), rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(w_x.grad.numpy(), (s @ x).numpy(), rtol=1e-5, atol=1e-6)
print(w_h.grad.norm(), w_x.grad.norm())

# %% [markdown]
# A gradient of the wrong shape is refused, with PyTorch's message.

# %%
try:
    next_h.backward(torch.ones(1, 20))
except RuntimeError as e:
    message = str(e)
assert 'Mismatch in shape' in message
print(message)

# %% [markdown]
# `gradcheck` compares the analytic gradient with finite differences (in float64).

# %%
def f(a, b):
    return (a.sigmoid() * b).pow(2).sum()

a = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
b = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
assert torch.autograd.gradcheck(f, (a, b))

# %% [markdown]
# ## Higher-order gradients
#
# `create_graph=True` records the backward pass too, so the gradient can be differentiated again: for `f(x) = x tanh x`, `f' = tanh x + x (1 - tanh² x)` and `f'' = 2 (1 - tanh² x)(1 - x tanh x)`.

# %%
x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
(g,) = torch.autograd.grad((x.tanh() * x).sum(), x, create_graph=True)
(gg,) = torch.autograd.grad(g.sum(), x)
t = np.tanh(np.array([0.5, 1.0, 2.0]))
xs = np.array([0.5, 1.0, 2.0])
np.testing.assert_allclose(g.detach().numpy(), t + xs * (1 - t ** 2), rtol=1e-5)
np.testing.assert_allclose(gg.numpy(), 2 * (1 - t ** 2) * (1 - xs * t), rtol=1e-5)
print(g, gg)

# %% [markdown]
# ## Turning recording off
#
# Under `no_grad()` (evaluation, weight updates) nothing is recorded; `detach()` gives a tensor that shares storage but leaves the graph.

# %%
w = torch.randn(3, requires_grad=True)
with torch.no_grad():
    scaled = w * 2
assert not scaled.requires_grad and scaled.grad_fn is None
d = w.detach()
assert not d.requires_grad and d.data_ptr() == w.data_ptr()
loss = (w * 3).sum()
loss.backward()
with torch.no_grad():
    w -= 0.1 * w.grad
w.grad.zero_()
assert w.grad.tolist() == [0.0, 0.0, 0.0] and w.requires_grad and w.is_leaf
print(w)
