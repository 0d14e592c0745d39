"""Linear algebra as users write it: least squares, SPD solves, eigh/SVD with gradients."""
import torch

torch.set_default_dtype(torch.float64)
A = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0], [1.0, -1.0, 1.0]], requires_grad=True)
b = torch.tensor([[1.0], [2.0], [0.5], [-1.0]], requires_grad=True)

sol = torch.linalg.lstsq(A, b).solution
print("lstsq", sol.flatten())
normal = torch.linalg.solve(A.T @ A, A.T @ b)
print("normal equations agree", torch.allclose(sol, normal))
sol.sum().backward()
print("A.grad", A.grad)
print("b.grad", b.grad.flatten())

M = torch.tensor([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]], requires_grad=True)
S = M @ M.T + torch.eye(3)
L = torch.linalg.cholesky(S)
rhs = torch.arange(1.0, 4.0).unsqueeze(1)
x = torch.cholesky_solve(rhs, L)
print("cholesky_solve", x.flatten())
logdet = 2 * L.diagonal().log().sum()
print("logdet", logdet.item(), torch.logdet(S).item(), torch.linalg.slogdet(S))
(x.sum() + logdet).backward()
print("M.grad", M.grad)

M.grad = None
S = M @ M.T + torch.eye(3)
evals, evecs = torch.linalg.eigh(S)
print("eigvals", evals)
top = evecs[:, -1]
loss = evals.sum() + (top.abs() ** 2 * torch.tensor([1.0, 2.0, 3.0])).sum()
loss.backward()
print("eigh grad", M.grad)

W = (torch.linspace(-1, 1, 12).reshape(4, 3) + torch.eye(4, 3)).requires_grad_()
U, Sv, Vh = torch.linalg.svd(W, full_matrices=False)
print("singular values", Sv)
nuclear = Sv.sum()
nuclear.backward()
print("nuclear grad", W.grad)
print("matrix_norm", torch.linalg.matrix_norm(W.detach(), ord="nuc").item(), torch.linalg.norm(W.detach()).item())
print("pinv", torch.linalg.pinv(W.detach()))
print("inv", torch.linalg.inv(S.detach()))
print("det", torch.linalg.det(S.detach()).item())
print("qr R", torch.linalg.qr(A.detach()).R.abs())
