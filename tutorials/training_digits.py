# %% [markdown]
# # Training the seed's `Net` on handwritten digits
#
# The material of notebooks/03_training_digits.ipynb as a jupytext percent script (`# %%` cells):
# run it with `python tutorials/training_digits.py`, or open it as a notebook with jupytext.
#
# The seed's convolutional `Net` (conv, `Dropout2d`, `max_pool2d`, `relu`, `linear`, `dropout`, `log_softmax`) trained with SGD on scikit-learn's Digits images scaled to 28x28. Displaying a module draws its tree with parameter counts; `TrainingMonitor` plots the loss live.

# %%
import toolkit
import toolkit.nn as nn
import toolkit.nn.functional as F
from toolkit.notebook import TrainingMonitor
from toolkit.utils.data import DataLoader
from toolkit.vision import datasets, transforms

toolkit.manual_seed(0)

# %%
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)

model = Net()
assert sum(p.numel() for p in model.parameters()) == 21840
print(model)

# %% [markdown]
# The data: 8x8 digits resized to 28x28, normalized like MNIST.

# %%
tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
train_set = datasets.Digits(train=True, size=28, transform=tf)
test_set = datasets.Digits(train=False, size=28, transform=tf)
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
test_loader = DataLoader(test_set, batch_size=256)
image, label = train_set[0]
assert image.shape == (1, 28, 28)
print(len(train_set), len(test_set), label)

# %% [markdown]
# In a notebook a tensor displays its statistics and, when it is large, a histogram of its values; here
# the statistics are printed.

# %%
batch, target = next(iter(train_loader))
print(batch.shape, f'mean {batch.mean().item():.3f}, std {batch.std().item():.3f}', target[:8])

# %% [markdown]
# Training: two epochs; the monitor redraws at most twice a second, whatever the step rate.

# %%
optimizer = toolkit.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
epochs = 2
monitor = TrainingMonitor(total=epochs * len(train_loader), title='Net on Digits')
with monitor:
    for _ in range(epochs):
        model.train()
        for data, target in train_loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            monitor.update(loss=loss.item())
losses = [v for _, v in monitor.history['loss']]
assert len(losses) == epochs * len(train_loader)
assert monitor.redraws < len(losses)
assert sum(losses[-10:]) / 10 < sum(losses[:10]) / 10, 'the loss went down'

# %%
def accuracy(model, loader):
    model.eval()
    correct = total = 0
    with toolkit.no_grad():
        for data, target in loader:
            correct += int((model(data).argmax(dim=1) == target).sum())
            total += len(target)
    return correct / total

acc = accuracy(model, test_loader)
assert acc > 0.7, acc
print(f'test accuracy after {epochs} epochs: {acc:.2%}')
