"""Exact Gaussian-process regression: RBF kernel from cdist, Cholesky factor, log marginal
likelihood, hyperparameters fitted with L-BFGS (strong Wolfe), predictive mean/variance."""
import math

import torch

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
X = torch.linspace(-3, 3, 20).unsqueeze(1)
y = torch.sin(1.5 * X).squeeze(1) + 0.1 * torch.randn(20)
Xs = torch.linspace(-4, 4, 7).unsqueeze(1)


class GP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.log_ls = torch.nn.Parameter(torch.tensor(0.0))
        self.log_sf = torch.nn.Parameter(torch.tensor(0.0))
        self.log_sn = torch.nn.Parameter(torch.tensor(-1.0))

    def kernel(self, a, b):
        d2 = torch.cdist(a / self.log_ls.exp(), b / self.log_ls.exp()).pow(2)
        return self.log_sf.exp().pow(2) * torch.exp(-0.5 * d2)

    def nll(self):
        K = self.kernel(X, X) + self.log_sn.exp().pow(2) * torch.eye(len(X))
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y.unsqueeze(1), L)
        fit = 0.5 * (y.unsqueeze(1) * alpha).sum()
        return fit + torch.log(torch.diagonal(L)).sum() + 0.5 * len(X) * math.log(2 * math.pi)

    def predict(self, xs):
        K = self.kernel(X, X) + self.log_sn.exp().pow(2) * torch.eye(len(X))
        L = torch.linalg.cholesky(K)
        Ks = self.kernel(xs, X)
        mean = Ks @ torch.cholesky_solve(y.unsqueeze(1), L)
        v = torch.linalg.solve_triangular(L, Ks.T, upper=False)
        var = self.log_sf.exp().pow(2) - v.pow(2).sum(0)
        return mean.squeeze(1), var


gp = GP()
print(f"initial nll {gp.nll().item():.6f}")
K = gp.kernel(X, X) + 0.1 * torch.eye(20)
print(f"logdet {torch.logdet(K).item():.6f} slogdet {torch.linalg.slogdet(K).logabsdet.item():.6f}"
      f" 2*sum(log diag L) {2 * torch.linalg.cholesky(K).diagonal().log().sum().item():.6f}")
opt = torch.optim.LBFGS(gp.parameters(), lr=1.0, max_iter=40, history_size=10,
                        line_search_fn="strong_wolfe", tolerance_grad=1e-9, tolerance_change=1e-12)
evals = []


def closure():
    opt.zero_grad()
    loss = gp.nll()
    loss.backward()
    evals.append(loss.item())
    return loss


for rnd in range(2):
    final = opt.step(closure)
    print(f"round {rnd}: returned {final.item():.6f} evaluations {len(evals)} best {min(evals):.6f}")
state = opt.state[opt._params[0]]
print("lbfgs state:", state["n_iter"], state["func_evals"], len(state["old_dirs"]))
print("lengthscale %.4f signal %.4f noise %.4f" % tuple(
    p.exp().item() for p in (gp.log_ls, gp.log_sf, gp.log_sn)))
print("converged (|grad| < 1e-6):", all(p.grad.abs().item() < 1e-6 for p in gp.parameters()))

with torch.no_grad():
    mean, var = gp.predict(Xs)
print("mean:", [f"{m:.4f}" for m in mean.tolist()])
print("std: ", [f"{s:.4f}" for s in var.clamp_min(0).sqrt().tolist()])
print("truth:", [f"{t:.4f}" for t in torch.sin(1.5 * Xs).squeeze(1).tolist()])

# gradients through cholesky / cholesky_solve / cholesky_inverse, and the upper form
A = gp.kernel(X[:5], X[:5]).detach() + 0.5 * torch.eye(5)
A.requires_grad_()
U = torch.linalg.cholesky(A, upper=True)
b = torch.arange(10.0).reshape(5, 2)
sol = torch.cholesky_solve(b, U, upper=True)
print("solve residual below 1e-12:", (A @ sol - b).abs().max().item() < 1e-12)
inv = torch.cholesky_inverse(U, upper=True)
(sol.sum() + inv.trace() + torch.logdet(A)).backward()
print("dA row0:", [f"{v:.5f}" for v in A.grad[0].tolist()])
print("grad_fns:", type(U.grad_fn).__name__, type(sol.grad_fn).__name__, type(inv.grad_fn).__name__)
L, info = torch.linalg.cholesky_ex(A.detach() - 2 * torch.eye(5))
print("cholesky_ex info:", info.item(), L.dtype)
try:
    torch.linalg.cholesky(A.detach() - 2 * torch.eye(5))
except torch.linalg.LinAlgError as e:
    print("LinAlgError:", e)
