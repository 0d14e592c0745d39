"""Sparse embedding gradients over dense storage (Note [sparse gradients over dense
storage]): the COO view of ``.grad``, accumulation, and optimizers taking or refusing it."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F


def _weight():
    return cr.arange(10.0).reshape(5, 2).requires_grad_()


def test_the_gradient_reads_as_coalesced_coo_rows():
    w = _weight()
    F.embedding(cr.tensor([[4, 1], [4, 0]]), w, padding_idx=0, sparse=True).sum().backward()
    g = w.grad
    assert g.is_sparse and g.layout == cr.sparse_coo and g.is_coalesced()
    assert g.indices().tolist() == [[1, 4]] and g._indices().dtype == cr.int64
    assert g.values().tolist() == [[1.0, 1.0], [2.0, 2.0]] and g._nnz() == 2
    assert (g.sparse_dim(), g.dense_dim(), tuple(g.shape)) == (1, 1, (5, 2))
    dense = g.to_dense()
    assert not dense.is_sparse and dense.tolist()[4] == [2.0, 2.0]
    assert "layout=chainrule.sparse_coo" in repr(g) and "nnz=2" in repr(g)


def test_accumulation_keeps_the_sparse_view_and_adds_rows():
    w = _weight()
    for rows in ([1], [3]):
        F.embedding(cr.tensor(rows), w, sparse=True).sum().backward()
    assert w.grad.is_sparse and w.grad.indices().tolist() == [[1, 3]]
    bag = cr.nn.EmbeddingBag(5, 2, mode="sum", sparse=True)
    bag(cr.tensor([[0, 2]])).sum().backward()
    assert bag.weight.grad.is_sparse and bag.weight.grad.indices().tolist() == [[0, 2]]


def test_optimizers_without_sparse_support_refuse_it_sgd_takes_it():
    w = _weight()
    F.embedding(cr.tensor([2]), w, sparse=True).sum().backward()
    for opt, message in ((cr.optim.Adam([w]), "Adam does not support sparse gradients, please "
                                              "consider SparseAdam instead"),
                         (cr.optim.AdamW([w]), "Adam does not support sparse gradients"),
                         (cr.optim.RMSprop([w]), "RMSprop does not support sparse gradients")):
        with pytest.raises(RuntimeError, match=message):
            opt.step()
    before = w.detach().clone()
    cr.optim.SGD([w], lr=0.5).step()
    changed = (w.detach() != before).any(1).tolist()
    assert changed == [False, False, True, False, False]
    np.testing.assert_allclose(w.detach()[2].numpy(), [3.5, 4.5])
