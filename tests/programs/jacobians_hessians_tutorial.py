"""The "Jacobians, Hessians, hvp, vhp, and more" tutorial: a jacobian row by row with
autograd.grad, then vjp + vmap, jacrev / jacfwd with argnums, hessians (jacfwd of
jacrev, hessian), batch jacobians and hessians (vmap, the sum trick), and the
hvp = jvp(grad(f)) recipe; each next to torch.autograd.functional's answer (jacobian
with vectorize and forward-mode strategy, hessian, hvp, vhp, jvp, vjp)."""
from functools import partial

import torch
import torch.autograd.functional as AF
import torch.nn.functional as F
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

torch.manual_seed(0)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


D = 8
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)


def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                     for vec in unit_vectors]
    return torch.stack(jacobian_rows)


xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)
jacobian = compute_jac(xp)
print(jacobian.shape)
print(jacobian[0])

_, vjp_fn = vjp(partial(predict, weight, bias), x)
ft_jacobian, = vmap(vjp_fn)(unit_vectors)
print(torch.allclose(ft_jacobian, jacobian))
ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
print(torch.allclose(ft_jacobian, jacobian))
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print(ft_jac_weight.shape, ft_jac_bias.shape)
ref_weight, ref_bias = AF.jacobian(lambda w, b: predict(w, b, x), (weight, bias))
print(torch.allclose(ft_jac_weight, ref_weight), torch.allclose(ft_jac_bias, ref_bias))
print(ft_jac_bias[:2])

jacfwd_result = jacfwd(predict, argnums=2)(weight, bias, x)
print(torch.allclose(jacfwd_result, jacobian, atol=1e-6))
for kwargs in ({}, {"vectorize": True}, {"vectorize": True, "strategy": "forward-mode"}):
    ref = AF.jacobian(partial(predict, weight, bias), x, **kwargs)
    print(kwargs, ref.shape, torch.allclose(ref, jacobian, atol=1e-6))

# --- hessians ----------------------------------------------------------------------------------
Din, Dout = 5, 4
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)
hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
print(hess_api.shape, torch.allclose(hess_api, hess_fwdfwd, atol=1e-6),
      torch.allclose(hess_api, hess_revrev, atol=1e-6))
print(hess_api[0, 0])
ref_hess = AF.hessian(lambda t: predict(weight, bias, t)[0], x)
print(torch.allclose(ref_hess, hess_api[0], atol=1e-6))

# --- batch jacobians and hessians -----------------------------------------------------------
batch_size = 6
x = torch.randn(batch_size, Din)
compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)
print(batch_jacobian0.shape)


def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
print(torch.allclose(batch_jacobian0, batch_jacobian1, atol=1e-6), batch_jacobian1[0, 0])
compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
batch_hess = compute_batch_hessian(weight, bias, x)
print(batch_hess.shape, batch_hess[1, 2, 3])


# --- hvp, vhp --------------------------------------------------------------------------------
def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = torch.randn(16, dtype=torch.float64)
tangent = torch.randn(16, dtype=torch.float64)
result = hvp(f, (x,), (tangent,))
print(torch.allclose(result, tangent * -x.sin()), result[:3])
value, ref_hvp = AF.hvp(f, x, tangent)
print(value, torch.allclose(ref_hvp, result))
value, ref_vhp = AF.vhp(f, x, tangent)
print(torch.allclose(ref_vhp, result))
out, jvp_out = AF.jvp(torch.tanh, x, tangent)
_, func_jvp = jvp(torch.tanh, (x,), (tangent,))
print(torch.allclose(jvp_out, func_jvp), jvp_out[:2])
out, vjp_out = AF.vjp(torch.tanh, x, tangent)
print(torch.allclose(vjp_out, vjp(torch.tanh, x)[1](tangent)[0]), vjp_out[:2])
