"""A dict argument grows by one key between calls: torch guards the dict's length (``len(L['d']) == 1``) and
recompiles. The debugger must list that guard as an input guard on ``L['d']``, expected 1, actual 2 — also when
the keys are Enum members (torch then guards the dict through its keys rather than by name)."""

import enum

import torch


class Part(enum.Enum):
    HEAD = 1
    TAIL = 2


def total(d):
    out = 0
    for v in d.values():
        out = out + v
    return out


def main():
    f = torch.compile(total, backend="eager")
    t = torch.ones(3)
    assert f({"a": t}).sum().item() == 3
    assert f({"a": t, "b": t}).sum().item() == 6
    g = torch.compile(lambda d: total(d) * 2, backend="eager")
    assert g({Part.HEAD: t}).sum().item() == 6
    assert g({Part.HEAD: t, Part.TAIL: t}).sum().item() == 12
    print("ok: dict sums right")


if __name__ == "__main__":
    main()
