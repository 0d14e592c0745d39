"""Samples for the linalg family (mm, bmm, mv, dot, outer, matmul, einsum).

Shapes cover the reference's matmul cases (1-D operands, batch broadcasting, size-1
and size-0 dims); every product has a complex sample. torch is imported lazily by the
parity calls, so this module loads without it.
"""
import importlib

import chainrule as cr

from . import Sample


class _Lazy:
    """A module imported on first attribute access (torch is optional)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


torch = _Lazy("torch")


def _products(op, fn, torch_fn, shape_pairs):
    samples = []
    for a, b in shape_pairs:
        for is_complex in (False, True):
            samples.append(Sample(op, lambda x, y: fn(x, y), a, b, complex=is_complex,
                                  torch_call=lambda x, y: torch_fn()(x, y),
                                  note="complex" if is_complex else ""))
    return samples


_MATMUL_CASES = [((3,), (3, 4)), ((2, 2, 3), (3, 4)), ((2, 2, 3), (3,)), ((2, 3), (2, 3, 4)),
                 ((3,), (2, 3, 4)), ((2, 2, 3), (2, 3, 4)), ((1, 2, 3), (2, 3, 4)),
                 ((2, 1, 2, 3), (3, 3, 2)), ((0, 2, 3), (3, 2)), ((2, 1, 3), (3,)),
                 ((2, 0, 3), (2, 3, 1))]

_EINSUM_CASES = [("ij,jk->ik", (2, 3), (3, 4)), ("ij,jk", (2, 3), (3, 2)),
                 ("bij,bjk->bik", (2, 2, 3), (2, 3, 2)), ("ii->i", (3, 3)), ("ii", (3, 3)),
                 ("ij->ji", (2, 3)), ("ij->", (2, 3)), ("i,j->ij", (3,), (2,)),
                 ("...ij,...jk->...ik", (2, 1, 2, 3), (3, 3, 2)), ("...i->", (2, 3)),
                 ("ij,ij->ij", (3, 1), (3, 2)), ("iij,jk->ik", (2, 2, 3), (3, 2)),
                 ("ij,jk,kl->il", (2, 3), (3, 2), (2, 2)), ("i,i,i->", (3,), (3,), (3,)),
                 ("ij,k->", (2, 3), (2,)), ("ij,jk->ik", (0, 3), (3, 2)),
                 # Note [einsum broadcast subscripts]: size 1 against size n, either way
                 ("ik,jk->ij", (3, 2), (3, 1)), ("ik,jk->ij", (3, 1), (3, 2)),
                 ("ij,j->i", (3, 1), (2,)), ("b...,b...->b", (2, 3), (2, 1)),
                 ("ij,kj->", (3, 1), (2, 4))]


def _einsum_samples():
    samples = []
    for equation, *shapes in _EINSUM_CASES:
        for is_complex in (False, True):
            samples.append(Sample("einsum", lambda *ops, e=equation: cr.einsum(e, *ops),
                                  *shapes, complex=is_complex,
                                  torch_call=lambda *ops, e=equation: torch.einsum(e, *ops),
                                  note=equation + (" complex" if is_complex else "")))
    return samples


SAMPLES = (
    _products("mm", cr.mm, lambda: torch.mm,
              [((2, 3), (3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((1, 1), (1, 1))])
    + _products("bmm", cr.bmm, lambda: torch.bmm,
                [((2, 2, 3), (2, 3, 4)), ((0, 2, 3), (0, 3, 1)), ((1, 1, 3), (1, 3, 1))])
    + _products("mv", cr.mv, lambda: torch.mv, [((2, 3), (3,)), ((0, 3), (3,)), ((2, 0), (0,))])
    + _products("dot", cr.dot, lambda: torch.dot, [((3,), (3,)), ((0,), (0,)), ((1,), (1,))])
    + _products("outer", cr.outer, lambda: torch.outer, [((3,), (2,)), ((0,), (2,)),
                                                          ((1,), (1,))])
    + _products("matmul", cr.matmul, lambda: torch.matmul, _MATMUL_CASES)
    + _products("mm", lambda x, y: x @ y, lambda: (lambda x, y: x @ y), [((2, 3), (3, 2))])
    + _einsum_samples()
)


# --- chainrule.linalg: decompositions, inverses, solvers --------------------------------
# Inputs are random uniform matrices; each call makes them well-conditioned where the op
# needs it (a diagonal shift for inverses and solves, A A^H + nI for Cholesky, A + A^H
# for eigh) and reads decomposition outputs through functions that do not depend on the
# vectors' signs or phases (Note [gauge of singular and eigen vectors] in _ops/linalg.py).
def _lib(x):
    return cr if isinstance(x, cr.Tensor) else torch


def _shifted(a, by=4.0):
    """a + by * I: far from singular for entries in (-2, 2)."""
    return a + _lib(a).eye(a.shape[-1], dtype=a.dtype, device=a.device) * by


def _spd(a):
    return a @ a.mH + _lib(a).eye(a.shape[-1], dtype=a.dtype, device=a.device) * a.shape[-1]


def _hermitian(a):
    return a + a.mH


def _abs2(z):
    """|z|^2 elementwise: invariant under a vector's sign or phase."""
    return (z * z.conj()).real if z.is_complex() else z * z


def _both(op, fn, *shapes, note="", real_only=False, **kwargs):
    """Real and complex samples of ``fn(lib, *inputs)``, on chainrule and on torch."""
    out = []
    for is_complex in ((False,) if real_only else (False, True)):
        out.append(Sample(op, lambda *xs: fn(cr, *xs), *shapes, complex=is_complex,
                          torch_call=lambda *xs: fn(torch, *xs),
                          note=note + (" complex" if is_complex else ""), **kwargs))
    return out


def _svd_invariants(L, a, full):
    u, s, vh = L.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    return s, _abs2(u[..., :k]), _abs2(vh[..., :k, :]), u[..., :k] @ vh[..., :k, :]


def _eigh_invariants(L, a, uplo):
    w, v = L.linalg.eigh(_hermitian(a), UPLO=uplo)
    return w, _abs2(v)


def _eig_invariants(L, a):
    w, v = L.linalg.eig(a)
    return w, _abs2(v)


def _qr_parts(L, a, mode):
    q, r = L.linalg.qr(a, mode=mode)
    return q, r


def _lstsq_parts(L, a, b, driver):
    r = L.linalg.lstsq(a, b, driver=driver)
    return r.solution, r.residuals


LINALG_SAMPLES = (
    _both("linalg_det", lambda L, a: L.linalg.det(a), (3, 3))
    + _both("linalg_det", lambda L, a: L.linalg.det(a), (2, 3, 3), note="batched")
    + _both("linalg_slogdet", lambda L, a: tuple(L.linalg.slogdet(_shifted(a))), (2, 3, 3))
    + _both("linalg_inv", lambda L, a: L.linalg.inv(_shifted(a)), (2, 3, 3))
    + _both("linalg_solve", lambda L, a, b: L.linalg.solve(_shifted(a), b), (2, 3, 3), (3, 2))
    + _both("linalg_solve", lambda L, a, b: L.linalg.solve(_shifted(a), b, left=False),
            (3, 3), (2, 3), note="left=False")
    + _both("linalg_solve", lambda L, a, b: L.linalg.solve(_shifted(a), b), (2, 3, 3), (2, 3),
            note="vector")
    + _both("linalg_solve_triangular", lambda L, a, b: L.linalg.solve_triangular(
        _shifted(a), b, upper=True), (2, 3, 3), (3, 2))
    + _both("linalg_solve_triangular", lambda L, a, b: L.linalg.solve_triangular(
        a, b, upper=False, unitriangular=True, left=False), (3, 3), (2, 3), note="unit right")
    + _both("_cdist_forward", lambda L, a, b: L.cdist(a, b), (2, 4, 3), (5, 3), real_only=True)
    + _both("_cdist_forward", lambda L, a, b: L.cdist(a, b, p=1.0), (4, 3), (2, 5, 3),
            note="p=1", real_only=True)
    + _both("_cdist_forward", lambda L, a, b: L.cdist(a, b, p=3.0), (4, 3), (5, 3), note="p=3",
            real_only=True)
    + _both("_cdist_forward", lambda L, a, b: L.cdist(a, b, p=float("inf")), (4, 3), (5, 3),
            note="p=inf", real_only=True)
    + _both("_euclidean_dist", lambda L, a, b: L.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
            (4, 3), (5, 3), real_only=True)
    + _both("_euclidean_dist", lambda L, a, b: L.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
            (2, 1, 4, 3), (3, 5, 3), note="batched", real_only=True)
    + _both("cholesky_solve", lambda L, b, a: L.cholesky_solve(b, _shifted(a).tril()), (2, 3, 2),
            (3, 3))
    + _both("cholesky_solve", lambda L, b, a: L.cholesky_solve(b, _shifted(a).triu(), upper=True),
            (3, 1), (2, 3, 3), note="upper")
    # a factor with a real diagonal: LAPACK's inverse reads only its real part
    + _both("cholesky_inverse", lambda L, a: L.cholesky_inverse(L.linalg.cholesky(_spd(a))),
            (2, 3, 3))
    + _both("cholesky_inverse", lambda L, a: L.cholesky_inverse(
        L.linalg.cholesky(_spd(a), upper=True), upper=True), (3, 3), note="upper")
    + _both("linalg_cholesky", lambda L, a: L.linalg.cholesky(_spd(a)), (2, 3, 3))
    + _both("linalg_cholesky", lambda L, a: L.linalg.cholesky(_spd(a), upper=True), (3, 3),
            note="upper")
    + _both("linalg_qr", lambda L, a: _qr_parts(L, a, "reduced"), (4, 3))
    + _both("linalg_qr", lambda L, a: _qr_parts(L, a, "reduced"), (2, 3, 5), note="wide")
    + _both("linalg_qr", lambda L, a: _qr_parts(L, a, "complete"), (3, 3), note="complete")
    + _both("linalg_svd", lambda L, a: _svd_invariants(L, a, False), (4, 3))
    + _both("linalg_svd", lambda L, a: _svd_invariants(L, a, True), (2, 3, 5), note="full")
    + _both("linalg_svd", lambda L, a: L.linalg.svdvals(a), (3, 3), note="svdvals")
    + _both("linalg_eigh", lambda L, a: _eigh_invariants(L, a, "L"), (2, 3, 3))
    + _both("linalg_eigh", lambda L, a: _eigh_invariants(L, a, "U"), (3, 3), note="U")
    + _both("linalg_eig", lambda L, a: _eig_invariants(L, a), (3, 3), real_only=True)
    + _both("linalg_eig", lambda L, a: L.linalg.eigvals(a), (2, 3, 3), note="eigvals")
    + _both("linalg_matrix_exp", lambda L, a: L.linalg.matrix_exp(a), (2, 3, 3))
    + _both("linalg_pinv", lambda L, a: L.linalg.pinv(a), (4, 3))
    + _both("linalg_pinv", lambda L, a: L.linalg.pinv(_hermitian(a), hermitian=True), (3, 3),
            note="hermitian")
    + _both("linalg_lstsq", lambda L, a, b: _lstsq_parts(L, a, b, "gelsd"), (2, 5, 3), (1, 5, 2))
    + _both("linalg_lstsq", lambda L, a, b: L.linalg.lstsq(a, b).solution, (2, 4), (2,),
            note="underdetermined vector")
    + _both("linalg_lu", lambda L, a: tuple(L.linalg.lu(a)), (2, 3, 3))
    + _both("linalg_lu", lambda L, a: tuple(L.linalg.lu(a)), (3, 5), note="wide")
    + _both("linalg_lu", lambda L, a: tuple(L.linalg.lu(a)), (2, 5, 3), note="tall")
    + _both("linalg_lu", lambda L, a: tuple(L.linalg.lu_factor(a)), (3, 3), note="lu_factor")
    + _both("linalg_cross", lambda L, a, b: L.linalg.cross(a, b), (2, 3), (1, 3))
    + _both("linalg_cross", lambda L, a, b: L.cross(a, b, dim=0), (3, 2), (3, 2),
            note="dim=0")
)
SAMPLES = SAMPLES + LINALG_SAMPLES
