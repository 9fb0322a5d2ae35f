"""The two-layer network with ``nn`` and an ``optim`` optimizer, ``toolkit`` as ``torch``."""

import toolkit as torch

N, D_in, H, D_out = 64, 1000, 100, 10


def build(D_in=D_in, H=H, D_out=D_out):
    return torch.nn.Sequential(
        torch.nn.Linear(D_in, H),
        torch.nn.ReLU(),
        torch.nn.Linear(H, D_out),
    )


def train(x, y, model, steps=500, learning_rate=1e-4, log=print):
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    for t in range(steps):
        y_pred = model(x)
        loss = loss_fn(y_pred, y)
        log(t, loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, loss


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(N, D_in)
    y = torch.randn(N, D_out)
    train(x, y, build())
