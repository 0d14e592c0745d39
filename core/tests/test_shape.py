"""Shape ops and indexing: values against NumPy, views vs copies, errors with the
reference's wording, gradients (duplicates in advanced indexing accumulate), the JVP
of every shape-family op against finite differences (both formula namespaces), and a
torch-parity tier (values, gradients, grad_fn names, error messages)."""
import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import ARRAY_NS, TENSOR_NS, indexing, shape
from chainrule._ops._registry import NONDIFF, NOT_IMPLEMENTED, OPS
from samples import shape as shape_samples
from samples._inputs import make_inputs


def _t(values, **kw):
    return cr.tensor(values, dtype=kw.pop("dtype", cr.float64), **kw)


def _arange(*shape, **kw):
    return cr.tensor(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape), **kw)


def _grad(fn, x, g=None):
    """x.grad of sum(g * fn(x)) for a fresh leaf copy of x."""
    x = x.detach().clone().requires_grad_()
    out = fn(x)
    (out * (1 if g is None else g)).sum().backward()
    return x.grad.numpy()


# --- views: values, memory, metadata -------------------------------------------------
VIEWS = [
    ("view", lambda x: x.view(4, 3), lambda a: a.reshape(4, 3)),
    ("reshape", lambda x: x.reshape(-1), lambda a: a.reshape(-1)),
    ("flatten", lambda x: x.flatten(), lambda a: a.reshape(-1)),
    ("unflatten", lambda x: x.unflatten(1, (2, 2)), lambda a: a.reshape(3, 2, 2)),
    ("expand", lambda x: x[:, :1].expand(3, 5), lambda a: np.broadcast_to(a[:, :1], (3, 5))),
    ("permute", lambda x: x.permute(1, 0), lambda a: a.T),
    ("transpose", lambda x: x.transpose(0, 1), lambda a: a.T),
    ("t", lambda x: x.t(), lambda a: a.T),
    ("T", lambda x: x.T, lambda a: a.T),
    ("mT", lambda x: x.mT, lambda a: a.T),
    ("unsqueeze", lambda x: x.unsqueeze(1), lambda a: a[:, None]),
    ("squeeze", lambda x: x.unsqueeze(0).squeeze(0), lambda a: a),
    ("select", lambda x: x.select(1, 2), lambda a: a[:, 2]),
    ("narrow", lambda x: x.narrow(1, 1, 2), lambda a: a[:, 1:3]),
    ("getitem-int", lambda x: x[1], lambda a: a[1]),
    ("getitem-slice", lambda x: x[::2, 1:], lambda a: a[::2, 1:]),
    ("getitem-none", lambda x: x[None, ..., None], lambda a: a[None, ..., None]),
    ("getitem-ellipsis", lambda x: x[...], lambda a: a),
    ("diagonal", lambda x: x.diagonal(1), lambda a: np.diagonal(a, 1)),
    ("split", lambda x: x.split(2)[1], lambda a: a[2:]),
    ("chunk", lambda x: x.chunk(2, 1)[0], lambda a: a[:, :2]),
    ("unbind", lambda x: x.unbind(1)[3], lambda a: a[:, 3]),
    ("broadcast_to", lambda x: cr.broadcast_to(x[0], (2, 4)), lambda a: np.broadcast_to(a[0], (2, 4))),
    ("movedim", lambda x: x.movedim(0, 1), lambda a: a.T),
    ("unfold", lambda x: x.unfold(1, 2, 1), lambda a: np.lib.stride_tricks.sliding_window_view(
        a, 2, axis=1)),
    ("unfold-of-view", lambda x: x[1:].unfold(0, 1, 1),
     lambda a: a[1:, None, :].transpose(0, 2, 1)),
    ("as_strided", lambda x: x.as_strided((2, 2), (1, 4), 1), lambda a: a[:2, 1:3].T),
    ("as_strided-of-view", lambda x: x[1].as_strided((2,), (4,)), lambda a: a[1:, 0]),
    ("tensor_split", lambda x: x.tensor_split([1, 3], 1)[1], lambda a: a[:, 1:3]),
    ("hsplit", lambda x: x.hsplit(2)[1], lambda a: a[:, 2:]),
    ("meshgrid", lambda x: cr.meshgrid(x[0], x[1, :2], indexing="xy")[1],
     lambda a: np.meshgrid(a[0], a[1, :2])[1]),
    ("broadcast_tensors", lambda x: cr.broadcast_tensors(x[:1], x)[0],
     lambda a: np.broadcast_to(a[:1], (3, 4))),
    ("atleast_3d", lambda x: cr.atleast_3d(x), lambda a: a[:, :, None]),
    ("view_as_real", lambda x: cr.view_as_real(cr.view_as_complex(x.view(3, 2, 2))),
     lambda a: a.reshape(3, 2, 2)),
    ("view_as_complex", lambda x: cr.view_as_complex(x.view(3, 2, 2)),
     lambda a: a.view(np.complex128)),
]


@pytest.mark.parametrize("name,fn,ref", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_share_memory_version_and_base(name, fn, ref):
    x = _arange(3, 4)
    v = fn(x)
    np.testing.assert_array_equal(v.numpy(), ref(x.numpy()))
    assert np.shares_memory(v.numpy(), x.numpy()) or v.numel() == 0
    assert v._base is x
    x.add_(1)
    assert v._version == x._version == 1
    np.testing.assert_array_equal(v.numpy(), ref(x.numpy()))


def test_view_of_view_has_the_root_as_base():
    x = _arange(3, 4)
    v = x.t()[1][::2]
    assert v._base is x
    v.mul_(10)
    assert x._version == v._version == 1
    np.testing.assert_array_equal(x.numpy()[::2, 1], [10, 90])


@pytest.mark.parametrize("name,fn", [
    ("reshape-noncontiguous", lambda x: x.t().reshape(-1)),
    ("flatten-noncontiguous", lambda x: x.t().flatten()),
    ("contiguous", lambda x: x.t().contiguous()),
    ("index", lambda x: x[[0, 2]]),
    ("index_select", lambda x: x.index_select(0, cr.tensor([1]))),
    ("gather", lambda x: x.gather(0, cr.tensor([[1, 0]]))),
    ("flip", lambda x: x.flip(0)),
    ("roll", lambda x: x.roll(1)),
    ("repeat", lambda x: x.repeat(1, 1)),
    ("cat", lambda x: cr.cat([x])),
    ("stack", lambda x: cr.stack([x])),
    ("masked_fill", lambda x: x.masked_fill(x > 100, 0.)),
    ("diag", lambda x: cr.diag(x)),
])
def test_copies_do_not_share_memory(name, fn):
    x = _arange(3, 4)
    out = fn(x)
    assert out._base is None
    assert not np.shares_memory(out.numpy(), x.numpy())


def test_reshape_is_a_view_when_possible_else_a_copy():
    x = _arange(3, 4, requires_grad=True)
    assert x.reshape(2, 6).grad_fn.name() == "ViewBackward0"
    r = x.t().reshape(-1)
    assert r.grad_fn.name() == "UnsafeViewBackward0"
    assert r.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    np.testing.assert_array_equal(r.detach().numpy(), x.detach().numpy().T.reshape(-1))


def test_view_refuses_incompatible_layouts():
    x = _arange(3, 4)
    with pytest.raises(RuntimeError, match=r"view size is not compatible with input tensor's "
                                           r"size and stride \(at least one dimension spans "
                                           r"across two contiguous subspaces\)\. Use "
                                           r"\.reshape\(\.\.\.\) instead\."):
        x.t().view(12)
    assert x.t().view(4, 3).shape == (4, 3)          # splitting/keeping dims is fine
    with pytest.raises(RuntimeError, match=r"shape '\[5\]' is invalid for input of size 12"):
        x.view(5)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)


def test_contiguous_returns_self_when_already_contiguous():
    x = _arange(3, 4, requires_grad=True)
    assert x.contiguous() is x
    c = x.t().contiguous()
    assert c.is_contiguous() and c.grad_fn.name() == "CloneBackward0"
    assert c.stride() == (3, 1)


def test_strides_in_elements_and_contiguity():
    x = _arange(3, 4)
    assert x.stride() == (4, 1) and x.is_contiguous()
    assert x.t().stride() == (1, 4) and not x.t().is_contiguous()
    assert x[:, ::2].stride() == (4, 2) and not x[:, ::2].is_contiguous()
    assert x[1].stride() == (1,) and x[1].is_contiguous()
    assert x[:, 1].stride() == (4,) and not x[:, 1].is_contiguous()
    assert x[:1].expand(5, 4).stride() == (0, 1)
    assert x.diagonal().stride() == (5,)
    assert x[1:].storage_offset() == 4
    assert x.t()[2].storage_offset() == 2


# --- reshapes, joins, splits: values and errors ---------------------------------------------
def test_flatten_unflatten():
    x = _arange(2, 3, 4)
    assert x.flatten().shape == (24,)
    assert x.flatten(1).shape == (2, 12)
    assert x.flatten(0, 1).shape == (6, 4)
    assert x.flatten(1, 1) is x
    assert cr.tensor(3.0).flatten().shape == (1,)
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        x.flatten(2, 1)
    assert x.unflatten(2, (2, -1)).shape == (2, 3, 2, 2)
    with pytest.raises(RuntimeError, match=r"unflatten: Provided sizes \[3, 2\] don't multiply "
                                           r"up to the size of dim 2 \(4\) in the input tensor"):
        x.unflatten(-1, (3, 2))


def test_expand_and_broadcast_to():
    x = _t([[1.0], [2.0]])
    np.testing.assert_array_equal(x.expand(2, 3).numpy(), [[1, 1, 1], [2, 2, 2]])
    assert x.expand(4, -1, 2).shape == (4, 2, 2)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(3\) must match "
                                           r"the existing size \(2\) at non-singleton dimension "
                                           r"0\.  Target sizes: \[3, 2\]\.  Tensor sizes: \[2, 1\]"):
        x.expand(3, 2)
    with pytest.raises(RuntimeError, match=r"expand\(torch.DoubleTensor\{\[2, 1\]\}, size=\[4\]\)"
                                           r": the number of sizes provided \(1\) must be "
                                           r"greater or equal"):
        x.expand(4)
    with pytest.raises(RuntimeError, match="isn't allowed in a leading, non-existing dimension 0"):
        x.expand(-1, 2, 1)
    assert cr.broadcast_to(x, (3, 2, 5)).shape == (3, 2, 5)


def test_permute_transpose_t_errors():
    x = _arange(2, 3, 4)
    with pytest.raises(RuntimeError, match="duplicate dims are not allowed"):
        x.permute(0, 1, 1)
    with pytest.raises(RuntimeError, match=r"input.dim\(\) = 3 is not equal to len\(dims\) = 2"):
        x.permute(0, 1)
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, but "
                                           r"self is 3D"):
        x.t()
    with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches "
                                           "of matrices. Got 1-D tensor."):
        _arange(3).mT
    assert _arange(3).t().shape == (3,)
    assert x.mT.shape == (2, 4, 3)
    z = cr.tensor([[1 + 2j, 3j]])
    np.testing.assert_array_equal(z.mH.numpy(), np.conj(z.numpy()).T)
    np.testing.assert_array_equal(z.H.numpy(), np.conj(z.numpy()).T)


def test_squeeze_forms_and_names():
    x = _arange(1, 3, 1, requires_grad=True)
    assert x.squeeze().shape == (3,) and x.squeeze().grad_fn.name() == "SqueezeBackward0"
    assert x.squeeze(0).shape == (3, 1) and x.squeeze(0).grad_fn.name() == "SqueezeBackward1"
    assert x.squeeze(1).shape == (1, 3, 1)
    assert x.squeeze((0, 2)).shape == (3,)
    assert x.squeeze((0, 2)).grad_fn.name() == "SqueezeBackward2"


def test_cat_values_promotion_and_skipped_empty():
    a, b = _arange(2, 3), cr.ones(1, 3, dtype=cr.int64)
    out = cr.cat([a, b])
    assert out.dtype == cr.float64 and out.shape == (3, 3)
    np.testing.assert_array_equal(out.numpy()[2], [1, 1, 1])
    assert cr.cat([cr.ones(2, 3, dtype=cr.int32), cr.ones(2, 3)]).dtype == cr.float32
    assert cr.cat([cr.zeros(0), a, cr.zeros(0)], 1).shape == (2, 3)
    assert cr.cat([cr.zeros(0), cr.zeros(0)]).shape == (0,)
    assert cr.cat((a, a), dim=-1).shape == (2, 6)
    assert cr.concat([a, a]).shape == cr.concatenate([a, a]).shape == (4, 3)


def test_cat_errors():
    with pytest.raises(RuntimeError, match=r"Sizes of tensors must match except in dimension 0\. "
                                           r"Expected size 3 but got size 4 for tensor number 1 "
                                           r"in the list\."):
        cr.cat([cr.ones(2, 3), cr.ones(2, 4)])
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions: got 2 "
                                           "and 1"):
        cr.cat([cr.ones(2, 3), cr.ones(3)])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 1\) cannot be "
                                           r"concatenated"):
        cr.cat([cr.ones(1), cr.tensor(1.0)])
    with pytest.raises(ValueError, match="expected a non-empty list of Tensors"):
        cr.cat([])
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        cr.cat([cr.ones(1), 1])
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        cr.cat(cr.ones(2))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)"):
        cr.cat([cr.ones(2, 3)], dim=2)


def test_cat_gradient_goes_to_each_input_and_skipped_ones():
    a, b = _arange(2, 3, requires_grad=True), _arange(1, 3, requires_grad=True)
    e = cr.zeros(0, dtype=cr.float64, requires_grad=True)
    out = cr.cat([a, e, b])
    assert out.grad_fn.name() == "CatBackward0"
    assert len(out.grad_fn.next_functions) == 3
    (out * _arange(3, 3)).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(b.grad.numpy(), [[6, 7, 8]])
    assert e.grad.shape == (0,)


def test_stack_values_and_errors():
    a, b = _arange(2, 3), _arange(2, 3) + 10
    np.testing.assert_array_equal(cr.stack([a, b], 1).numpy(), np.stack([a.numpy(), b.numpy()], 1))
    assert cr.stack([a, b], -1).shape == (2, 3, 2)
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got "
                                           r"\[2, 3\] at entry 0 and \[3, 3\] at entry 1"):
        cr.stack([a, cr.ones(3, 3)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        cr.stack([a, b], 3)


def test_out_argument():
    out = cr.empty(0)
    r = cr.cat([cr.ones(2), cr.zeros(1)], out=out)
    assert r is out and out.tolist() == [1.0, 1.0, 0.0] and out._version == 1
    with pytest.raises(RuntimeError, match=r"cat\(\): functions with out=\.\.\. arguments don't "
                                           r"support automatic differentiation"):
        cr.cat([cr.ones(2, requires_grad=True)], out=cr.empty(2))
    out = cr.zeros(2)
    cr.index_select(cr.tensor([5.0, 6.0, 7.0]), 0, cr.tensor([2, 0]), out=out)
    assert out.tolist() == [7.0, 5.0]


def test_split_chunk_unbind():
    x = _arange(5, 2)
    assert [p.shape[0] for p in x.split(2)] == [2, 2, 1]
    assert [p.shape[0] for p in x.split([1, 4])] == [1, 4]
    assert [p.shape[0] for p in cr.split(x, 5)] == [5]
    assert [p.shape[0] for p in x.chunk(3)] == [2, 2, 1]
    assert [p.shape[0] for p in _arange(6).chunk(4)] == [2, 2, 2]
    assert [p.shape[0] for p in cr.zeros(0).chunk(3)] == [0, 0, 0]
    assert [p.shape[0] for p in cr.zeros(0).split(2)] == [0]
    assert isinstance(x.split(2), tuple) and isinstance(x.unbind(), tuple)
    np.testing.assert_array_equal(x.unbind(1)[1].numpy(), x.numpy()[:, 1])
    with pytest.raises(RuntimeError, match="split_size can only be 0 if dimension size is 0, but "
                                           "got dimension size of 5"):
        x.split(0)
    with pytest.raises(RuntimeError, match=r"split_with_sizes expects split_sizes to sum exactly "
                                           r"to 5 \(input tensor's size at dimension 0\), but got "
                                           r"split_sizes=\[2, 2\]"):
        x.split([2, 2])
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0, got: 0"):
        x.chunk(0)


def test_split_names_and_gradient_of_unused_pieces():
    x = _arange(5, 2, requires_grad=True)
    pieces = x.split(2)
    assert {p.grad_fn.name() for p in pieces} == {"SplitBackward0"}
    assert x.split([1, 4])[0].grad_fn.name() == "SplitWithSizesBackward0"
    assert x.unbind()[0].grad_fn.name() == "UnbindBackward0"
    assert pieces[0].grad_fn is pieces[2].grad_fn
    assert [p._output_nr for p in pieces] == [0, 1, 2]
    (pieces[1] * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0], [0, 0], [3, 3], [3, 3], [0, 0]])


def test_flip_roll_repeat_tile():
    x = _arange(2, 3)
    a = x.numpy()
    np.testing.assert_array_equal(x.flip(0, 1).numpy(), a[::-1, ::-1])
    np.testing.assert_array_equal(cr.flip(x, [1]).numpy(), a[:, ::-1])
    np.testing.assert_array_equal(x.roll(1).numpy(), np.roll(a, 1))
    np.testing.assert_array_equal(x.roll((1, -1), (0, 1)).numpy(), np.roll(a, (1, -1), (0, 1)))
    np.testing.assert_array_equal(x.repeat(2, 1, 2).numpy(), np.tile(a, (2, 1, 2)))
    np.testing.assert_array_equal(x.tile((2,)).numpy(), np.tile(a, 2))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.flip(0, 0)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 2, dims:1"):
        x.roll((1, 2), 0)
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be "
                                           "smaller than number of dimensions of tensor"):
        x.repeat(2)


def test_repeat_gradient_sums_the_copies():
    np.testing.assert_array_equal(_grad(lambda x: x.repeat(3, 2), _arange(2)), [6.0, 6.0])


def test_diagonal_diag_diag_embed():
    x = _arange(3, 4)
    np.testing.assert_array_equal(x.diagonal(-1).numpy(), np.diagonal(x.numpy(), -1))
    np.testing.assert_array_equal(_arange(2, 3, 4).diagonal(1, 0, 2).numpy(),
                                  np.diagonal(_arange(2, 3, 4).numpy(), 1, 0, 2))
    assert x.diagonal(7).shape == (0,)
    np.testing.assert_array_equal(cr.diag(x, 1).numpy(), np.diag(x.numpy(), 1))
    np.testing.assert_array_equal(cr.diag(_t([1.0, 2.0]), -1).numpy(), np.diag([1.0, 2.0], -1))
    e = cr.diag_embed(_arange(2, 3), 1)
    assert e.shape == (2, 4, 4)
    np.testing.assert_array_equal(e.numpy()[1], np.diag([3.0, 4.0, 5.0], 1))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, 1"):
        x.diagonal(0, 1, 1)
    with pytest.raises(RuntimeError, match=r"diag\(\): Supports 1D or 2D tensors. Got 3D"):
        cr.diag(cr.zeros(2, 2, 2))
    x.diagonal().fill_(-1)                    # a writable view
    assert x.numpy()[2, 2] == -1


# --- indexing ---------------------------------------------------------------------------------
GETITEM = [
    ("int", lambda x: x[1]), ("neg-int", lambda x: x[-1, -2]), ("slice", lambda x: x[1:3]),
    ("step", lambda x: x[::2, 1::2]), ("clamped", lambda x: x[-10:10]),
    ("empty", lambda x: x[3:1]), ("none", lambda x: x[:, None, 1]),
    ("ellipsis", lambda x: x[..., 1]), ("list", lambda x: x[[2, 0, 2]]),
    ("lists", lambda x: x[[0, 1], [1, 3]]), ("ndarray", lambda x: x[np.array([1, 1])]),
    ("mask", lambda x: x[x > 5]), ("row-mask", lambda x: x[np.array([True, False, True])]),
    ("int-and-array", lambda x: x[1, [0, 0]]), ("slice-and-array", lambda x: x[1:, [3, 0]]),
    ("array-none", lambda x: x[None, [1, 0]]), ("2d-array", lambda x: x[np.array([[0, 1]])]),
    ("true", lambda x: x[True]), ("false", lambda x: x[False]), ("empty-list", lambda x: x[[]]),
]


@pytest.mark.parametrize("name,fn", GETITEM, ids=[g[0] for g in GETITEM])
def test_getitem_values_match_numpy(name, fn):
    x = _arange(3, 4)
    a = x.numpy()
    expected = fn(a) if name != "mask" else a[a > 5]
    np.testing.assert_array_equal(fn(x).numpy(), expected)


def test_getitem_torch_placement_of_ints_among_arrays():
    # Like the reference (and unlike NumPy), an int is applied first as a select, so
    # the advanced index stays in place: x[0, :, [1, 2]] has shape (4, 2).
    x = _arange(3, 4, 5)
    out = x[0, :, [1, 2]]
    assert out.shape == (4, 2)
    np.testing.assert_array_equal(out.numpy(), x.numpy()[0][:, [1, 2]])


def test_getitem_index_tensors():
    x = _arange(3, 4)
    np.testing.assert_array_equal(x[cr.tensor([2, 0])].numpy(), x.numpy()[[2, 0]])
    np.testing.assert_array_equal(x[cr.tensor([True, False, True])].numpy(), x.numpy()[[0, 2]])
    np.testing.assert_array_equal(x[cr.tensor([1, 0, 1], dtype=cr.uint8)].numpy(),
                                  x.numpy()[[0, 2]])
    assert x[cr.tensor(1)].shape == (4,)                   # 0-d integer tensor: a select
    assert x[cr.tensor(True)].shape == (1, 3, 4)


def test_indexing_with_a_range_is_indexing_with_its_list():
    # issue 9, wrong today 7: a Python range is a sequence index, like the reference's
    x = _arange(3, 4, requires_grad=True)
    for key, as_list in [(range(1, 3), [1, 2]), ((range(2), 0), ([0, 1], 0)),
                         ((slice(None), range(0, 4, 2)), (slice(None), [0, 2])),
                         ((range(2), range(1, 3)), ([0, 1], [1, 2])), (range(0), [])]:
        out = x[key]
        np.testing.assert_array_equal(out.detach().numpy(), x[as_list].detach().numpy())
        assert out.grad_fn.name() == "IndexBackward0" and not out._is_view()
    (x[range(1, 3), range(0, 4, 3)] * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 2]])
    y = cr.zeros(5)
    y[range(1, 3)] = 7.0
    assert y.tolist() == [0.0, 7.0, 7.0, 0.0, 0.0]


def test_getitem_grad_fn_names_and_views():
    x = _arange(3, 4, requires_grad=True)
    assert x[0].grad_fn.name() == "SelectBackward0"
    assert x[0:2].grad_fn.name() == "SliceBackward0"
    assert x[:].grad_fn.name() == "SliceBackward0"
    assert x[None].grad_fn.name() == "UnsqueezeBackward0"
    assert x[...].grad_fn.name() == "AliasBackward0"
    assert x[[0, 1]].grad_fn.name() == "IndexBackward0"
    assert x[:, 0].grad_fn.next_functions[0][0] is x.grad_fn or \
        x[:, 0].grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    assert x[0]._base is x and x[[0]]._base is None


def test_getitem_errors():
    x = _arange(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[5]
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x[0, 4]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[[5]]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or "
                                         "bool tensors"):
        x[cr.tensor([1.0])]
    with pytest.raises(IndexError, match=r"The shape of the mask \[2\] at index 0 does not match "
                                         r"the shape of the indexed tensor \[3, 4\] at index 0"):
        x[cr.tensor([True, False])]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[1.5]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        cr.tensor(1.0)[0]
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        _arange(2, 2, 2)[..., 0, ...]


def test_advanced_index_gradient_accumulates_duplicates():
    idx = cr.tensor([0, 2, 0, 0])
    np.testing.assert_array_equal(_grad(lambda x: x[idx], _arange(3, 2)),
                                  [[3, 3], [0, 0], [1, 1]])
    np.testing.assert_array_equal(_grad(lambda x: x[:, [1, 1]], _arange(2, 3)),
                                  [[0, 2, 0], [0, 2, 0]])
    np.testing.assert_array_equal(_grad(lambda x: x[x > 2], _arange(2, 3)),
                                  [[0, 0, 0], [1, 1, 1]])


def test_basic_index_gradients():
    g = _arange(2)
    np.testing.assert_array_equal(_grad(lambda x: x[1:, 2], _arange(3, 4), g),
                                  [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0]])
    np.testing.assert_array_equal(_grad(lambda x: x[::2], _arange(4)), [1, 0, 1, 0])


def test_select_narrow_errors():
    x = _arange(3, 4)
    with pytest.raises(IndexError, match=r"select\(\): index 3 out of range for tensor of size "
                                         r"\[3, 4\] at dimension 0"):
        x.select(0, 3)
    with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(2\) exceeds dimension size "
                                           r"\(3\)\."):
        x.narrow(0, 2, 2)
    with pytest.raises(IndexError, match=r"start out of range \(expected to be in range of "
                                         r"\[-3, 3\], but got 4\)"):
        x.narrow(0, 4, 0)
    np.testing.assert_array_equal(x.narrow(1, -2, 2).numpy(), x.numpy()[:, 2:])
    np.testing.assert_array_equal(x.narrow(1, cr.tensor(1), 2).numpy(), x.numpy()[:, 1:3])


# --- index_select / index_add / gather / scatter / masked_fill / index_put ----------------------
def test_index_select_and_index_add():
    x = _arange(3, 4)
    i = cr.tensor([2, 0, 2])
    np.testing.assert_array_equal(x.index_select(0, i).numpy(), x.numpy()[[2, 0, 2]])
    np.testing.assert_array_equal(x.index_select(1, cr.tensor(1)).numpy(), x.numpy()[:, [1]])
    out = cr.zeros(3, 2, dtype=cr.float64).index_add(0, i, cr.ones(3, 2, dtype=cr.float64),
                                                       alpha=2)
    np.testing.assert_array_equal(out.numpy(), [[2, 2], [0, 0], [4, 4]])
    np.testing.assert_array_equal(_grad(lambda x: x.index_select(0, i), x), np.outer([1, 0, 2],
                                                                                     np.ones(4)))
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, cr.tensor([3]))
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, cr.tensor([-1]))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_select(0, cr.tensor([[0]]))
    with pytest.raises(RuntimeError, match="Expected dtype int32 or int64 for index"):
        x.index_select(0, cr.tensor([0.0]))
    with pytest.raises(RuntimeError, match=r"Number of indices \(1\) should be equal to "
                                           r"source.size\(dim\): \(2\), for dim: 0"):
        x.index_add(0, cr.tensor([0]), cr.ones(2, 4, dtype=cr.float64))


def test_gather_and_scatter():
    x = _t([[1.0, 2.0], [3.0, 4.0]])
    i = cr.tensor([[0, 0], [1, 0]])
    np.testing.assert_array_equal(x.gather(1, i).numpy(), [[1, 1], [4, 3]])
    np.testing.assert_array_equal(x.gather(0, cr.tensor([[1, 0]])).numpy(), [[3, 2]])
    z = cr.zeros(2, 2, dtype=cr.float64)
    np.testing.assert_array_equal(z.scatter_add(1, i, x).numpy(), [[3, 0], [4, 3]])
    np.testing.assert_array_equal(z.scatter(1, cr.tensor([[1], [0]]), 7.0).numpy(),
                                  [[0, 7], [7, 0]])
    np.testing.assert_array_equal(z.scatter(0, cr.tensor([[1, 0]]), x).numpy(), [[0, 2], [1, 0]])
    np.testing.assert_array_equal(z.scatter(1, i, x, reduce="add").numpy(), [[3, 0], [4, 3]])
    # gather's gradient scatters back, adding repeated indices
    np.testing.assert_array_equal(_grad(lambda t: t.gather(1, i), x), [[2, 0], [1, 1]])
    with pytest.raises(RuntimeError, match="index 2 is out of bounds for dimension 1 with size 2"):
        x.gather(1, cr.tensor([[2]]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 2"):
        x.gather(1, cr.tensor([[-1]]))
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions "
                                           "as input tensor"):
        x.gather(1, cr.tensor([0]))
    with pytest.raises(RuntimeError, match=r"Size does not match at dimension 0 expected index "
                                           r"\[3, 1\] to be no larger than self \[2, 2\] apart "
                                           r"from dimension 1"):
        x.gather(1, cr.tensor([[0], [0], [0]]))
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.gather(1, cr.tensor([[0.0]]))


def test_masked_fill():
    x = _arange(2, 3)
    m = cr.tensor([True, False, True])
    np.testing.assert_array_equal(x.masked_fill(m, -1).numpy(), [[-1, 1, -1], [-1, 4, -1]])
    assert x.masked_fill(cr.ones(4, 2, 3, dtype=cr.bool), 0.0).shape == (4, 2, 3)
    assert cr.ones(3, dtype=cr.int64).masked_fill(m, 2.7).dtype == cr.int64
    v = cr.tensor(5.0, dtype=cr.float64, requires_grad=True)
    out = x.masked_fill(m, v)
    assert out.grad_fn.name() == "MaskedFillBackward1"
    out.sum().backward()
    assert v.grad.item() == 4.0
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks, but got mask "
                                           "with dtype float"):
        x.masked_fill(cr.ones(3), 0.0)
    with pytest.raises(RuntimeError, match=r"masked_fill_ only supports a 0-dimensional value "
                                           r"tensor, but got tensor with 1 dimension\(s\)\."):
        x.masked_fill(m, cr.ones(1))
    y = x.clone()
    y.masked_fill_(m, 0.0)
    assert y._version == 1 and y.numpy()[0, 0] == 0


def test_index_put():
    x = cr.zeros(3, dtype=cr.float64)
    i = (cr.tensor([0, 0, 2]),)
    np.testing.assert_array_equal(cr.index_put(x, i, _t(1.0), accumulate=True).numpy(), [2, 0, 1])
    np.testing.assert_array_equal(x.numpy(), [0, 0, 0])
    x.index_put_(i, _t([1.0, 2.0, 3.0]))
    assert x._version == 1 and x.numpy()[2] == 3
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes "
                                           "match"):
        x.index_put_(i, cr.ones(3, dtype=cr.float32))


# --- __setitem__ ------------------------------------------------------------------------------
def test_setitem_values_and_version():
    x = _arange(3, 4)
    x[0] = 7
    x[1, ::2] = _t([8.0, 9.0])
    x[:, 3] = _t([[1.0, 2.0, 3.0]])                       # leading 1s are stripped
    x[[2, 2], [0, 1]] = -1.0
    x[x > 100] = 0.0
    a = np.arange(12.0).reshape(3, 4)
    a[0] = 7
    a[1, ::2] = [8, 9]
    a[:, 3] = [1, 2, 3]
    a[[2, 2], [0, 1]] = -1
    np.testing.assert_array_equal(x.numpy(), a)
    assert x._version == 5
    x[...] = 0.0
    assert x.sum().item() == 0 and x._version == 6


def test_setitem_casts_the_value_and_checks_shapes():
    x = cr.zeros(2, 3, dtype=cr.int64)
    x[0] = _t([1.7, 2.2, 3.9])
    assert x.dtype == cr.int64 and x.tolist()[0] == [1, 2, 3]
    y = cr.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(3\) must match the "
                                           r"existing size \(2\) at non-singleton dimension 0"):
        y[0] = cr.ones(2)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[4\] cannot be "
                                           r"broadcast to indexing result of shape \[2, 3\]"):
        y[[0, 1]] = cr.ones(4)


def test_setitem_gradients_flow_to_value_and_unwritten_old_contents():
    x = _arange(3, 4, requires_grad=True)
    v = _arange(2, 4, requires_grad=True)
    y = x * 1
    y[[2, 0]] = v * 2
    assert y.grad_fn.name() == "IndexPutBackward0"
    (y * _arange(3, 4)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0] * 4, [4, 5, 6, 7], [0] * 4])
    np.testing.assert_array_equal(v.grad.numpy(), 2 * np.arange(12.0).reshape(3, 4)[[2, 0]])


def test_setitem_on_leaves():
    x = _arange(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being "
                                           "used in an in-place operation."):
        x[0] = 1.0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        x[[0]] = 1.0
    with cr.no_grad():
        x[0] = 1.0
        x[[1]] = 2.0
    assert x.is_leaf and x._version == 2
    np.testing.assert_array_equal(x.detach().numpy()[:2], [[1] * 4, [2] * 4])


def test_setitem_into_a_plain_tensor_makes_it_require_grad():
    v = _t([1.0, 2.0], requires_grad=True)
    y = cr.zeros(3, 2, dtype=cr.float64)
    y[1] = v
    assert y.requires_grad and y.grad_fn.name() == "torch::autograd::CopySlices"
    (y * _arange(3, 2)).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [2, 3])


# --- issue 9's shape and indexing ops: values, views, edge cases ----------------------------------
def test_tril_triu_trace_values_and_edges():
    x = _arange(3, 4)
    np.testing.assert_array_equal(x.tril(-1).numpy(), np.tril(x.numpy(), -1))
    np.testing.assert_array_equal(cr.triu(_arange(2, 3, 3), 1).numpy(),
                                  np.triu(np.arange(18.).reshape(2, 3, 3), 1))
    assert cr.tril(cr.zeros(0, 3)).shape == (0, 3)
    assert x.trace().item() == 0 + 5 + 10
    assert cr.trace(cr.zeros(0, 2)).item() == 0
    assert cr.trace(cr.ones(2, 2, dtype=cr.int32)).dtype == cr.int64
    y = x.clone()
    assert y.tril_() is y and y._version == 1 and y.numpy()[0, 1] == 0


def test_diff_orders_ends_bool_and_errors():
    x = cr.tensor([1., 4., 9., 16.])
    assert cr.diff(x, n=0) is x
    assert x.diff(n=3).tolist() == [0.0]
    assert cr.diff(x, n=9).shape == (0,)
    assert cr.diff(cr.tensor([True, False, False])).tolist() == [True, False]
    assert cr.diff(cr.arange(5), n=7).dtype == cr.int64
    assert cr.diff(cr.ones(2, 3), dim=0, prepend=cr.zeros(1, 3)).tolist() == [[1.0] * 3, [0.0] * 3]
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        cr.diff(cr.tensor(1.0))
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        cr.diff(x, n=-1)
    with pytest.raises(RuntimeError, match="same dimension as input"):
        cr.diff(cr.ones(3, 2), prepend=cr.ones(2))
    with pytest.raises(RuntimeError, match=r"input.size\(1\) = 2, but got tensor.size\(1\) = 3"):
        cr.diff(cr.ones(3, 2), dim=0, prepend=cr.ones(1, 3))


def test_tensor_split_sections_indices_and_views():
    x = _arange(7)
    assert [p.tolist() for p in x.tensor_split(3)] == [[0, 1, 2], [3, 4], [5, 6]]
    assert [p.tolist() for p in x.tensor_split([2, -2, 10])] == \
        [[0, 1], [2, 3, 4], [5, 6], []]
    assert [p.tolist() for p in x.tensor_split(cr.tensor(2))] == [[0, 1, 2, 3], [4, 5, 6]]
    assert [p.shape[0] for p in cr.zeros(0).tensor_split(2)] == [0, 0]
    pieces = _arange(2, 4).hsplit(2)
    assert all(p._base is not None for p in pieces)
    pieces[1].zero_()                       # (separate slices: may be written in place)
    assert pieces[0]._version == 1


def test_stacks_match_numpy():
    a, b = _arange(2, 3), _arange(2, 3) + 10
    for ours, ref in ((cr.hstack, np.hstack), (cr.vstack, np.vstack), (cr.dstack, np.dstack),
                      (cr.column_stack, np.column_stack), (cr.row_stack, np.vstack)):
        np.testing.assert_array_equal(ours([a, b]).numpy(), ref([a.numpy(), b.numpy()]))
        np.testing.assert_array_equal(ours((a[0], b[1])).numpy(),
                                      ref([a.numpy()[0], b.numpy()[1]]))
    assert cr.atleast_2d(cr.tensor(1.), cr.zeros(3))[1].shape == (1, 3)
    assert cr.atleast_1d([cr.tensor(1.)])[0].shape == (1,)


def test_repeat_interleave_forms():
    x = _arange(2, 2)
    np.testing.assert_array_equal(x.repeat_interleave(2).numpy(),
                                  np.repeat(x.numpy(), 2))
    np.testing.assert_array_equal(x.repeat_interleave(cr.tensor([0, 3]), dim=-1).numpy(),
                                  np.repeat(x.numpy(), [0, 3], axis=1))
    assert cr.repeat_interleave(cr.tensor([1, 0, 2])).tolist() == [0, 2, 2]
    assert cr.tensor(5.).repeat_interleave(2).tolist() == [5.0, 5.0]
    assert x.repeat_interleave(0, 0).shape == (0, 2)
    with pytest.raises(RuntimeError, match="allocated size does not match"):
        x.repeat_interleave(2, 0, output_size=3)


def test_take_take_along_dim_masked_select():
    x = _arange(3, 4)
    assert cr.take(x, cr.tensor([[0, -1]])).tolist() == [[0.0, 11.0]]
    i = x.argsort(1) if hasattr(x, "argsort") else cr.tensor([[3, 2, 1, 0]] * 3)
    np.testing.assert_array_equal(x.take_along_dim(i, 1).numpy(),
                                  np.take_along_axis(x.numpy(), i.numpy(), 1))
    assert x.take_along_dim(cr.tensor([11, 0])).tolist() == [11.0, 0.0]
    assert cr.masked_select(x, x > 8).tolist() == [9.0, 10.0, 11.0]
    assert cr.masked_select(cr.zeros(0, 2), cr.zeros(0, 2, dtype=cr.bool)).shape == (0,)
    g = _grad(lambda t: cr.masked_select(t, cr.tensor([[True], [False], [True]])), x[0])
    np.testing.assert_array_equal(g, [2, 2, 2, 2])       # the broadcast rows add up


def test_index_copy_fill_masked_scatter_values():
    x = cr.zeros(3, 2)
    assert x.index_copy(0, cr.tensor([2, 0]), _arange(2, 2).float()).tolist() == \
        [[2.0, 3.0], [0.0, 0.0], [0.0, 1.0]]
    assert x.index_fill(1, cr.tensor([-1]), 7).tolist() == [[0.0, 7.0]] * 3
    assert x.index_fill(0, cr.tensor([1]), cr.tensor(2.)).tolist()[1] == [2.0, 2.0]
    m = cr.tensor([[True, False], [False, False], [True, True]])
    assert x.masked_scatter(m, cr.tensor([1., 2., 3., 4.])).tolist() == \
        [[1.0, 0.0], [0.0, 0.0], [2.0, 3.0]]
    y = cr.zeros(2, 2)
    y.masked_scatter_(cr.tensor([True, False]), cr.tensor([5., 6.]))
    assert y.tolist() == [[5.0, 0.0], [6.0, 0.0]] and y._version == 1
    y.index_copy_(1, cr.tensor([1]), cr.ones(2, 1))
    y.index_fill_(0, cr.tensor([0]), -1.)
    assert y.tolist() == [[-1.0, -1.0], [6.0, 1.0]] and y._version == 3


@pytest.mark.parametrize("reduce,include_self,expected", [
    ("sum", True, [11.0, 2.0, 16.0]), ("sum", False, [10.0, 2.0, 13.0]),
    ("prod", True, [21.0, 2.0, 39.0]), ("prod", False, [21.0, 2.0, 13.0]),
    ("mean", True, [11 / 3, 2.0, 8.0]), ("mean", False, [5.0, 2.0, 13.0]),
    ("amax", True, [7.0, 2.0, 13.0]), ("amax", False, [7.0, 2.0, 13.0]),
    ("amin", True, [1.0, 2.0, 3.0]), ("amin", False, [3.0, 2.0, 13.0]),
])
def test_scatter_reduce_values(reduce, include_self, expected):
    x = _t([1.0, 2.0, 3.0])
    out = x.scatter_reduce(0, cr.tensor([0, 0, 2]), _t([3.0, 7.0, 13.0]), reduce,
                           include_self=include_self)
    np.testing.assert_allclose(out.numpy(), expected)


def test_scatter_reduce_integer_mean_floors_and_ties_share_the_gradient():
    out = cr.tensor([1, 2, 3]).scatter_reduce(0, cr.tensor([0, 0]), cr.tensor([2, 3]), "mean")
    assert out.tolist() == [2, 2, 3]
    x = _t([5.0, 0.0], requires_grad=True)
    s = _t([5.0, 1.0], requires_grad=True)
    x.scatter_reduce(0, cr.tensor([0, 0]), s, "amax").sum().backward()
    assert x.grad.tolist() == [0.5, 1.0] and s.grad.tolist() == [0.5, 0.0]


def test_scatter_reduce_amax_tie_with_excluded_self_counts_it_like_torch():
    # torch shares the gradient with self's old value even though include_self=False
    s = _t([0.0, 0.0, -1.0], requires_grad=True)
    out = cr.zeros(2, dtype=s.dtype).scatter_reduce(0, cr.tensor([0, 0, 1]), s, "amax",
                                                  include_self=False)
    out.backward(_t([4.0, 2.0]))
    assert out.tolist() == [0.0, -1.0]
    np.testing.assert_allclose(s.grad.numpy(), [4 / 3, 4 / 3, 2.0], rtol=1e-6)


@pytest.mark.parametrize("write,value,grads", [   # (the reference's numbers)
    (lambda x, s: x.scatter_reduce(0, cr.tensor([0, 0]), s, "mean"), 0.8, [1 / 3, 1 / 3]),
    (lambda x, s: x.scatter_reduce(0, cr.tensor([0, 0]), s, "prod"), 0.21, [0.3, 0.14]),
    (lambda x, s: x.scatter(0, cr.tensor([0]), 2.5) * s[0], 3.75, [0.0, 2.5]),
    (lambda x, s: x.index_fill(0, cr.tensor(0), -1.0) * s[0], -1.5, [0.0, -1.0])])
def test_writes_into_a_0d_self_reach_it(write, value, grads):
    # the formulas' 0-d arithmetic gives NumPy scalars, which the scatters copied into
    # a new array (through reshape(-1)) and index_fill could not write into
    x, s = _t(0.7, requires_grad=True), _t([1.5, 0.2], requires_grad=True)
    out = write(x, s)
    gx, gs = cr.autograd.grad(out, (x, s))
    np.testing.assert_allclose([out.item(), gx.item(), gs[0].item()], [value] + grads)


def test_nonzero_and_argwhere():
    x = cr.tensor([[0, 1], [2, 0]])
    assert x.nonzero().tolist() == [[0, 1], [1, 0]] and x.nonzero().dtype == cr.int64
    assert [t.tolist() for t in x.nonzero(as_tuple=True)] == [[0, 1], [1, 0]]
    assert cr.argwhere(x).tolist() == [[0, 1], [1, 0]]
    assert cr.nonzero(cr.tensor(3.)).shape == (1, 0)
    assert cr.nonzero(cr.tensor(0.)).shape == (0, 0)
    assert [t.tolist() for t in cr.nonzero(cr.tensor(3.), as_tuple=True)] == [[0]]
    assert cr.nonzero(cr.zeros(0, 3)).shape == (0, 2)


def test_grids_broadcasts_products():
    assert cr.broadcast_shapes((2, 1), (3, 1, 4), 4) == (3, 2, 4)
    assert cr.broadcast_shapes() == ()
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        a, b = cr.meshgrid(cr.arange(2), cr.arange(3))
    assert a.shape == b.shape == (2, 3) and a._base is not None
    a, b = cr.meshgrid([cr.arange(2), cr.arange(3)], indexing="xy")
    assert a.tolist() == [[0, 1]] * 3 and b.tolist() == [[0, 0], [1, 1], [2, 2]]
    assert cr.cartesian_prod(cr.arange(3)).tolist() == [0, 1, 2]
    assert cr.cartesian_prod(cr.arange(2), cr.arange(0)).shape == (0, 2)
    assert cr.combinations(cr.arange(3), 3).tolist() == [[0, 1, 2]]
    assert cr.combinations(cr.arange(2), 3).shape == (0, 3)
    assert cr.combinations(cr.arange(3), 0).shape == (0,)
    assert cr.combinations(cr.arange(2), with_replacement=True).tolist() == \
        [[0, 0], [0, 1], [1, 1]]
    assert cr.block_diag().shape == (1, 0)
    assert cr.block_diag(cr.tensor(1), cr.ones(2, 1, dtype=cr.float64)).tolist() == \
        [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    assert cr.block_diag(cr.zeros(0, 2), cr.ones(1, 1)).shape == (1, 3)


def test_unfold_and_as_strided_views():
    x = _arange(5, requires_grad=True)
    w = x.unfold(0, 3, 1)
    assert w.grad_fn.name() == "UnfoldBackward0" and w.stride() == (1, 1)
    w.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0, 2.0, 1.0]      # overlapping windows add up
    y = _arange(3, 4)
    v = y.as_strided((2, 2), (4, 1), 5)
    assert v.tolist() == [[5.0, 6.0], [9.0, 10.0]] and v.storage_offset() == 5
    v.mul_(0)
    assert y._version == v._version == 1 and y.numpy()[1, 1] == 0
    assert y[1].as_strided((2,), (1,)).tolist() == [4.0, 0.0]   # default: the view's offset
    with pytest.raises(RuntimeError, match=r"storage \(the tensor's base\) to be contiguous"):
        cr.tensor(np.asfortranarray(np.ones((2, 3)))).as_strided((2,), (1,))


def test_as_strided_gradient_goes_through_the_inputs_own_elements():
    # Note [as_strided reads the storage]: x[0] is read, but it is not part of x[1]
    x = _arange(3, 4, requires_grad=True)
    w = x[1].as_strided((6,), (1,), 2)           # storage positions 2..7
    assert w.tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    w.sum().backward()
    assert x.grad.tolist() == [[0.0] * 4, [1.0] * 4, [0.0] * 4]


def test_rebased_overlapping_view_sums_its_gradient():
    x = _arange(4, requires_grad=True)
    y = x * 1
    w = y.unfold(0, 2, 1)                     # overlapping windows of y
    y.mul_(2)                                 # w's history now goes through y's CopySlices
    w.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 4.0, 2.0]


def test_complex_views_and_constructors():
    z = cr.tensor([1 + 2j, 3 - 1j], dtype=cr.complex128, requires_grad=True)
    r = cr.view_as_real(z)
    assert r.tolist() == [[1.0, 2.0], [3.0, -1.0]] and r.dtype == cr.float64
    (r * _t([[1.0, 10.0], [100.0, 1000.0]])).sum().backward()
    assert z.grad.tolist() == [1 + 10j, 100 + 1000j]
    p = cr.zeros(2, 2)
    c = cr.view_as_complex(p)
    c.add_(1j)
    assert p.tolist() == [[0.0, 1.0], [0.0, 1.0]] and p._version == 1
    assert cr.complex(cr.ones(2), cr.zeros(1)).dtype == cr.complex64
    np.testing.assert_allclose(cr.polar(_t([2.0]), _t([np.pi / 2])).numpy(), [2j], atol=1e-15)


def test_view_dtype_shares_memory_and_version_and_is_not_differentiable():
    x = _t([1.0, 2.0], requires_grad=True)
    v = x.view(cr.int64)
    assert v.dtype == cr.int64 and not v.requires_grad and v._base is None
    assert np.shares_memory(v.numpy(), x.detach().numpy())
    assert v.tolist() == np.array([1.0, 2.0]).view(np.int64).tolist()
    assert x.detach().view(cr.float32).shape == (4,)
    h = cr.zeros(2, 4, dtype=cr.float16).view(cr.float64)
    assert h.shape == (2, 1)
    with cr.no_grad():
        x.view(cr.float64).mul_(2)
    assert x.tolist() == [2.0, 4.0] and x._version == v._version == 1


def test_scatter_variants_of_select_slice_diagonal():
    x = cr.zeros(3, 3)
    assert cr.diagonal_scatter(x, cr.ones(2), 1).tolist() == \
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    assert cr.select_scatter(x, cr.ones(3), 1, -1).tolist() == [[0.0, 0.0, 1.0]] * 3
    assert cr.slice_scatter(x, cr.ones(3, 1), 1, -1).tolist() == [[0.0, 0.0, 1.0]] * 3
    assert cr.diagflat(cr.tensor([1., 2.]), -1).tolist() == \
        [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
    assert cr.narrow_copy(_arange(4), 0, 1, 2)._base is None


# --- JVPs of every shape-family op (finite differences, both namespaces) --------------------------
def _family_ops():
    ops = {}
    for op in OPS.values():
        if (getattr(op.forward, "__module__", None) or "").endswith(("_ops.shape", "_ops.indexing")) \
                and op.jvp != NOT_IMPLEMENTED:
            ops[op.name] = op
    return ops


def _record_calls(monkeypatch):
    """Capture (op, arrays, attrs) of every shape-family forward run."""
    calls = []
    all_ops = list(_family_ops().values()) + list(shape._CAT_OPS.values()) + \
        list(shape._STACK_OPS.values())
    for op in set(all_ops):
        original = op.forward

        def forward(*arrays, _op=op, _f=original, **attrs):
            calls.append((_op, [np.array(a, copy=True) for a in arrays], dict(attrs)))
            return _f(*arrays, **attrs)
        monkeypatch.setattr(op, "forward", forward)
    return calls


def _jvp_env(op, arrays, attrs, result):
    env = dict(attrs)
    env.update(zip(op.inputs, arrays))
    env.update((n + "_shape", a.shape) for n, a in zip(op.inputs, arrays))
    env["result"] = result
    return env


def _forward(op, arrays, attrs):
    attrs = dict(attrs, inplace=False) if "inplace" in attrs else attrs
    return op.forward(*[a.copy() for a in arrays], **attrs)


def _check_jvp(op, arrays, attrs, rng, eps=1e-6):
    diff = [a.dtype.kind in "fc" and f is not NONDIFF for a, f in zip(arrays, op.vjps)]
    tangents = tuple(rng.standard_normal(a.shape).astype(a.dtype) if d else None
                     for a, d in zip(arrays, diff))
    if all(t is None for t in tangents):      # e.g. a select on an index tensor
        return False
    plus = [a + eps * t if t is not None else a for a, t in zip(arrays, tangents)]
    minus = [a - eps * t if t is not None else a for a, t in zip(arrays, tangents)]
    hi, lo = _forward(op, plus, attrs), _forward(op, minus, attrs)
    result = _forward(op, arrays, attrs)
    env = _jvp_env(op, arrays, attrs, result)
    if op.multi_output:
        numeric = [(h - l) / (2 * eps) for h, l in zip(hi, lo)]
    else:
        numeric = [(hi - lo) / (2 * eps)]
    tensor_env = {k: cr.Tensor._wrap(v) if isinstance(v, np.ndarray) and k in op.inputs else v
                  for k, v in env.items()}
    tensor_env["result"] = [cr.Tensor._wrap(r) for r in result] if op.multi_output else \
        cr.Tensor._wrap(result)
    for ns, e, ts in ((ARRAY_NS, env, tangents),
                      (TENSOR_NS, tensor_env, tuple(None if t is None else cr.Tensor._wrap(t)
                                                    for t in tangents))):
        out = op.jvp(ns, ts, e)
        out = list(out) if op.multi_output else [out]
        for o, n in zip(out, numeric):
            o = o._data if isinstance(o, cr.Tensor) else o
            np.testing.assert_allclose(np.broadcast_to(o, n.shape), n, atol=1e-6, rtol=1e-5,
                                       err_msg=f"{op.name} jvp ({type(ns).__name__})")
    return True


def test_every_shape_family_op_has_a_checked_jvp(monkeypatch):
    calls = _record_calls(monkeypatch)
    for sample in shape_samples.SAMPLES:
        sample.call(*make_inputs(sample))
    seen = set()
    rng = np.random.default_rng(0)
    for op, arrays, attrs in list(calls):       # (the checks themselves add calls)
        if op.jvp is not None and op.jvp != NOT_IMPLEMENTED and \
                _check_jvp(op, arrays, attrs, rng):
            seen.add(op.name)
    missing = set(_family_ops()) - seen
    assert not missing, f"shape-family ops whose JVP no sample reached: {sorted(missing)}"


# --- the torch-parity tier ----------------------------------------------------------------------
PARITY = [
    ("x[1]", (3, 4), lambda x, M: x[1]),
    ("x[-1, 2]", (3, 4), lambda x, M: x[-1, 2]),
    ("x[::3]", (7,), lambda x, M: x[::3]),
    ("x[:, None, 1]", (3, 2), lambda x, M: x[:, None, 1]),
    ("x[i]", (3, 4), lambda x, M: x[M.tensor([0, 2, 0])]),
    ("x[i2d]", (3, 4), lambda x, M: x[M.tensor([[0, 1], [2, 2]])]),
    ("x[i,:,i]", (3, 2, 3), lambda x, M: x[M.tensor([0, 2, 0]), :, M.tensor([0, 2, 0])]),
    ("x[0,:,i]", (3, 2, 3), lambda x, M: x[0, :, M.tensor([1, 1])]),
    ("x[1:, i]", (3, 4), lambda x, M: x[1:, M.tensor([3, 3])]),
    ("x[mask]", (3, 4), lambda x, M: x[x > 0]),
    ("x[None, i]", (3, 2), lambda x, M: x[None, M.tensor([1, 1])]),
    ("x[True]", (3,), lambda x, M: x[True]),
    ("view", (3, 4), lambda x, M: x.view(2, 6)),
    ("reshape-copy", (3, 4), lambda x, M: x.t().reshape(12)),
    ("flatten", (2, 3, 4), lambda x, M: x.flatten(1)),
    ("unflatten", (3, 4), lambda x, M: x.unflatten(-1, (2, 2))),
    ("expand", (3, 1), lambda x, M: x.expand(2, 3, 4)),
    ("permute", (2, 3, 4), lambda x, M: x.permute(-1, 0, 1)),
    ("movedim", (2, 3, 4), lambda x, M: x.movedim((0, 1), (2, 0))),
    ("t", (3, 4), lambda x, M: x.t()),
    ("mT", (2, 3, 4), lambda x, M: x.mT),
    ("squeeze", (1, 3, 1), lambda x, M: x.squeeze(-1)),
    ("split", (5, 3), lambda x, M: x.split(2)),
    ("split-sizes", (5, 3), lambda x, M: x.split([2, 3])),
    ("chunk", (5, 3), lambda x, M: x.chunk(3)),
    ("unbind", (2, 3), lambda x, M: x.unbind(1)),
    ("cat", (2, 3), lambda x, M: M.cat([x, x * 2, M.zeros(0, dtype=x.dtype)], 1)),
    ("stack", (2, 3), lambda x, M: M.stack([x, x * 2], -1)),
    ("flip", (2, 3), lambda x, M: x.flip(0, 1)),
    ("roll", (2, 3), lambda x, M: x.roll((1, -4), (0, 1))),
    ("repeat", (2, 3), lambda x, M: x.repeat(2, 1, 3)),
    ("tile", (2, 3), lambda x, M: x.tile((2, 1, 2))),
    ("diagonal", (2, 3, 4), lambda x, M: x.diagonal(1, -1, 0)),
    ("diag-1d", (3,), lambda x, M: M.diag(x, -2)),
    ("diag-2d", (3, 4), lambda x, M: M.diag(x, 2)),
    ("diag_embed", (2, 3), lambda x, M: M.diag_embed(x, -1, 2, 0)),
    ("narrow", (3, 4), lambda x, M: x.narrow(1, -2, 2)),
    ("index_select", (3, 4), lambda x, M: x.index_select(1, M.tensor([0, 3, 0]))),
    ("index_add", (3, 4), lambda x, M: x.index_add(0, M.tensor([1, 1]), x[:2] * 2, alpha=2)),
    ("gather", (3, 4), lambda x, M: x.gather(1, M.tensor([[0, 1], [2, 2]]))),
    ("scatter_add", (3, 4), lambda x, M: x.scatter_add(0, M.tensor([[0, 0], [2, 2]]),
                                                       x[1:, :2] * 3)),
    ("scatter", (3, 4), lambda x, M: x.scatter(1, M.tensor([[0], [2], [1]]), x[:, 2:3] ** 2)),
    ("scatter-value", (3, 4), lambda x, M: x.scatter(1, M.tensor([[0], [2], [1]]), 2.5)),
    ("masked_fill", (3, 4), lambda x, M: x.masked_fill(x > 0, -1.0)),
    ("masked_fill-bcast", (4,), lambda x, M: x.masked_fill(M.ones(2, 4, dtype=M.bool), 3.0)),
    ("index_put", (3, 4), lambda x, M: M.index_put(x, (M.tensor([0, 0]),), x[1] * 2, True)),
    # indexing with any number of None and one ... anywhere (mixed with the other kinds)
    ("x[None,...,None]", (3, 4), lambda x, M: x[None, ..., None]),
    ("x[None,None,...,0,None]", (2, 3, 4), lambda x, M: x[None, None, ..., 0, None]),
    ("x[i,None,i]", (3, 4), lambda x, M: x[M.tensor([0, 2]), None, M.tensor([1, 1])]),
    ("x[i,...,i]", (2, 3, 4), lambda x, M: x[M.tensor([0, 1]), ..., M.tensor([3, 0])]),
    ("x[...,i,None]", (2, 3, 4), lambda x, M: x[..., M.tensor([0, 2]), None]),
    ("x[1,...,None,i]", (2, 3, 4), lambda x, M: x[1, ..., None, M.tensor([0, 3])]),
    ("x[None,0,None,i,None,...]", (2, 3, 4),
     lambda x, M: x[None, 0, None, M.tensor([1, 2]), None, ...]),
    ("x[mask,...,None]", (2, 3), lambda x, M: x[M.tensor([True, False]), ..., None]),
    ("x[None,...,mask2d]", (2, 3), lambda x, M: x[None, ..., x > 0]),
    ("x[...,True,None]", (2, 3), lambda x, M: x[..., True, None]),

    ("setitem[None,...,None,1]", (3, 3), lambda x, M: _setitem(
        x, (None, ..., None, 1), x[0, :, None] * 2)),
    ("setitem[None,i,...,None]", (3, 3), lambda x, M: _setitem(
        x, (None, M.tensor([0, 2]), ..., None), x[1, None, :, None] * 2)),
    ("setitem[...,i,None,1:]", (2, 3, 4), lambda x, M: _setitem(
        x, (..., M.tensor([1, 0]), None, slice(1, None)), x[0, :2, None, :3] ** 2)),
    # the shape and indexing ops of issue 9
    ("tril", (3, 4), lambda x, M: x.tril(-1)),
    ("triu", (2, 3, 3), lambda x, M: x.triu(1)),
    ("trace", (3, 4), lambda x, M: x.trace()),
    ("rot90", (2, 3), lambda x, M: x.rot90(1, (1, 0))),
    ("tensor_split", (7, 2), lambda x, M: x.tensor_split(3)),
    ("tensor_split-indices", (5,), lambda x, M: x.tensor_split(M.tensor([1, 4]))),
    ("hsplit", (2, 4), lambda x, M: M.hsplit(x, [1, 3])),
    ("hstack", (2, 3), lambda x, M: M.hstack([x, x[:, :1]])),
    ("vstack", (2, 3), lambda x, M: M.vstack([x, x[0]])),
    ("dstack", (2, 3), lambda x, M: M.dstack([x, x * 2])),
    ("column_stack", (3,), lambda x, M: M.column_stack([x, x * 2])),
    ("repeat_interleave", (2, 3), lambda x, M: x.repeat_interleave(2, 0)),
    ("repeat_interleave-tensor", (2, 3), lambda x, M: x.repeat_interleave(
        M.tensor([1, 0, 3]), dim=-1)),
    ("take", (3, 4), lambda x, M: x.take(M.tensor([[0, -1], [5, 5]]))),
    ("take_along_dim", (3, 4), lambda x, M: x.take_along_dim(M.tensor([[0], [3], [1]]), 1)),
    ("masked_select", (3, 4), lambda x, M: x.masked_select(x > 0)),
    ("masked_scatter", (3, 4), lambda x, M: x.masked_scatter(x > 0, x.flip(0) * 2)),
    ("index_copy", (3, 4), lambda x, M: x.index_copy(0, M.tensor([2, 0]), x[:2] ** 2)),
    ("index_fill", (3, 4), lambda x, M: x.index_fill(1, M.tensor([0, -1]), 2.0)),
    ("index_fill-tensor", (3, 4), lambda x, M: x.index_fill(0, M.tensor([1]), x[0, 0] * 3)),
    *[(f"scatter_reduce-{r}-{inc}", (3, 4), (lambda r, inc: lambda x, M: x.scatter_reduce(
        0, M.tensor([[0, 2, 0, 1], [0, 0, 2, 2]]), x[1:] * 2, r, include_self=inc))(r, inc))
      for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
    ("diagonal_scatter", (3, 4), lambda x, M: M.diagonal_scatter(x, x[0, :3] ** 2)),
    ("select_scatter", (3, 4), lambda x, M: M.select_scatter(x, x[0] ** 2, 0, 1)),
    ("slice_scatter", (3, 4), lambda x, M: M.slice_scatter(x, x[:, :2] ** 2, 1, 0, 4, 2)),
    ("unfold", (3, 5), lambda x, M: x.unfold(1, 3, 1)),
    ("as_strided", (3, 4), lambda x, M: x.as_strided((3, 3), (1, 2), 1)),
    ("as_strided-of-view", (3, 4), lambda x, M: x[1:, 1:].as_strided((2, 3), (3, 1), 2)),
    ("view_as_real", (3,), lambda x, M: M.view_as_real(M.complex(x, x * x))),
    ("view_as_complex", (3, 2), lambda x, M: M.view_as_real(M.view_as_complex(x) ** 2)),
    ("polar", (3,), lambda x, M: M.view_as_real(M.polar(x.exp(), x * 2))),
    ("meshgrid", (3,), lambda x, M: M.meshgrid(x, x[:2], indexing="xy")),
    ("broadcast_tensors", (3, 1), lambda x, M: M.broadcast_tensors(x, x[:, 0])),
    ("block_diag-values", (2, 3), lambda x, M: M.block_diag(x, x[0]).sum(1)),
]


def _setitem(x, key, value):
    y = x * 1
    y[key] = value
    return y


def _run_parity(M, x, fn):
    out = fn(x, M)
    outs = out if isinstance(out, tuple) else (out,)
    weights = [M.tensor(np.linspace(-1, 1, o.numel()).reshape(tuple(o.shape))) for o in outs]
    loss = sum((o * w).sum() for o, w in zip(outs, weights))
    (gx,) = M.autograd.grad(loss, x, create_graph=True)
    (ggx,) = M.autograd.grad((gx * gx * x).sum(), x)
    names = [o.grad_fn.name() if hasattr(o.grad_fn, "name") else type(o.grad_fn).__name__
             for o in outs]
    return [o.detach().numpy() for o in outs], gx.detach().numpy(), ggx.numpy(), names


@pytest.mark.parametrize("name,shape_,fn", PARITY, ids=[p[0] for p in PARITY])
def test_torch_parity(torch, name, shape_, fn):
    data = np.random.default_rng(0).standard_normal(shape_)
    ours = _run_parity(cr, cr.tensor(data, requires_grad=True), fn)
    ref = _run_parity(torch, torch.tensor(data, requires_grad=True), fn)
    for a, b in zip(ours[0], ref[0]):
        np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(ours[1], ref[1])
    np.testing.assert_allclose(ours[2], ref[2])
    assert ours[3] == ref[3]


ERRORS = [
    ("view", lambda M: M.zeros(3, 4).t().view(12)),
    ("reshape-0", lambda M: M.zeros(0, 4).reshape(0, -1)),
    ("expand", lambda M: M.zeros(3, 1).expand(4, 4)),
    ("expand-few", lambda M: M.zeros(3, 1).expand(4)),
    ("permute", lambda M: M.zeros(2, 3).permute(0, 1, 2)),
    ("cat-sizes", lambda M: M.cat([M.zeros(2, 3), M.zeros(2, 4)])),
    ("cat-ndim", lambda M: M.cat([M.zeros(2, 3), M.zeros(3)])),
    ("cat-0d", lambda M: M.cat([M.zeros(()), M.zeros(())])),
    ("stack", lambda M: M.stack([M.zeros(2, 3), M.zeros(3, 3)])),
    ("split", lambda M: M.zeros(5).split([2, 2])),
    ("chunk", lambda M: M.zeros(5).chunk(0)),
    ("select", lambda M: M.zeros(3, 4).select(0, 3)),
    ("narrow", lambda M: M.zeros(3, 4).narrow(0, 2, 2)),
    ("getitem-oob", lambda M: M.zeros(3, 4)[5]),
    ("getitem-too-many", lambda M: M.zeros(3, 4)[0, 0, 0]),
    ("getitem-float", lambda M: M.zeros(3, 4)[M.tensor([1.0])]),
    ("getitem-mask", lambda M: M.zeros(3, 4)[M.tensor([True, False])]),
    ("getitem-step", lambda M: M.zeros(3)[::-1]),
    ("getitem-0d", lambda M: M.zeros(())[0]),
    ("index_select", lambda M: M.zeros(3).index_select(0, M.tensor([3]))),
    ("gather", lambda M: M.zeros(3, 4).gather(0, M.tensor([[5]]))),
    ("gather-size", lambda M: M.zeros(3, 4).gather(0, M.tensor([[1] * 5]))),
    ("masked_fill-dtype", lambda M: M.zeros(3).masked_fill(M.ones(3), 0.0)),
    ("masked_fill-shape", lambda M: M.zeros(4).masked_fill(M.ones(3, 2, dtype=M.bool), 0.0)),
    ("flip", lambda M: M.zeros(3).flip(0, 0)),
    ("repeat", lambda M: M.zeros(2, 3).repeat(2)),
    ("t", lambda M: M.zeros(2, 3, 4).t()),
    ("setitem-shape", lambda M: M.zeros(2, 3).__setitem__(0, M.ones(2))),
    ("setitem-adv-shape", lambda M: M.zeros(2, 3).__setitem__([0, 1], M.ones(4))),
    ("setitem-leaf", lambda M: M.zeros(3, requires_grad=True).__setitem__(0, 1.0)),
    ("split-inplace", lambda M: M.zeros(4, requires_grad=True).clone().split(2)[0].mul_(2)),
    ("tril-1d", lambda M: M.zeros(3).tril()),
    ("triu-0d", lambda M: M.zeros(()).triu()),
    ("trace-1d", lambda M: M.zeros(3).trace()),
    ("trace-3d", lambda M: M.zeros(2, 3, 4).trace()),
    ("view-dtype-stride", lambda M: M.zeros(3, 4).t().view(M.float16)),
    ("view-dtype-size", lambda M: M.zeros(3, 3).view(M.float64)),
    ("view-dtype-0d", lambda M: M.zeros(()).view(M.float16)),
    ("meshgrid-indexing", lambda M: M.meshgrid([M.ones(2), M.ones(3)], indexing="bad")),
    ("meshgrid-dtype", lambda M: M.meshgrid(M.ones(2), M.ones(3, dtype=M.int64),
                                            indexing="ij")),
    ("rot90-dims", lambda M: M.rot90(M.zeros(3, 4), 1, (0, 0))),
    ("rot90-1d", lambda M: M.rot90(M.zeros(3), 1)),
    ("rot90-3dims", lambda M: M.rot90(M.zeros(3, 4), 1, (0, 1, 2))),
    ("tensor_split-0", lambda M: M.zeros(3, 4).tensor_split(0)),
    ("tensor_split-float", lambda M: M.zeros(3, 4).tensor_split(M.tensor([1.]))),
    ("tensor_split-0d", lambda M: M.zeros(()).tensor_split(2)),
    ("hsplit-uneven", lambda M: M.zeros(3, 4).hsplit(3)),
    ("hsplit-0d", lambda M: M.hsplit(M.zeros(()), 2)),
    ("vsplit-1d", lambda M: M.zeros(3).vsplit(3)),
    ("dsplit-2d", lambda M: M.zeros(3, 4).dsplit(2)),
    ("hstack-empty", lambda M: M.hstack([])),
    ("repeat_interleave-size", lambda M: M.zeros(3, 4).repeat_interleave(M.tensor([1, 2]), 0)),
    ("repeat_interleave-negative", lambda M: M.zeros(3).repeat_interleave(
        M.tensor([-1, 2, 1]), 0)),
    ("repeat_interleave-int-negative", lambda M: M.zeros(3).repeat_interleave(-1)),
    ("repeat_interleave-2d-repeats", lambda M: M.repeat_interleave(M.tensor([[1, 2]]))),
    ("repeat_interleave-2d", lambda M: M.zeros(3, 4).repeat_interleave(M.tensor([[2]]), 1)),
    ("take-oob", lambda M: M.zeros(3, 4).take(M.tensor([12]))),
    ("take-oob-negative", lambda M: M.zeros(3, 4).take(M.tensor([-13]))),
    ("take-float", lambda M: M.zeros(3, 4).take(M.tensor([1.]))),
    ("take_along_dim-ndim", lambda M: M.zeros(3, 4).take_along_dim(M.tensor([0]), 1)),
    ("masked_select-dtype", lambda M: M.zeros(3, 4).masked_select(M.ones(3, 4))),
    ("masked_select-shape", lambda M: M.zeros(3, 4).masked_select(M.ones(2, 4, dtype=M.bool))),
    ("masked_scatter-count", lambda M: M.zeros(3, 4).masked_scatter(
        M.ones(3, 4, dtype=M.bool), M.ones(5))),
    ("masked_scatter-mask", lambda M: M.zeros(3, 4).masked_scatter(M.ones(3, 4), M.ones(12))),
    ("masked_scatter-dtype", lambda M: M.zeros(3, 4).masked_scatter(
        M.ones(3, 4, dtype=M.bool), M.ones(12, dtype=M.float64))),
    ("masked_scatter_-expand", lambda M: M.zeros(3, 4).masked_scatter_(
        M.ones(2, 3, 4, dtype=M.bool), M.ones(24))),
    ("index_copy-count", lambda M: M.zeros(3, 4).index_copy(0, M.tensor([0]), M.ones(2, 4))),
    ("index_copy-slice", lambda M: M.zeros(3, 4).index_copy(0, M.tensor([0, 1]), M.ones(2, 3))),
    ("index_copy-oob", lambda M: M.zeros(3, 4).index_copy(0, M.tensor([3]), M.ones(1, 4))),
    ("index_copy-float", lambda M: M.zeros(3, 4).index_copy(0, M.tensor([0.]), M.ones(1, 4))),
    ("index_copy-dtype", lambda M: M.zeros(3, 4).index_copy(0, M.tensor([0]), M.ones(
        1, 4, dtype=M.float64))),
    ("index_fill-oob", lambda M: M.zeros(3, 4).index_fill(0, M.tensor([3]), 1.)),
    ("index_fill-2d", lambda M: M.zeros(3, 4).index_fill(0, M.tensor([[0]]), 1.)),
    ("index_fill-value", lambda M: M.zeros(3, 4).index_fill(0, M.tensor([0]), M.ones(2))),
    ("index_fill-float", lambda M: M.zeros(3, 4).index_fill(0, M.tensor([0.]), 1.)),
    ("scatter_reduce-reduce", lambda M: M.zeros(3, 4).scatter_reduce(
        0, M.tensor([[0, 1]]), M.ones(1, 2), "bad")),
    ("scatter_reduce-dtype", lambda M: M.zeros(3, 4).scatter_reduce(
        0, M.tensor([[0, 1]]), M.ones(1, 2, dtype=M.float64), "sum")),
    ("broadcast_shapes", lambda M: M.broadcast_shapes((2, 1), (3, 3))),
    ("broadcast_tensors", lambda M: M.broadcast_tensors(M.ones(2, 1), M.ones(3, 2))),
    ("block_diag-3d", lambda M: M.block_diag(M.ones(2, 2, 2))),
    ("cartesian_prod-2d", lambda M: M.cartesian_prod(M.ones(2, 2))),
    ("combinations-negative", lambda M: M.combinations(M.ones(4), -1)),
    ("combinations-2d", lambda M: M.combinations(M.ones(2, 2))),
    ("unfold-size", lambda M: M.zeros(3, 4).unfold(1, 5, 1)),
    ("unfold-step", lambda M: M.zeros(3, 4).unfold(1, 2, 0)),
    ("unfold-dim", lambda M: M.zeros(3, 4).unfold(2, 2, 1)),
    ("unfold-0d", lambda M: M.zeros(()).unfold(0, 2, 1)),
    ("as_strided-bounds", lambda M: M.zeros(3, 4).as_strided((13,), (1,))),
    ("as_strided-negative", lambda M: M.zeros(3, 4).as_strided((3,), (-1,))),
    ("as_strided-lengths", lambda M: M.zeros(3, 4).as_strided((3, 3), (1,))),
    ("as_strided-offset", lambda M: M.zeros(3, 4).as_strided((3,), (1,), -1)),
    ("view_as_real-real", lambda M: M.view_as_real(M.zeros(3))),
    ("view_as_complex-size", lambda M: M.view_as_complex(M.zeros(3, 4))),
    ("view_as_complex-stride", lambda M: M.view_as_complex(M.zeros(3, 2).t())),
    ("view_as_complex-dtype", lambda M: M.view_as_complex(M.ones(4, 2, dtype=M.int64))),
    ("view_as_complex-strides", lambda M: M.view_as_complex(M.zeros(2, 3)[:, :2])),
    ("complex-dtypes", lambda M: M.complex(M.ones(2), M.ones(2, dtype=M.float64))),
    ("complex-ints", lambda M: M.complex(M.ones(2, dtype=M.int64), M.ones(2, dtype=M.int64))),
    ("polar-dtypes", lambda M: M.polar(M.ones(2), M.ones(2, dtype=M.float64))),
    ("diagonal_scatter-size", lambda M: M.diagonal_scatter(M.zeros(3, 4), M.ones(2))),
    ("select_scatter-size", lambda M: M.select_scatter(M.zeros(3, 4), M.ones(3), 0, 0)),
    ("slice_scatter-size", lambda M: M.slice_scatter(M.zeros(3, 4), M.ones(2, 4), 0, 0, 3)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_torch_parity_errors(torch, name, fn):
    with pytest.raises(Exception) as ref:
        fn(torch)
    with pytest.raises(type(ref.value)) as ours:
        fn(cr)
    assert str(ours.value) == str(ref.value).replace("torch.FloatTensor", "torch.FloatTensor")


@pytest.mark.parametrize("call, shape", [
    (lambda x: x.view(size=(4,)), (4,)),
    (lambda x: x.reshape(shape=(4, 1)), (4, 1)),
    (lambda x: cr.reshape(x, shape=(1, 4)), (1, 4)),
    (lambda x: x[:1].expand(size=(3, 2)), (3, 2)),
    (lambda x: x.permute(dims=(1, 0)), (2, 2)),
    (lambda x: cr.permute(x, dims=[1, 0]), (2, 2)),
    (lambda x: cr.flip(x, dims=[1]), (2, 2)),
    (lambda x: x.repeat(repeats=(1, 2)), (2, 4)),
    (lambda x: x.split(split_size=1)[0], (1, 2)),
    (lambda x: cr.swapaxes(x, axis0=0, axis1=1), (2, 2)),
    (lambda x: cr.swapdims(x, dim0=0, dim1=1), (2, 2)),
    (lambda x: cr.zeros(size=(2, 3)), (2, 3)),
    (lambda x: cr.ones(size=[3]), (3,)),
    (lambda x: cr.empty(size=(1,)), (1,)),
    (lambda x: x.new_zeros(size=(2,)), (2,)),
])
def test_sizes_and_dims_by_keyword_as_the_reference(call, shape):
    # the reference's keyword names for arguments taken here as *args
    assert tuple(call(cr.tensor([[1.0, 2.0], [3.0, 4.0]])).shape) == shape


def test_sizes_twice_is_an_error():
    with pytest.raises(TypeError, match="both as positional arguments and by keyword"):
        cr.zeros(2, size=(3,))
    assert cr.flip(cr.tensor([[1.0, 2.0]]), dims=[1]).tolist() == [[2.0, 1.0]]
    assert cr.is_complex(input=cr.zeros(1)) is False
    assert cr.promote_types(type1=cr.float32, type2=cr.int64) == cr.float32
    assert cr.matrix_power(input=cr.eye(2) * 2, n=2).tolist() == [[4.0, 0.0], [0.0, 4.0]]


def test_dim_zero_of_a_0d_tensor_in_flip_movedim_and_roll():
    # the reference treats dims 0 and -1 of a 0-d tensor as valid for flip (nothing to
    # reverse) and movedim (an alias), and roll names the dimension the tensor lacks
    x = cr.tensor(2.0, requires_grad=True)
    for flipped in (x.flip(0), x.flip(-1), cr.flip(x, (0,))):
        assert flipped.item() == 2.0 and type(flipped.grad_fn).__name__ == "FlipBackward0"
    moved = x.movedim(0, 0)
    assert moved._base is x and type(moved.grad_fn).__name__ == "AliasBackward0"
    assert type(cr.moveaxis(x, -1, 0).grad_fn).__name__ == "AliasBackward0"
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        x.roll(1, 0)
    assert x.roll(1).item() == 2.0
    assert cr.autograd.grad(x.flip(0) * moved, x)[0].item() == 4.0


def test_expand_names_the_last_mismatching_dim_as_the_reference_does():
    with pytest.raises(RuntimeError, match=r"^The expanded size of the tensor \(5\) must match "
                       r"the existing size \(7\) at non-singleton dimension 1\."):
        cr.ones(7, 7).expand(2, 5)
    with pytest.raises(RuntimeError, match=r"tensor \(4\) must match the existing size \(3\) at "
                       r"non-singleton dimension 1"):
        cr.ones(3).expand(-2, 4)
