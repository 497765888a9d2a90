"""A 4-layer GPT-2 from `transformers` (built from a config: random weights, nothing downloaded; dropout
probabilities 0, so train() and eval() compute the same logits), compiled with the eager backend, called once in
train() and once in eval(), both under `torch.no_grad()`. The eval() call misses the first entry on every dropout
module's `.training` flag. The last line is how far the second call's logits are from an uncompiled eval() run's.
Needs the ``[models]`` extra."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=4, n_head=4, n_embd=128, vocab_size=1000, n_positions=64, bos_token_id=0,
                    eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
model = GPT2LMHeadModel(config)
compiled = torch.compile(model, backend="eager")
ids = torch.randint(0, config.vocab_size, (2, 8))

with torch.no_grad():
    model.train()
    print("train logits", tuple(compiled(input_ids=ids).logits.shape))
    model.eval()
    served = compiled(input_ids=ids).logits
    plain = model(input_ids=ids).logits
print("eval max difference from eager:", float((served - plain).abs().max()))
