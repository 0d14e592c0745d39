"""Training through torch.func transforms: sequences, physics energies, score matching.

1. A small GRU sequence model trained with torch.func.grad over functional_call and a
torch.optim optimizer fed the functional gradients; a physics energy (springs and a
Lennard-Jones pair) differentiated with jacfwd(jacrev) over argnums tuples, has_aux,
forces by grad, hessian blocks, and vmap over configurations; utilities around
functional_call (tied weights, strict, several dicts) and replace_all_batch_norm_modules_.

2. Score matching and continuous normalizing flows with torch.func: the exact
divergence of a vector field (jacrev / jacfwd diagonal under vmap), Hutchinson's
estimator with vjp and with jvp (Rademacher and Gaussian probes), sliced score
matching trained with an optimizer through the transforms (gradients flow through
jvp/vjp results to the parameters), and an Euler step of a CNF's log-density.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import (functional_call, grad, grad_and_value, jacfwd, jacrev, hessian,
                        vmap, replace_all_batch_norm_modules_)

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


class SeqModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 4)
        self.gru = nn.GRU(4, 6, batch_first=True)
        self.head = nn.Linear(6, 7)

    def forward(self, tokens):
        h, _ = self.gru(self.emb(tokens))
        return self.head(h)


model = SeqModel()
seq = torch.tensor([[1, 2, 3, 4, 5, 6, 1, 2], [3, 4, 5, 6, 1, 2, 3, 4]])
inp, tgt = seq[:, :-1], seq[:, 1:]


def loss_fn(params, tokens, targets):
    logits = functional_call(model, params, (tokens,))
    return F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1)), logits.argmax(-1)


params = {k: v.detach().clone().requires_grad_() for k, v in model.named_parameters()}
opt = torch.optim.Adam(params.values(), lr=0.05)
g_and_v = grad_and_value(loss_fn, has_aux=True)
for step in range(12):
    grads, (loss, pred) = g_and_v(params, inp, tgt)
    for k, p in params.items():
        p.grad = grads[k]
    opt.step()
    if step % 3 == 0 or step == 11:
        acc = (pred == tgt).double().mean().item()
        print("step", step, round(loss.item(), 6), "acc", round(acc, 4))
print("grad keys", sorted(grads)[:3], grads["emb.weight"].requires_grad)
print("state steps", [int(s["step"]) for s in opt.state.values()][:2])

# the same gradient by autograd on the module
model.zero_grad()
with torch.no_grad():
    for k, p in model.named_parameters():
        p.copy_(params[k])
l = F.cross_entropy(model(inp).reshape(-1, 7), tgt.reshape(-1))
l.backward()
g2 = grad(lambda p: loss_fn(p, inp, tgt)[0])({k: v.detach() for k, v in params.items()})
print("grads agree", all(torch.allclose(g2[k], p.grad) for k, p in model.named_parameters()))

# physics: springs on a chain plus a Lennard-Jones pair
k_spring = torch.tensor([1.0, 2.0, 1.5])


def energy(pos, rest, eps_lj):
    d = (pos[1:] - pos[:-1]).norm(dim=-1)
    springs = 0.5 * (k_spring * (d - rest) ** 2).sum()
    r = (pos[0] - pos[-1]).norm()
    lj = 4 * eps_lj * ((1 / r) ** 12 - (1 / r) ** 6)
    return springs + lj, {"springs": springs.detach(), "lj": lj.detach()}


pos = torch.tensor([[0.0, 0.0], [1.1, 0.1], [2.0, 0.9], [1.2, 1.6]])
rest = torch.tensor([1.0, 1.0, 1.0])
eps_lj = torch.tensor(0.3)
(f_pos, f_rest), aux = grad(energy, argnums=(0, 1), has_aux=True)(pos, rest, eps_lj)
print("forces", [[round(v, 6) for v in row] for row in (-f_pos).tolist()])
print("d/d rest", [round(v, 6) for v in f_rest.tolist()], {k: round(v.item(), 6) for k, v in aux.items()})
H, aux2 = jacfwd(jacrev(energy, argnums=0, has_aux=True), argnums=0, has_aux=True)(pos, rest, eps_lj)
print("hessian", tuple(H.shape), round(H.reshape(8, 8).trace().item(), 6), torch.allclose(H.reshape(8, 8), H.reshape(8, 8).T))
Hpair = hessian(lambda p, r: energy(p, r, eps_lj)[0], argnums=(0, 1))(pos, rest)
print("hessian blocks", [[tuple(b.shape) for b in row] for row in Hpair])
print("mixed block", [round(v, 6) for v in Hpair[0][1].flatten()[:4].tolist()])
evals = torch.linalg.eigvalsh(H.reshape(8, 8))
print("zero modes (translations+rotation)", int((evals.abs() < 1e-8).sum()), "min", round(evals[3].item(), 6))

# vmap over a batch of configurations
batch = pos + 0.05 * torch.randn(5, 4, 2)
energies, auxes = vmap(energy, in_dims=(0, None, None))(batch, rest, eps_lj)
forces = vmap(grad(lambda p: energy(p, rest, eps_lj)[0]))(batch)
print("batched energies", [round(v, 6) for v in energies.tolist()], tuple(auxes["lj"].shape))
print("batched forces", tuple(forces.shape), round(forces.abs().sum().item(), 6))
# one relaxation by gradient descent on positions with vmapped forces
for _ in range(20):
    batch = batch - 0.05 * vmap(grad(lambda p: energy(p, rest, eps_lj)[0]))(batch)
print("relaxed", [round(v, 6) for v in vmap(energy, in_dims=(0, None, None))(batch, rest, eps_lj)[0].tolist()])

# functional_call details: tied weights, several dicts, strict, buffers
tied = nn.Sequential(nn.Embedding(5, 3), nn.Linear(3, 5, bias=False))
tied[1].weight = tied[0].weight
new_w = torch.ones(5, 3)
out = functional_call(tied, {"0.weight": new_w}, (torch.tensor([0, 1]),))
print("tied weights follow", out.tolist())
out = functional_call(tied, {"0.weight": new_w}, (torch.tensor([0, 1]),), tie_weights=False)
print("untied", [round(v, 6) for v in out[0].tolist()])
bnnet = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
p1 = {"0.weight": torch.eye(3)}
p2 = {"0.bias": torch.zeros(3)}
o = functional_call(bnnet, (p1, p2), (torch.arange(6.0).reshape(2, 3),))
print("two dicts", [round(v, 6) for v in o[0].tolist()], bnnet[1].num_batches_tracked.item())
try:
    functional_call(bnnet, {"0.weight": torch.eye(3)}, (torch.ones(2, 3),), strict=True)
except RuntimeError as e:
    print("strict:", str(e).split("\n")[0][:80])
replace_all_batch_norm_modules_(bnnet)
print("bn without running stats", bnnet[1].running_mean, bnnet[1].track_running_stats)


# --- 2 ----------------------------------------------------------------------
import torch
import torch.nn as nn
from torch.func import functional_call, jacrev, jacfwd, jvp, vjp, vmap

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)

field = nn.Sequential(nn.Linear(2, 16), nn.Softplus(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 2))
x = torch.randn(64, 2) * torch.tensor([1.0, 0.5]) + torch.tensor([0.5, -0.2])


def f(params, z):
    return functional_call(field, params, (z,))


params = {k: v.detach().clone().requires_grad_() for k, v in field.named_parameters()}


def exact_divergence(p, z):
    J = vmap(jacrev(lambda zz: f(p, zz)))(z)
    return J.diagonal(dim1=-2, dim2=-1).sum(-1)


def hutchinson_vjp(p, z, eps):
    out, pull = vjp(lambda zz: f(p, zz), z)
    return (pull(eps)[0] * eps).sum(-1)


def hutchinson_jvp(p, z, eps):
    _, push = jvp(lambda zz: f(p, zz), (z,), (eps,))
    return (push * eps).sum(-1)


div = exact_divergence(params, x)
print("exact divergence", [round(v, 6) for v in div[:5].tolist()])
J_fwd = vmap(jacfwd(lambda zz: f(params, zz)))(x[:3])
J_rev = vmap(jacrev(lambda zz: f(params, zz)))(x[:3])
print("jacfwd == jacrev", torch.allclose(J_fwd, J_rev), tuple(J_fwd.shape))
rad = torch.randint(0, 2, (64, 64, 2)).double() * 2 - 1
est_v = torch.stack([hutchinson_vjp(params, x, e) for e in rad[:50]]).mean(0)
est_j = vmap(lambda e: hutchinson_jvp(params, x, e))(rad).mean(0)
print("hutchinson vjp", [round(v, 6) for v in est_v[:5].tolist()])
print("hutchinson jvp", [round(v, 6) for v in est_j[:5].tolist()])
print("estimators agree per probe", torch.allclose(hutchinson_vjp(params, x, rad[0]), hutchinson_jvp(params, x, rad[0])))
print("mean abs error", round((est_j - div).abs().mean().item(), 6))

# sliced score matching: E[ v^T J v + 0.5 (v^T s)^2 ], gradients through jvp to params
opt = torch.optim.Adam(params.values(), lr=5e-3)
for step in range(12):
    v = torch.randn(64, 2)
    s, Jv = jvp(lambda zz: f(params, zz), (x,), (v,))
    loss = ((v * Jv).sum(-1) + 0.5 * (v * s).sum(-1) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 0 or step == 11:
        print("ssm step", step, round(loss.item(), 6), round(params["0.weight"].grad.norm().item(), 6))

# the exact score-matching objective with the divergence, trained through jacrev
for step in range(10):
    s = f(params, x)
    loss = (exact_divergence(params, x) + 0.5 * (s ** 2).sum(-1)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("exact sm loss", round(loss.item(), 6))

# one Euler step of a CNF: dz = f dt, dlogp = -div f dt
with torch.no_grad():
    z = x.clone()
logp = -0.5 * (z ** 2).sum(-1) - torch.log(torch.tensor(2 * torch.pi))
for k in range(4):
    dz = f({k2: v.detach() for k2, v in params.items()}, z)
    dl = exact_divergence({k2: v.detach() for k2, v in params.items()}, z)
    z = z + 0.1 * dz
    logp = logp - 0.1 * dl
print("cnf logp", [round(v, 6) for v in logp[:4].tolist()], "z", [round(v, 6) for v in z[0].tolist()])
print("requires grad after no-grad params", logp.requires_grad, dz.requires_grad)
