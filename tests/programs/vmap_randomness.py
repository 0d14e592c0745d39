"""vmap with randomness="different" and "same": dropout and noise per entry, nested
vmaps, chunk_size, generators, in-place samplers, and the generator state afterwards;
the draws are the reference's (one draw for the whole batch)."""
import torch
import torch.nn.functional as F
from torch.func import vmap
torch.manual_seed(0)
B = torch.randn(3, 5)
def f(x):
    m = F.dropout(torch.ones(4), 0.5)
    z = torch.randn(4) + x.sum()
    return m * z
print(vmap(f, randomness="different")(B))
print(vmap(f, randomness="different", chunk_size=2)(B))
print(vmap(vmap(lambda x: x + torch.randn(()), randomness="different"), randomness="different")(B[:, :2]))
print(vmap(lambda x: torch.normal(x, 0.5), randomness="different")(B))
print(vmap(lambda x: x.max(0).indices + torch.rand(2), randomness="different")(B))
g = torch.Generator().manual_seed(5)
print(vmap(lambda x: torch.randn(3, generator=g) + x[0], randomness="different")(B))
print(vmap(lambda x: torch.randn(17, dtype=torch.float32).sum() + x[0], randomness="different")(B))
print(vmap(lambda x: x.new_empty(20).normal_(2.0, 0.5)[:2], randomness="different")(B))
print(vmap(lambda x: torch.randint_like(x, 10), randomness="different")(B))
print(vmap(lambda x: torch.rand_like(x).exponential_()[:2], randomness="different")(B))
print(torch.rand(3))

torch.manual_seed(3)
x = torch.zeros(3, 4, 5)
print(vmap(lambda t: torch.randn_like(t), randomness="different")(x)[2, 3])
print(vmap(lambda t: torch.randn_like(t), randomness="same")(x)[2, 3])
print(vmap(lambda t: F.dropout(t + 1, 0.3) + torch.randn(()), randomness="different")(x)[:, 0, :3])
print(torch.randn(2))
