"""``if key in table`` inside the compiled function: Dynamo guards the key's presence and the key variable.
A new key value recompiles; a table without the key fails the entry through a missing dict item."""

import torch


@torch.compile(backend="eager")
def lookup(x, table, key):
    if key in table:
        return x + 1
    return x - 1


x = torch.zeros(2)
assert lookup(x, {"a": 1}, "a").tolist() == [1.0, 1.0]
assert lookup(x, {"a": 1, "b": 2}, "a").tolist() == [1.0, 1.0]
assert lookup(x, {"b": 2}, "b").tolist() == [1.0, 1.0]
assert lookup(x, {"c": 3}, "b").tolist() == [-1.0, -1.0]
print("ok: lookups")
