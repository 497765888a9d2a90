"""dynadbg demo: a small MLP compiled with torch.compile.

What Dynamo does with it:
  * `forward` graph-breaks at `loss.item()` (a Python float is needed in eager), so Dynamo generates code for
    `forward` that calls the first graph, runs `.item()` eagerly, then calls a resume function
    (`torch_dynamo_resume_in_forward_at_...`) with its own graph;
  * `scale` is a Python int: the first compile guards on `L['scale'] == 1`, so the call with scale=2 fails that
    guard and recompiles (a recompile stop shows the failing guard).
Runs on CUDA when available, else CPU.
"""

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class MLP(nn.Module):
    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, 4)

    def forward(self, x, scale):
        h = torch.relu(self.fc1(x)) * scale
        peak = h.abs().max().item()          # graph break: a Python float leaves the graph
        if peak > 100.0:
            h = h / peak
        return self.fc2(h).softmax(-1)


torch.manual_seed(0)
model = MLP().to(device)
compiled = torch.compile(model, backend="eager")
x = torch.randn(8, 16, device=device)
with torch.no_grad():
    for scale in (1, 1, 2):
        out = compiled(x, scale)
        print(f"scale={scale}: out[0] = {[round(v, 4) for v in out[0].tolist()]}")
print("device:", device)
