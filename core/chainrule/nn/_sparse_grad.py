"""The gradients of ``embedding(..., sparse=True)`` and ``embedding_bag(..., sparse=True)``
as torch code reads them: ``weight.grad.is_sparse``, ``layout``, ``coalesce()``,
``indices()``/``values()``, ``_nnz()``, ``to_dense()``, and optimizers that take them.

Note [sparse gradients over dense storage]
    chainrule has no sparse tensors: the engine accumulates an embedding's gradient
    densely, as for any parameter. A post-accumulate hook, put on the weight by the
    first sparse lookup, then presents ``.grad`` as a SparseGrad: the same Tensor (its
    data dense, arithmetic on it dense) that answers the COO questions with its rows
    that hold a nonzero gradient (the rows the lookups touched, padding_idx excluded as
    in torch; a touched row whose gradient is exactly 0 is not listed). It is always
    coalesced: torch's uncoalesced duplicates (``_nnz()`` before ``coalesce()``) are not
    reproduced. Optimizers without sparse support refuse it with torch's error;
    SGD updates densely (the same numbers), SparseAdam updates the listed rows.
"""
import numpy as np

from .. import _layout
from .._tensor import Tensor


class SparseGrad(Tensor):
    """A dense-backed gradient that reads as a coalesced sparse COO tensor with one
    sparse dimension (Note [sparse gradients over dense storage]).

    >>> import chainrule as cr
    >>> emb = cr.nn.Embedding(4, 2, sparse=True)
    >>> emb(cr.tensor([3, 1, 3])).sum().backward()
    >>> g = emb.weight.grad
    >>> g.is_sparse, g.coalesce().indices().tolist(), g.coalesce().values().tolist()
    (True, [[1, 3]], [[1.0, 1.0], [2.0, 2.0]])
    """

    __slots__ = ()
    is_sparse = True
    layout = _layout.sparse_coo

    def _rows(self):
        data = np.asarray(self.detach().cpu()._data)
        return np.flatnonzero(data.reshape(data.shape[0], -1).any(1))

    def coalesce(self):
        return self

    def is_coalesced(self):
        return True

    def indices(self):
        return Tensor._wrap(self._rows()[None, :].astype(np.int64))

    def values(self):
        return Tensor._wrap(np.asarray(self.detach().cpu()._data)[self._rows()])

    _indices, _values = indices, values

    def _nnz(self):
        return int(self._rows().size)

    def sparse_dim(self):
        return 1

    def dense_dim(self):
        return self.dim() - 1

    def to_dense(self, dtype=None, *, masked_grad=None):
        dense = Tensor._wrap(self._data.copy())
        return dense if dtype is None else dense.to(dtype)

    def __repr__(self):
        return (f"tensor(indices={self.indices()!r},\n       values={self.values()!r},\n"
                f"       size={tuple(self.shape)}, nnz={self._nnz()}, layout={_layout.sparse_coo!r})")


def _present_as_sparse(weight):
    grad = weight._grad
    if grad is not None and type(grad) is Tensor:
        grad.__class__ = SparseGrad


def mark_sparse_gradient(weight):
    """Make ``weight.grad`` a SparseGrad after each accumulation (one hook per weight)."""
    from ..autograd.tensor_hooks import register_post_accumulate_hook
    if not weight.requires_grad or weight.grad_fn is not None:
        return
    extra = weight._extra
    if extra is not None and extra.post_acc_hooks and \
            _present_as_sparse in extra.post_acc_hooks.values():
        return
    register_post_accumulate_hook(weight, _present_as_sparse)


def refuse_sparse(params, name, hint=""):
    """torch's error of an optimizer without sparse support, for a sparse gradient."""
    for p in params:
        if p.grad is not None and p.grad.is_sparse:
            raise RuntimeError(f"{name} does not support sparse gradients{hint}")
