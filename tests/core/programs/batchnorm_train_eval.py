"""A small conv net with eight BatchNorm layers, run for a training step and then evaluated: every BatchNorm's
``training`` flag is guarded, so the call after ``eval()`` (under ``no_grad``) misses the entry and recompiles."""

import torch


class Block(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Net(torch.nn.Module):
    def __init__(self, depth=8, channels=4):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[Block(channels) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(x).mean()


torch.manual_seed(0)
net = Net()
cnet = torch.compile(net, backend="eager")
x = torch.randn(2, 4, 6, 6)
net.train()
loss = cnet(x)
loss.backward()
net.eval()
with torch.no_grad():
    score = cnet(x)
print("train", round(loss.item(), 4), "eval", round(score.item(), 4))
