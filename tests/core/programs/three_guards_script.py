"""A script for `report`: the second call changes an int, a bool and a float in a dict at once."""
import torch


def three(x, n, flag, cfg):
    y = x * n
    if flag:
        y = y + 1
    return y * cfg["scale"]


cf = torch.compile(three, backend="eager")
cf(torch.ones(3), 1, True, {"scale": 0.5})
cf(torch.ones(3), 2, False, {"scale": 0.25})
cf(torch.ones(3), 2, False, {"scale": 0.25})
print("ok")
