"""The program the fake engine pretends to debug. Never run by the tests: only its lines are shown.

The fake listings in `fake_engine` map their instructions to the line numbers of `forward` below, so the source
pane has real text to sync to.
"""

import torch


class Scale(torch.nn.Module):
    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        y = x * self.factor + n
        if n > 2:
            y = y.relu()
        print("graph break here")
        return y.sum(dim=0) * n


model = torch.compile(Scale(2.0), backend="eager")
for n in (1, 2, 3):
    model(torch.ones(4, 4), n)
