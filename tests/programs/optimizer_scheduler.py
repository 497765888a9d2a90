"""A compiled optimizer step with an LR scheduler (AdamW + OneCycleLR), a few steps. Under the debugger this
once ended with ``terminate called without an active exception`` (rc 134) about one run in six, after all
output was printed: the process exited while torch's compile worker threads were still being torn down."""

import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(0.01))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=torch.tensor(0.05), total_steps=10)

    @torch.compile(fullgraph=False)
    def step():
        opt.step()
        sched.step()

    x = torch.randn(16, 8)
    for _ in range(3):
        loss = model(x).pow(2).mean()
        loss.backward()
        step()
        opt.zero_grad()
    print("ok: loss", round(float(model(x).pow(2).mean()), 2) >= 0)


if __name__ == "__main__":
    main()
