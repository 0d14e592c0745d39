"""_ops/aliases.py: aliases, in-place forms, chainrule.X_ functions, in-place views and
small predicates (their values; torch parity is tests/programs/aliases_and_inplace_forms)."""
import pytest

import chainrule as cr

X = cr.tensor([1.0, 2.0, 3.0])


def test_aliases_are_the_same_functions():
    # the method and the function are two dispatching wrappers of one function, like
    # the reference's two objects (Note [torch function slot])
    assert cr.greater is cr.gt and cr.less_equal is cr.le
    assert cr.Tensor.not_equal.__wrapped__ is cr.ne.__wrapped__
    assert cr.unsafe_chunk is cr.chunk


@pytest.mark.parametrize("name, expected", [("eq_", [0, 1, 0]), ("lt_", [1, 0, 0]),
                                            ("greater_equal_", [0, 1, 1])])
def test_inplace_comparisons_keep_the_dtype(name, expected):
    y = X.clone()
    assert getattr(y, name)(2) is y and y.tolist() == expected and y.dtype == cr.float32
    assert y._version == 1


def test_function_forms_write_into_their_argument():
    z = cr.tensor([-0.5, 2.0])
    assert cr.relu_(z) is z and z.tolist() == [0.0, 2.0]
    assert cr.threshold_(cr.tensor([-1.0, 2.0]), 0.0, 5.0).tolist() == [5.0, 2.0]
    assert cr.rsub(X, 5, alpha=2).tolist() == [3.0, 1.0, -1.0]


def test_inplace_views_take_the_views_shape_and_history():
    z = cr.ones(2, 3)
    z.t_()
    assert z.shape == (3, 2) and z.stride() == (1, 3) and z._version == 1
    leaf = cr.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.unsqueeze_(0)
    b = leaf * 2
    b.unsqueeze_(0)
    b.sum().backward()
    assert b.shape == (1, 2) and leaf.grad.tolist() == [2.0, 2.0]


def test_predicates_and_properties():
    assert X.type_as(cr.zeros(1, dtype=cr.float64)).dtype == cr.float64
    assert (X.nbytes, X.itemsize, X.is_cpu, X.output_nr) == (12, 4, True, 0)
    assert cr.zeros(2, 3).t().dim_order() == (1, 0)
    assert cr.is_same_size(cr.ones(2), cr.zeros(2)) and not cr.is_nonzero(cr.tensor([0.0]))
    assert not cr.tensor([1], dtype=cr.uint8).is_signed() and X.is_signed()
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        cr.is_nonzero(cr.ones(2))


def test_sum_to_size_and_split_with_sizes():
    assert cr.ones(2, 3).sum_to_size(1, 3).tolist() == [[2.0, 2.0, 2.0]]
    with pytest.raises(RuntimeError, match=r"size \{\[4\]\} is not expandable"):
        cr.ones(2, 3).sum_to_size(4)
    with pytest.raises(RuntimeError, match="split_sizes to sum exactly to 5"):
        cr.arange(5).split_with_sizes([2, 2])


def test_layout_memory_format_and_dense_predicates():
    x = cr.arange(6.0).reshape(2, 3)
    assert x.layout is cr.strided and repr(cr.channels_last) == "chainrule.channels_last"
    assert not (x.is_sparse or x.is_quantized or x.is_nested or x.is_shared())
    assert x.share_memory_() is x and x.to_dense() is x
    assert x.t().ravel().tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def test_fill_diagonal_renorm_apply_map():
    z = cr.zeros(5, 2)
    z.fill_diagonal_(1, wrap=True)
    assert z.tolist() == [[1, 0], [0, 1], [0, 0], [1, 0], [0, 1]]
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        cr.zeros(2, 3, 4).fill_diagonal_(1)
    x = cr.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=cr.float64, requires_grad=True)
    assert cr.autograd.gradcheck(lambda t: cr.renorm(t, 2, 0, 2.5), (x,))
    a = cr.tensor([1.0, 2.0])
    assert a.apply_(lambda v: v * 10).map_(cr.tensor([1.0, 1.0]), lambda u, v: u + v).tolist() \
        == [11.0, 21.0]
