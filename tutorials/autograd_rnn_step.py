"""The seed's autograd RNN step, ``toolkit`` as ``torch``.

The slide seeds backward with ``torch.ones(1, 20)``, but ``next_h`` has shape
(20, 1): PyTorch rejects that with a shape-mismatch error, and so does
toolkit. The gradient below has the output's shape.
"""

import toolkit as torch

torch.manual_seed(0)
w_h = torch.randn(20, 20, requires_grad=True)
w_x = torch.randn(20, 10, requires_grad=True)
x = torch.randn(1, 10)
prev_h = torch.randn(1, 20)

i2h = torch.mm(w_x, x.t())
h2h = torch.mm(w_h, prev_h.t())
next_h = i2h + h2h
next_h = next_h.tanh()
next_h.backward(torch.ones(20, 1))

print(next_h.grad_fn)
print(w_h.grad.sum(), w_x.grad.sum())
