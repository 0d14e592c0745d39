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
