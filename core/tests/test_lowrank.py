"""Randomized low-rank SVD and PCA (_ops/lowrank.py). (Against torch, with the same seed:
tests/test_parity_aten_surface.py.)"""
import numpy as np
import pytest

import chainrule as cr


def _low_rank(m, n, rank):
    cr.manual_seed(1)
    return cr.randn(m, rank, dtype=cr.float64) @ cr.randn(rank, n, dtype=cr.float64)


@pytest.mark.parametrize("shape", [(8, 5), (5, 8)])
def test_svd_lowrank_recovers_a_low_rank_matrix(shape):
    A = _low_rank(*shape, rank=2)
    U, S, V = cr.svd_lowrank(A, q=3)
    assert U.shape == (shape[0], 3) and V.shape == (shape[1], 3)
    np.testing.assert_allclose(((U * S) @ V.mT).numpy(), A.numpy(), atol=1e-10)
    np.testing.assert_allclose(S.numpy()[:2], np.linalg.svd(A.numpy())[1][:2])


def test_svd_lowrank_of_a_difference_and_its_gradient():
    A, M = _low_rank(6, 4, 2), cr.full((1, 4), 0.5, dtype=cr.float64)
    U, S, V = cr.svd_lowrank(A + M, q=2, M=M)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(A.numpy())[1][:2])

    def top_values(a):
        cr.manual_seed(0)                 # the same test matrix at every evaluation
        return cr.svd_lowrank(a, q=4, niter=3)[1]
    a = cr.randn(5, 4, dtype=cr.float64, requires_grad=True)
    assert cr.autograd.gradcheck(top_values, (a,))


def test_pca_lowrank_centres_and_checks_q():
    X = _low_rank(10, 3, 3) + 5.0
    U, S, V = cr.pca_lowrank(X, q=3)
    centred = X.numpy() - X.numpy().mean(0)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(centred)[1])
    with pytest.raises(ValueError, match=r"q\(=4\) must be non-negative integer"):
        cr.pca_lowrank(X, q=4)
    with pytest.raises(ValueError, match=r"niter\(=-1\)"):
        cr.pca_lowrank(X, niter=-1)


def test_lobpcg_eigenpairs_and_gradient():
    M = cr.randn(9, 9, dtype=cr.float64)
    A = (M @ M.mT).requires_grad_()
    E, X = cr.lobpcg(A, k=2)
    full = np.linalg.eigvalsh(A.detach().numpy())
    np.testing.assert_allclose(E.detach().numpy(), full[::-1][:2])
    np.testing.assert_allclose((A @ X - X * E).detach().numpy(), 0, atol=1e-9)
    E.sum().backward()
    expected = X.detach() @ X.detach().mT
    np.testing.assert_allclose(A.grad.numpy(), expected.numpy(), atol=1e-9)
    assert cr.lobpcg(A.detach(), k=2, largest=False)[0].tolist() == pytest.approx(full[:2])


def test_lobpcg_generalized_and_its_checks():
    A = cr.diag(cr.tensor([1.0, 4.0, 9.0, 16.0], dtype=cr.float64))
    B = cr.diag(cr.tensor([1.0, 2.0, 3.0, 4.0], dtype=cr.float64))
    E, X = cr.lobpcg(A, B=B, X=cr.ones(4, 1, dtype=cr.float64))
    assert E.tolist() == pytest.approx([4.0]) and (X.mT @ B @ X).item() == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"smaller than 3 x the number of requested eigenpairs "
                                         r"\(=2\)"):
        cr.lobpcg(A, k=2)
