"""The empirical neural tangent kernel (jacobian contraction and the implicit
jvp/vjp variant of torch's tutorial) and hessians by jacfwd(jacrev) against
torch.autograd.functional.hessian."""
import torch
import torch.nn as nn
from torch.func import functional_call, vmap, vjp, jvp, jacrev, jacfwd, hessian

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


net = Net().double()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float64) * (0.7 + i)).reshape(p.shape) * 0.5)
params = {k: v.detach() for k, v in net.named_parameters()}


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


x_train = torch.sin(torch.arange(12, dtype=torch.float64) * 0.8).reshape(4, 3)
x_test = torch.cos(torch.arange(9, dtype=torch.float64) * 1.1).reshape(3, 3)


def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute="full"):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = [j.flatten(2) for j in jac1.values()]
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = [j.flatten(2) for j in jac2.values()]
    einsum_expr = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM", "diagonal": "Naf,Maf->NMa"}[compute]
    result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
    return result.sum(0)


def empirical_ntk_ntk_vps(func, params, x1, x2, compute="full"):
    def get_ntk(x1, x2):
        def func_x1(params):
            return func(params, x1)

        def func_x2(params):
            return func(params, x2)

        output, vjp_fn = vjp(func_x1, params)

        def get_ntk_slice(vec):
            vjps = vjp_fn(vec)
            _, jvps = jvp(func_x2, (params,), vjps)
            return jvps

        basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device).view(output.numel(), -1)
        return vmap(get_ntk_slice)(basis)

    result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
    if compute == "full":
        return result
    if compute == "trace":
        return torch.einsum("NMKK->NM", result)
    if compute == "diagonal":
        return torch.einsum("NMKK->NMK", result)


full = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
implicit = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test)
print("ntk", full.shape, full[0])
print("ntk implicit", implicit.shape, implicit[1])
print("agree", torch.allclose(full, implicit, atol=1e-10))
print("trace", empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, "trace"))
print("diag implicit", empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test, "diagonal")[2])


# hessians: jacfwd(jacrev) against autograd.functional.hessian
def rosen(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


x0 = torch.tensor([-1.2, 1.0, 0.5, 0.8], dtype=torch.float64)
h_func = jacfwd(jacrev(rosen))(x0)
h_af = torch.autograd.functional.hessian(rosen, x0)
h_rev = jacrev(jacrev(rosen))(x0)
print("hessian", h_func)
print("hessian agree", torch.allclose(h_func, h_af), torch.allclose(h_rev, h_af), torch.allclose(hessian(rosen)(x0), h_af))
print("outer fwd", torch.allclose(torch.autograd.functional.hessian(rosen, x0, vectorize=True, outer_jacobian_strategy="forward-mode"), h_af))


def two_args(a, b):
    return (a.sin().sum() * b).sum() + (a * a).sum() * b.prod()


a, b = torch.tensor([0.3, -0.4], dtype=torch.float64), torch.tensor([1.5, 0.5, -1.0], dtype=torch.float64)
hf = jacfwd(jacrev(two_args, argnums=(0, 1)), argnums=(0, 1))(a, b)
ha = torch.autograd.functional.hessian(two_args, (a, b))
print("hessian tuple shapes", [[t.shape for t in row] for row in hf], [[t.shape for t in row] for row in ha])
print("hessian tuple agree", all(torch.allclose(x, y) for rx, ry in zip(hf, ha) for x, y in zip(rx, ry)))
print("hessian of params", {k: v["fc2.bias"].shape for k, v in hessian(lambda p: fnet_single(p, x_train[0]).pow(2).sum())(params).items()})
# per-example hessians
print("batched hessian", vmap(hessian(rosen))(torch.stack([x0, x0.flip(0), x0 * 0.5])).sum((1, 2)))
