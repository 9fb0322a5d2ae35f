"""The seed's tensor tutorial with ``toolkit`` in place of ``torch``.

Run: ``python tutorials/tensor_tutorial.py``. Replacing ``import toolkit as torch``
with ``import torch`` runs the same code on PyTorch and prints the same numbers.
"""

import toolkit as torch

torch.manual_seed(0)

# Construct a 5x3 matrix, uninitialized:
x = torch.empty(5, 3)
print(x.shape)

# Construct a randomly initialized matrix
x = torch.rand(5, 3)
print(x)

# Get its size
print(x.size())

# You can use standard numpy-like indexing with all bells and whistles!
print(x[:, 1])

y = torch.rand(5, 3)
print(x + y)

# NumPy bridge: converting a tensor to a numpy array shares memory (zero copies)
a = torch.ones(5)
print(a)
b = a.numpy()
print(b)
a.add_(1)
print(b)  # the array sees the in-place change

# Seamless GPU tensors: this block runs only where CUDA is available
if torch.cuda.is_available():
    device = torch.device("cuda")
    y = torch.ones_like(x, device=device)
    x = x.to(device)
    z = x + y
    print(z)
    print(z.to("cpu", torch.double))
