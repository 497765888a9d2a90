"""A compiled optimizer step: ``opt_step = torch.compile(opt.step)``, with the learning rate changed by hand
before each step. Dynamo compiles torch's own ``SGD.step`` (and what it calls) under the user's call: a fix goes
on ``torch.compile(opt.step, ...)``, not on a function named ``step``."""

import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt_step = torch.compile(opt.step, backend="eager")
    x = torch.randn(8, 4)
    for lr in (0.1, 0.05, 0.02):
        opt.param_groups[0]["lr"] = lr
        model(x).pow(2).mean().backward()
        opt_step()
        opt.zero_grad()
    print("ok: loss", round(float(model(x).pow(2).mean()), 3) >= 0)


if __name__ == "__main__":
    main()
