"""A compiled outer function whose resume function recompiles: ``pipeline`` prints (a graph break), then uses its
int argument ``steps``. Only the resume function after the print guards ``steps``, so it is the one that
recompiles; the fix goes on the user's ``torch.compile(pipeline)``, the only call there is."""

import torch


def pipeline(x, steps):
    y = x.cos()
    print("pipeline: graph break here")
    return y * steps


def main():
    cpipeline = torch.compile(pipeline, backend="eager", dynamic=False)
    for steps in (2, 3):
        print(cpipeline(torch.zeros(2), steps).tolist())


if __name__ == "__main__":
    main()
