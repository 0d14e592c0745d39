"""householder_product / orgqr / ormqr / geqrf (_ops/linalg_householder.py): QR round
trips, both geqrf implementations, gradients (gradcheck, gradgradcheck), errors.
(Against torch: tests/test_parity_surface.py.)"""
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops.linalg_householder import _householder_qr

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("shape, complex_", [((5, 3), False), ((2, 4, 4), False), ((3, 2), True)])
def test_geqrf_and_householder_product_reconstruct_the_matrix(shape, complex_):
    A = RNG.standard_normal(shape) + (1j * RNG.standard_normal(shape) if complex_ else 0)
    a, tau = cr.geqrf(cr.tensor(A))
    Q = cr.linalg.householder_product(a, tau)
    n = shape[-1]
    R = a[..., :n, :].triu()
    np.testing.assert_allclose((Q @ R).numpy(), A, atol=1e-12)
    np.testing.assert_allclose((Q.mH @ Q).numpy(), np.broadcast_to(np.eye(n), Q.shape[:-2] + (n, n)),
                               atol=1e-12)
    assert cr.orgqr(a, tau).tolist() == Q.tolist()


def test_geqrf_without_scipy_is_lapacks(monkeypatch):
    A = RNG.standard_normal((6, 4))
    with_scipy = cr.geqrf(cr.tensor(A))
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.linalg", None)
    without = cr.geqrf(cr.tensor(A))
    np.testing.assert_allclose(without.a.numpy(), with_scipy.a.numpy(), atol=1e-13)
    np.testing.assert_allclose(without.tau.numpy(), with_scipy.tau.numpy(), atol=1e-13)
    a, tau = _householder_qr(np.array([[3.0], [4.0]]))
    assert a.tolist() == [[-5.0], [0.5]] and tau.tolist() == [1.6]


def test_ormqr_is_the_full_q_product():
    A = RNG.standard_normal((4, 2))
    a, tau = cr.geqrf(cr.tensor(A))
    full_q = cr.ormqr(a, tau, cr.eye(4, dtype=cr.float64))
    C = cr.tensor(RNG.standard_normal((4, 3)))
    D = cr.tensor(RNG.standard_normal((3, 4)))
    np.testing.assert_allclose(cr.ormqr(a, tau, C).numpy(), (full_q @ C).numpy(), atol=1e-13)
    np.testing.assert_allclose(cr.ormqr(a, tau, C, transpose=True).numpy(), (full_q.T @ C).numpy(),
                               atol=1e-13)
    np.testing.assert_allclose(cr.ormqr(a, tau, D, left=False).numpy(), (D @ full_q).numpy(),
                               atol=1e-13)
    np.testing.assert_allclose(cr.ormqr(a, tau, D, left=False, transpose=True).numpy(),
                               (D @ full_q.T).numpy(), atol=1e-13)


def test_gradients():
    A = cr.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    tau = cr.tensor(RNG.standard_normal(2), requires_grad=True)
    C = cr.tensor(RNG.standard_normal((4, 2)), requires_grad=True)
    assert cr.autograd.gradcheck(cr.linalg.householder_product, (A, tau))
    assert cr.autograd.gradgradcheck(cr.linalg.householder_product, (A, tau))
    assert cr.autograd.gradcheck(lambda a, t, c: cr.ormqr(a, t, c, transpose=True), (A, tau, C))


def test_errors():
    with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
        cr.linalg.householder_product(cr.zeros(3), cr.zeros(1))
    with pytest.raises(RuntimeError, match=r"input.shape\[-1\] must be greater than or equal to tau"):
        cr.linalg.householder_product(cr.zeros(3, 2), cr.zeros(3))
    with pytest.raises(RuntimeError, match="tau dtype Double does not match input dtype Float"):
        cr.linalg.householder_product(cr.zeros(3, 2), cr.zeros(1, dtype=cr.float64))
    with pytest.raises(RuntimeError, match="torch.geqrf: input must have at least 2 dimensions"):
        cr.geqrf(cr.zeros(3))
