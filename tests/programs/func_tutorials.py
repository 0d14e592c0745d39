"""The torch.func tutorials' core patterns: model ensembling, neural tangent kernel,
per-sample gradients, jacobians/hessians of a model, forward-mode AD with modules."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, vmap, grad, jacrev, jacfwd, hessian, stack_module_state, vjp, jvp
import torch.autograd.forward_ad as fwAD

def det(*shape, k=1.0):
    n = 1
    for s in shape:
        n *= s
    return torch.sin(torch.arange(n, dtype=torch.float64) * k).reshape(*shape)

class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
    def forward(self, x):
        x = x.flatten(1)
        return self.fc2(F.relu(self.fc1(x)))

def init(model, k):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(det(*p.shape, k=k + 0.1 * i) * 0.5)
    return model

# model ensembling
models = [init(SimpleMLP().double(), 0.3 + i) for i in range(4)]
minibatches = det(4, 5, 8, k=0.7)
params, buffers = stack_module_state(models)
base = copy.deepcopy(models[0]).to("meta")
def fmodel(params, buffers, x):
    return functional_call(base, (params, buffers), (x,))
print("ensemble same batch", vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatches[0]))
print("ensemble diff batches", vmap(fmodel)(params, buffers, minibatches))
print("loop", torch.stack([m(minibatches[0]) for m in models]))

# neural tangent kernel
net = init(SimpleMLP().double(), 1.1)
p = {k: v.detach() for k, v in net.named_parameters()}
def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)
x1, x2 = det(3, 8, k=0.9), det(2, 8, k=1.7)
def ntk(fnet_single, params, x1, x2):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = jac1.values()
    jac1 = [j.flatten(2) for j in jac1]
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = [j.flatten(2) for j in jac2.values()]
    result = torch.stack([torch.einsum('Naf,Mbf->NMab', j1, j2) for j1, j2 in zip(jac1, jac2)])
    return result.sum(0)
print("ntk", ntk(fnet_single, p, x1, x2))

# per-sample gradients
targets = torch.tensor([0, 3, 1, 2, 0])
data = det(5, 8, k=0.4)
def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    predictions = functional_call(net, (params, {}), (batch,))
    return F.cross_entropy(predictions, target.unsqueeze(0))
ps = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(p, {}, data, targets)
for name, g in ps.items():
    print("per-sample", name, g.shape, g.sum(), g.abs().max())

# jacobians / hessians of a function of weights
weight, bias, xx = det(5, 4, k=0.2), det(5, k=0.5), det(4, k=0.8)
def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()
print("jacrev x", jacrev(predict, argnums=2)(weight, bias, xx))
print("jacfwd x", jacfwd(predict, argnums=2)(weight, bias, xx))
ft_jacobian, = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, det(3, 4, k=0.3)),
print("batched jac", ft_jacobian.shape, ft_jacobian.sum())
print("hessian", hessian(predict, argnums=2)(weight, bias, xx).shape)
def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]
print("hvp", hvp(lambda x: predict(weight, bias, x).sum(), (xx,), (torch.ones(4, dtype=torch.float64),)))
_, vjp_fn = vjp(lambda x: grad(lambda y: predict(weight, bias, y).sum())(x), xx)
print("vhp", vjp_fn(torch.ones(4, dtype=torch.float64)))

# forward-mode AD with modules (the forward-mode tutorial)
model = init(nn.Linear(5, 5).double(), 0.6)
inp = det(16, 5, k=0.25)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.ones_like(p) for name, p in params.items()}
with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(inp)
    jvp_out = fwAD.unpack_dual(out).tangent
print("module jvp", jvp_out.sum(), jvp_out[0])
model2 = init(nn.Linear(5, 5).double(), 0.6)
p2 = {name: p for name, p in model2.named_parameters()}
with fwAD.dual_level():
    dual_params = {name: fwAD.make_dual(p, tangents[name]) for name, p in p2.items()}
    out = functional_call(model2, dual_params, inp)
    print("functional_call jvp", fwAD.unpack_dual(out).tangent.sum())
