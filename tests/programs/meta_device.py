"""An input moves to the meta device between calls: the tensor guard on ``L['x']`` fails because the input's
device changed. The debugger must report it as an input guard on ``L['x']`` with the device, not as a
"dispatch keys" problem unrelated to the inputs."""

import torch


def norm(x):
    return x / (x.abs().sum() + 1)


def main():
    f = torch.compile(norm, backend="eager")
    f(torch.ones(3))
    out = f(torch.ones(3, device="meta"))
    print("ok:", out.device)


if __name__ == "__main__":
    main()
