"""A 4-layer GPT-2 from `transformers` (built from a config: random weights, nothing downloaded), compiled with the
eager backend and called at sequence lengths 8, 16, 17 and 32. The call at 16 misses the first entry's size guard;
torch's automatic dynamic shapes makes the sequence dimension dynamic in the entry it compiles then, which serves
17 and 32. The last line is torch's own count of compiled graphs. Needs the ``[models]`` extra."""

import torch
from torch._dynamo.utils import counters
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=4, n_head=4, n_embd=128, vocab_size=1000, n_positions=64,
                    bos_token_id=0, eos_token_id=0)
model = GPT2LMHeadModel(config).eval()
compiled = torch.compile(model, backend="eager")

with torch.no_grad():
    for length in (8, 16, 17, 32):
        ids = torch.randint(0, config.vocab_size, (2, length))
        out = compiled(input_ids=ids)
        print(f"length {length}: logits {tuple(out.logits.shape)}")
print("torch compiled graphs:", counters["stats"]["unique_graphs"])
