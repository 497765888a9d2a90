"""A 2-rank job (gloo, CPU) where rank 1 calls the compiled step with another int and recompiles; rank 0 does not."""

import torch
import torch.distributed as dist


@torch.compile(backend="eager")
def step(x, k):
    return x * k


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.ones(2)
    step(x, 1)
    step(x, 1 if rank == 0 else 2)
    total = step(x, 1).sum().reshape(1)
    dist.all_reduce(total)
    print(f"rank {rank}: total {total.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
