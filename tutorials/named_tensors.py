# %% [markdown]
# # Named tensors
#
# The seed slides' three promises of named dimensions, with `toolkit` in place of `torch`: self-documenting code,
# names checked at run time, and operations by name. Run it with `python tutorials/named_tensors.py`, or open it
# as a notebook with jupytext. Each cell checks what it shows.

# %%
import numpy as np

import toolkit as torch

torch.manual_seed(0)

# %% [markdown]
# **1. Self-documenting code.** Instead of a comment that can go out of sync (`# Tensor[N, H, W, C]`), the names
# live on the tensor, print with it, and survive the operations that keep those dimensions.

# %%
x = torch.randn(100, 50, 50, 3, names=("N", "H", "W", "C"))
assert x.names == ("N", "H", "W", "C")
tensor = torch.tensor([[1, 0], [0, 1]], names=["height", "width"])
print(tensor)
tensor = torch.randn(2, 1, 2, names=["batch", "height", "width"])
print(tensor)
assert "names=('batch', 'height', 'width')" in repr(tensor)
assert (x.abs() * 2).names == x.names and x.mean("C").names == ("N", "H", "W")

# %% [markdown]
# **2. Names checked at run time.** A pointwise loss of an output of shape (batch, 1) against targets of shape
# (batch) silently broadcasts to (batch, batch) without names; with names, the mismatch raises and says where.

# %%
loss = lambda x, y: (x - y) ** 2  # noqa: E731  (the slide's own lambda)
output, targets = torch.randn(10, 1), torch.randn(10)
assert loss(output, targets).shape == (10, 10)  # the silent mistake
try:
    loss(output.refine_names("batch", "x"), targets.refine_names("batch"))
    raise AssertionError("the names should not have unified")
except RuntimeError as e:
    print(e)
    assert "dim 'x' and dim 'batch' are at the same position from the right" in str(e)
fixed = loss(output.refine_names("batch", "x").squeeze("x"), targets.refine_names("batch"))
assert fixed.names == ("batch",) and fixed.shape == (10,)

# %% [markdown]
# **3. Operations by name.** A rotation written with names works whichever layout the images come in, where the
# positional `transpose(1, 2)` is right for one layout only.

# %%
ims = torch.randn(4, 5, 6, 3, names=("N", "H", "W", "C"))  # NHWC
ims2 = torch.randn(4, 3, 5, 6, names=("N", "C", "H", "W"))  # NCHW


def rotate(ims):
    return ims.transpose("H", "W")


assert rotate(ims).names == ("N", "W", "H", "C") and rotate(ims2).names == ("N", "C", "W", "H")
np.testing.assert_array_equal(rotate(ims2).rename(None).numpy(), ims2.rename(None).numpy().transpose(0, 1, 3, 2))
aligned = ims.align_as(ims2)  # NHWC viewed as NCHW, by name
assert aligned.names == ims2.names and aligned.shape == (4, 3, 5, 6)
flat = ims2.flatten(["C", "H", "W"], "features")
assert flat.names == ("N", "features") and flat.unflatten("features", (("C", 3), ("H", 5), ("W", 6))).names == ims2.names
print(rotate(ims).names, aligned.names, flat.names)

# %% [markdown]
# Gradients carry the names of their inputs, and a traced function keeps the names in its graph's types.

# %%
w = torch.randn(3, names=("C",), requires_grad=True)
(ims * w).sum().backward()
assert w.grad.names == ("C",)
traced = torch.jit.trace(lambda a, b: (a * b).relu(), (ims, w.detach()))
assert traced(ims, w.detach()).names == ims.names
print(traced.graph)
