"""Module hooks as instrumentation code uses them: forward pre-hooks and forward hooks
with_kwargs=True that rewrite arguments and outputs, always_call hooks on a failing
forward, full backward pre-hooks and hooks that rescale gradients, global module hooks,
state_dict pre/post hooks and load_state_dict post hooks, and removing handles."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.module import (register_module_forward_hook,
                                     register_module_forward_pre_hook)

torch.manual_seed(0)


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x, scale=1.0, shift=None):
        out = self.lin(x) * scale
        if shift is not None:
            out = out + shift
        return out


m = Scaler()
log = []


def pre_kw(module, args, kwargs):
    log.append(("pre", tuple(a.shape for a in args), sorted(kwargs)))
    kwargs = dict(kwargs)
    kwargs["scale"] = kwargs.get("scale", 1.0) * 2
    return args, kwargs


def post_kw(module, args, kwargs, output):
    log.append(("post", kwargs["scale"], round(output.sum().item(), 4)))
    return output - 0.5


h1 = m.register_forward_pre_hook(pre_kw, with_kwargs=True)
h2 = m.register_forward_hook(post_kw, with_kwargs=True)
x = torch.randn(4, 3)
y = m(x, scale=1.5, shift=torch.ones(2))
print("y", y)
for entry in log:
    print(entry)

# a plain pre-hook that replaces the input, prepended before the kwargs hook
h3 = m.register_forward_pre_hook(lambda mod, args: (args[0].clamp(min=0),), prepend=True)
log.clear()
print("clamped", m(x).sum().item())
print(log)
for h in (h1, h2, h3):
    h.remove()
print("hooks removed", torch.allclose(m(x), m.lin(x)))


# always_call: the hook runs even when forward raises
class Fails(nn.Module):
    def forward(self, x):
        raise ValueError("bad input shape %s" % (tuple(x.shape),))


f = Fails()
f.register_forward_hook(lambda mod, args, out: print("always_call hook saw output", out), always_call=True)
try:
    f(torch.zeros(2, 2))
except ValueError as e:
    print("ValueError:", e)

# full backward hooks: gradient w.r.t. module inputs and outputs
net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
seen = []


def bwd_pre(module, grad_output):
    seen.append(("bwd_pre", type(module).__name__, round(grad_output[0].abs().sum().item(), 5)))
    return (grad_output[0] * 10,)


def bwd(module, grad_input, grad_output):
    seen.append(("bwd", type(module).__name__, [None if g is None else tuple(g.shape) for g in grad_input],
                 round(grad_output[0].abs().sum().item(), 5)))
    if grad_input[0] is not None:
        return (grad_input[0].clamp(-0.1, 0.1),)


net[2].register_full_backward_pre_hook(bwd_pre)
net[1].register_full_backward_hook(bwd)
net[0].register_full_backward_hook(bwd)
inp = torch.randn(6, 3, requires_grad=True)
loss = F.mse_loss(net(inp), torch.zeros(6, 1))
loss.backward()
for s in seen:
    print(s)
print("inp.grad", inp.grad)
print("first layer weight grad", net[0].weight.grad)

# global hooks see every module call
calls = []
g1 = register_module_forward_pre_hook(lambda mod, args: calls.append("pre " + type(mod).__name__))
g2 = register_module_forward_hook(lambda mod, args, out: calls.append("post " + type(mod).__name__))
with torch.no_grad():
    net(torch.ones(1, 3))
g1.remove()
g2.remove()
net(torch.ones(1, 3))
print(calls)

# state_dict hooks
lin = nn.Linear(2, 2)


def sd_post(module, state_dict, prefix, local_metadata):
    state_dict[prefix + "note"] = torch.tensor(7.0)


lin._register_state_dict_hook(sd_post)
sd = lin.state_dict()
print(sorted(sd))
del sd["note"]
other = nn.Linear(2, 2)
loaded = []
other.register_load_state_dict_post_hook(lambda mod, keys: loaded.append((list(keys.missing_keys), list(keys.unexpected_keys))))
other.load_state_dict(sd)
print("loaded", loaded, torch.equal(other.weight, lin.weight))
res = other.load_state_dict({"weight": lin.weight.detach()}, strict=False)
print("missing", res.missing_keys, "unexpected", res.unexpected_keys, loaded[-1])
