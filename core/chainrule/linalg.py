"""``chainrule.linalg``: linear algebra with backward and forward rules, torch.linalg's
names and signatures (det, slogdet, inv, solve, lstsq, cholesky, qr, svd, eigh, eig,
pinv, norms, matrix_exp, ...). Batched over leading dims; float and complex.

>>> import chainrule as cr
>>> A = cr.tensor([[2., 1.], [1., 3.]], requires_grad=True)
>>> cr.linalg.det(A).backward()
>>> A.grad.tolist()
[[3.0, -1.0], [-1.0, 2.0]]
"""
from ._ops.linalg_functions import LINALG as _LINALG

globals().update(_LINALG)
__all__ = sorted(_LINALG)
