"""vmap's arguments and edge cases as users meet them."""
import torch
from torch.func import vmap, grad

x = torch.arange(12, dtype=torch.float64).reshape(3, 4) / 7
y = torch.linspace(-1, 1, 4, dtype=torch.float64)
print(torch.vmap(torch.dot)(x, x))
print(vmap(torch.dot, in_dims=(0, None))(x, y))
print(vmap(lambda a, b: a * b, in_dims=(1, None), out_dims=1)(x, y[:3]))
print(vmap(lambda d: d["a"] + d["b"][0], in_dims=({"a": 0, "b": (1,)},))({"a": x, "b": (x.T,)}))
out = vmap(lambda a: (a.sum(), a.max(), a.cumsum(0)), out_dims=(0, 0, 1))(x)
print([o.shape for o in out], out[2])
print(vmap(lambda a: a.sort(descending=True).values)(x.flip(1)))
print(vmap(lambda a: a[1:3].exp())(x))
print(vmap(lambda a: torch.where(a > 0.5, a, -a))(x))
print(vmap(lambda a: a @ x.T)(x))
print(vmap(lambda a: torch.nn.functional.softmax(a, dim=-1))(x))
print(vmap(lambda a: a.unsqueeze(0).expand(2, 4).contiguous().view(8))(x))
print(vmap(lambda a, s: a * s)(x, torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)))
print(vmap(lambda a: a.new_zeros(2) + a.sum())(x))
print(vmap(vmap(lambda a, b: a * b), in_dims=(0, None))(x, y))
print(vmap(torch.sin, chunk_size=1)(x))
print(vmap(lambda a: (a * 2, 3.0), out_dims=(0, None))(x))
for bad in [lambda: vmap(torch.sin, in_dims=(0, 0))(x),
            lambda: vmap(torch.dot)(x, y),
            lambda: vmap(lambda a: a.item())(x),
            lambda: vmap(lambda a: torch.rand(2))(x),
            lambda: vmap(lambda a: 1.0)(x),
            lambda: vmap(torch.sin, in_dims=2)(x),
            lambda: vmap(torch.sin, chunk_size=0)(x),
            lambda: vmap(lambda a: a if a.sum() > 0 else -a)(x),
            lambda: vmap(torch.sin, randomness="bad")(x)]:
    try:
        bad()
        print("no error")
    except Exception as e:
        print(type(e).__name__, ":", str(e)[:90])
print(vmap(lambda a: torch.rand(2).shape, randomness="different", out_dims=None)(x))
same = vmap(lambda a: torch.rand(2) * 0 + a.sum(), randomness="same")(x)
print(same)
print(vmap(lambda a: a.add_(1))(x.clone()))
class Cube(torch.autograd.Function):
    generate_vmap_rule = True
    @staticmethod
    def forward(x):
        return x ** 3
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * g
print(vmap(Cube.apply)(x))
print(vmap(grad(lambda a: Cube.apply(a).sum()))(x))
