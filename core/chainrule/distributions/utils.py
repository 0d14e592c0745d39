"""Helpers shared by the distributions, under the reference's names
(``torch.distributions.utils``): broadcast_all, probs/logits conversions, clamp_probs,
lazy_property, euler_constant, and the triangular-matrix packing helpers."""
import numpy as np

from .. import _factories
from .._ops import FUNCTIONS
from .discrete import _clamp_probs, logits_to_probs, probs_to_logits  # noqa: F401
from .distribution import broadcast_all, lazy_property  # noqa: F401

euler_constant = 0.57721566490153286060


def clamp_probs(probs):
    """``probs`` clamped into ``[eps, 1 - eps]`` of its dtype.

    >>> import chainrule as cr
    >>> from chainrule.distributions.utils import *
    >>> clamp_probs(cr.tensor([0.0, 1.0])).tolist()[0] > 0
    True
    """
    return _clamp_probs(probs)


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dimensions (as it is for dim 0)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.ndim - dim]) + (-1,)).sum(-1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (below diagonal ``diag``) of the last two dimensions, row by
    row, as a vector.

    >>> import chainrule as cr
    >>> from chainrule.distributions.utils import *
    >>> tril_matrix_to_vec(cr.tensor([[1.0, 0.0], [2.0, 3.0]])).tolist()
    [1.0, 2.0, 3.0]
    """
    n = mat.shape[-1]
    rows, cols = np.tril_indices(n, k=diag)
    return mat[..., _factories.tensor(rows, device=mat.device),
               _factories.tensor(cols, device=mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: a lower-triangular matrix from its packed
    entries.

    >>> import chainrule as cr
    >>> from chainrule.distributions.utils import *
    >>> vec_to_tril_matrix(cr.tensor([1.0, 2.0, 3.0])).tolist()
    [[1.0, 0.0], [2.0, 3.0]]
    """
    m = vec.shape[-1]
    n = next((n for n in range(m + 2) if len(np.tril_indices(n, k=diag)[0]) >= m), m)
    if len(np.tril_indices(n, k=diag)[0]) != m:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    rows, cols = np.tril_indices(n, k=diag)
    flat_index = _factories.tensor(rows * n + cols, device=vec.device)
    out = _factories.zeros(tuple(vec.shape[:-1]) + (n * n,), dtype=vec.dtype, device=vec.device)
    index = flat_index.expand(tuple(vec.shape[:-1]) + (m,))
    return FUNCTIONS["scatter"](out, -1, index, vec).reshape(tuple(vec.shape[:-1]) + (n, n))
