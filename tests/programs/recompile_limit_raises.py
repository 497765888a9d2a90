"""``fail_on_recompile_limit_hit=True``: when the recompile limit is hit torch raises
(``FailOnRecompileLimitHit``) instead of running the call eagerly. The debugger must say torch will raise."""

import torch


def shift(x, n):
    return x + n


def main():
    torch._dynamo.config.fail_on_recompile_limit_hit = True
    torch._dynamo.config.recompile_limit = 2
    f = torch.compile(shift, backend="eager", dynamic=False)
    f(torch.zeros(2), 0)
    f(torch.zeros(2), 1)
    try:
        f(torch.zeros(2), 2)
    except Exception as exc:  # noqa: BLE001
        print("raised:", type(exc).__name__)
    else:
        print("no error")


if __name__ == "__main__":
    main()
