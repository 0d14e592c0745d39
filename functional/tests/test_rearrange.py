"""chainrule.func.rearrange: einops patterns as reshape, permute, reshape (Note
[rearrange as reshape, permute, reshape]), their errors, and gradients."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.func import rearrange

X = np.arange(2 * 6 * 4.0).reshape(2, 6, 4)

# pattern, axis lengths, the same reordering in NumPy
CASES = [
    ("a b c -> c a b", {}, lambda x: x.transpose(2, 0, 1)),
    ("a (h w) c -> a h w c", {"h": 2}, lambda x: x.reshape(2, 2, 3, 4)),
    ("a (h w) c -> a w h c", {"w": 3}, lambda x: x.reshape(2, 2, 3, 4).transpose(0, 2, 1, 3)),
    ("a b c -> (a b) c", {}, lambda x: x.reshape(12, 4)),
    ("a b c -> (c) (b a)", {}, lambda x: x.transpose(2, 1, 0).reshape(4, 12)),
    ("... c -> c ...", {}, lambda x: x.transpose(2, 0, 1)),
    ("a ... -> (...) a", {}, lambda x: x.reshape(2, 24).T),
    ("a b c ... -> a b c ...", {}, lambda x: x),
    ("... -> ...", {}, lambda x: x),
    ("a b c -> a b c 1", {}, lambda x: x[..., None]),
    ("a b c -> a () b c", {}, lambda x: x[:, None]),
    ("a b c -> (a b c)", {}, lambda x: x.reshape(-1)),
    ("a b c -> c b a", {"c": 4}, lambda x: x.transpose(2, 1, 0)),
    ("a (b1 b2) c -> (a b2) (c b1)", {"b1": 3},
     lambda x: x.reshape(2, 3, 2, 4).transpose(0, 2, 3, 1).reshape(4, 12)),
]


@pytest.mark.parametrize("pattern, lengths, expected", CASES, ids=[c[0] for c in CASES])
def test_patterns_reorder_like_numpy(pattern, lengths, expected):
    got = rearrange(cr.tensor(X), pattern, **lengths)
    np.testing.assert_array_equal(got.numpy(), expected(X))


def test_unit_axes_on_the_left_and_a_list_of_tensors():
    x = cr.tensor(X)
    assert rearrange(x[..., None], "a b c 1 -> a b c").shape == (2, 6, 4)
    assert rearrange(x[..., None], "a b c () -> a b c").shape == (2, 6, 4)
    stacked = rearrange([x[0], x[1]], "s b c -> b (s c)")
    np.testing.assert_array_equal(stacked.numpy(), X.transpose(1, 0, 2).reshape(6, 8))


def test_gradients_flow_back_through_the_reordering():
    x = cr.tensor(X, requires_grad=True)
    y = rearrange(x, "a (h w) c -> (c w) a h", h=2)
    weights = cr.tensor(np.random.default_rng(0).standard_normal(tuple(y.shape)))
    (y * weights).sum().backward()
    back = weights.numpy().reshape(4, 3, 2, 2).transpose(2, 3, 1, 0).reshape(2, 6, 4)
    np.testing.assert_array_equal(x.grad.numpy(), back)
    assert cr.autograd.gradcheck(lambda t: rearrange(t, "a b c -> c (a b)"),
                                 cr.tensor(X[:, :2, :2], requires_grad=True))


ERRORS = [
    ("a b -> a b", {}, ValueError, r"Number of dimensions in pattern \(2\) must be equal to "
                                   r"the number of dimensions in the tensor \(3\)"),
    ("a b c -> a b", {}, ValueError, r"Identifiers only on one side of rearrange expression "
                                     r"\(should be on both\): \{'c'\}"),
    ("a b c -> a b c", {"d": 3}, ValueError, r"Identifiers not found in rearrange expression: "
                                             r"\{'d'\}"),
    ("a b c - a b c", {}, ValueError, "Pattern must contain a single '->' separator"),
    ("a a c -> a c", {}, ValueError, "Indexing expression contains duplicate dimension 'a'"),
    ("a b c -> a 2 b c", {}, ValueError, "rearrange only supports unnamed axes of size 1"),
    ("(a ...) b -> a b", {}, ValueError, r"Ellipsis is parenthesis in the left side is not "
                                         r"allowed: \(a ...\) b -> a b"),
    ("a b.c -> a b c", {}, ValueError, r"Expression may contain dots only inside ellipsis"),
    ("a b c -> (a b c", {}, ValueError, r"Imbalanced parentheses in expression: ' \(a b c'"),
    ("a b c -> a b c", {"b": 2.0}, TypeError, "rearrange axis lengths must be integers, got: "
                                              "<class 'float'>"),
    ("a b c -> a ... b c", {}, ValueError, "Ellipsis found in right side, but not left side"),
    ("_ b c -> b c _", {}, ValueError, "Invalid axis identifier: _\naxis name should should "
                                       "not start or end with underscore"),
    ("a b c d ... -> a b c d ...", {}, ValueError, r"Number of dimensions in pattern \(4\) must be "
                                               r"less than or equal to"),
]


@pytest.mark.parametrize("pattern, lengths, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_pattern_errors_are_the_references(pattern, lengths, error, message):
    with pytest.raises(error, match=message):
        rearrange(cr.tensor(X), pattern, **lengths)


@pytest.mark.parametrize("lengths, message", [
    ({}, "cannot infer the sizes of two dimensions at once d1 and d2"),
    ({"h": 4}, r"inferred dimension does not evenly fit into larger dimension: 6 vs \(4, '\?'\)"),
    ({"h": 2, "w": 2}, r"Dimension sizes to do not match \(6 != 4\) when matching dimension "
                       r"pack \(d1, d2\)"),
])
def test_lengths_that_do_not_fit_raise_dimension_bind_errors(lengths, message):
    from chainrule_functional._rearrange import DimensionBindError
    with pytest.raises(DimensionBindError, match=message):
        rearrange(cr.tensor(X), "a (h w) c -> a h w c", **lengths)
