"""The two-layer network with autograd computing the gradients, ``toolkit`` as ``torch``."""

import toolkit as torch

N, D_in, H, D_out = 64, 1000, 100, 10


def train(x, y, w1, w2, steps=500, learning_rate=1e-6, log=print):
    for t in range(steps):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        log(t, loss.item())
        loss.backward()
        with torch.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return w1, w2, loss


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(N, D_in)
    y = torch.randn(N, D_out)
    w1 = torch.randn(D_in, H, requires_grad=True)
    w2 = torch.randn(H, D_out, requires_grad=True)
    train(x, y, w1, w2)
