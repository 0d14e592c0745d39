"""linalg.ldl_factor / ldl_factor_ex / ldl_solve (_ops/linalg_ldl.py): the NumPy port of
LAPACK's sytf2 against SciPy's sytrf (same pivots), solves, batches and errors.
(Against torch: tests/test_parity_surface.py.)"""
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops.linalg_ldl import sytf2

RNG = np.random.default_rng(0)


def _symmetric(n, complex_=False, small_diagonal=False):
    M = RNG.standard_normal((n, n)) + (1j * RNG.standard_normal((n, n)) if complex_ else 0)
    if small_diagonal:
        M[np.diag_indices(n)] *= 1e-3              # forces 2 x 2 pivots
    return M + M.T


@pytest.mark.parametrize("trial", range(20))
def test_fallback_makes_lapacks_pivot_choices(trial):
    lapack = pytest.importorskip("scipy.linalg").lapack
    A = _symmetric(1 + trial % 7, complex_=trial % 4 == 0, small_diagonal=trial % 2 == 0)
    ld, ipiv, info = sytf2(A)
    ref_ld, ref_ipiv, ref_info = lapack.get_lapack_funcs("sytrf", (A,))(A, lower=1)
    assert ipiv.tolist() == ref_ipiv.tolist() and info == ref_info
    np.testing.assert_allclose(ld, np.tril(ref_ld), atol=1e-12)


@pytest.mark.parametrize("without_scipy", [False, True])
def test_factor_then_solve(without_scipy, monkeypatch):
    if without_scipy:
        monkeypatch.setitem(sys.modules, "scipy", None)
        monkeypatch.setitem(sys.modules, "scipy.linalg", None)
    A = np.stack([_symmetric(5, small_diagonal=True), _symmetric(5)])
    B = RNG.standard_normal((2, 5, 3))
    LD, pivots, info = cr.linalg.ldl_factor_ex(cr.tensor(A))
    assert info.tolist() == [0, 0] and pivots.dtype == cr.int32
    assert np.all(np.triu(LD.numpy(), 1) == 0)
    X = cr.linalg.ldl_solve(LD, pivots, cr.tensor(B))
    np.testing.assert_allclose(A @ X.numpy(), B, atol=1e-10)


def test_singular_matrix_reports_info():
    LD, pivots, info = cr.linalg.ldl_factor_ex(cr.zeros(2, 2, dtype=cr.float64))
    assert info.item() == 1


def test_errors():
    with pytest.raises(RuntimeError, match="The input tensor A must have at least 2 dimensions"):
        cr.linalg.ldl_factor(cr.zeros(3))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are 2 by 3"):
        cr.linalg.ldl_factor(cr.zeros(2, 3))
