"""chainrule.autograd.forward_ad: levels, dual tensors, errors, in-place ops and views,
custom Functions, and forward/reverse compositions."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
from chainrule._ops import _registry
from chainrule.autograd import tangent_slot

from docstring_runner import failed_examples


def _f64(values):
    return cr.tensor(values, dtype=cr.float64)


def _tangent(t):
    return fwAD.unpack_dual(t).tangent


# --- levels -------------------------------------------------------------------------
def test_level_registers_slots_only_while_active():
    assert _registry._dispatch is None and tangent_slot.SLOT is None
    with fwAD.dual_level() as level:
        assert level == 0
        assert _registry._dispatch is not None and tangent_slot.SLOT is not None
    assert _registry._dispatch is None and tangent_slot.SLOT is None


def test_tangents_are_dropped_when_the_level_exits():
    with fwAD.dual_level():
        d = fwAD.make_dual(_f64([1.0]), _f64([2.0]))
        y = d * 3
        assert _tangent(y).tolist() == [6.0]
    assert _tangent(d) is None and _tangent(y) is None
    with fwAD.dual_level():
        assert _tangent(y) is None


def test_enter_and_exit_by_hand_and_level_errors():
    level = fwAD.enter_dual_level()
    try:
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="Trying to exit a forward AD level that was not "
                                               "the last one"):
            fwAD.exit_dual_level(level=3)
    finally:
        fwAD.exit_dual_level(level=level)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number."):
        fwAD.exit_dual_level()


def test_nesting_dual_levels_raises_like_the_reference():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            with fwAD.dual_level():
                pass                                    # pragma: no cover
        assert _registry._dispatch is not None
    assert _registry._dispatch is None          # the failed inner enter left nothing behind
    with fwAD.dual_level() as again:
        assert again == 0                       # levels are re-numbered from 0


def test_exit_checks_the_level_before_it_checks_one_exists():
    # the reference: a level other than the current one (-1 when none) is "not the last
    # one"; exiting the "current" level when there is none is "a positive number"
    with pytest.raises(RuntimeError, match="not the last one that was created"):
        fwAD.exit_dual_level(level=0)
    with pytest.raises(RuntimeError, match="not the last one that was created"):
        fwAD.exit_dual_level(level=-2)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number."):
        fwAD.exit_dual_level(level=-1)
    with fwAD.dual_level():
        for wrong in (1, -1, -2):
            with pytest.raises(RuntimeError, match="not the last one that was created"):
                fwAD.exit_dual_level(level=wrong)


def test_make_dual_level_argument_like_the_reference():
    x, i = _f64([1.0, 2.0]), cr.tensor([1, 2])
    three = _f64([1.0, 2.0, 3.0])
    cases = [  # (level, primal, tangent, error type, message), outside any level
        (-1, x, x, RuntimeError, "no level exists, make sure to enter_dual_level"),
        (-1, i, x, RuntimeError, "no level exists"),            # before the dtype check
        (0, i, x, ValueError, "Expected primal to be floating point"),
        (1, x, three, RuntimeError, "Invalid level given to _make_dual"),   # before sizes
        (0, x, three, RuntimeError, r"Tensor is of size \[2\]"),
        (0, x, x, RuntimeError, "Trying to access a forward AD level with an invalid index. "
                                "This index was either not created or is already deleted."),
        (5, x, x, RuntimeError, "Invalid level given to _make_dual")]
    for level, primal, tangent, error, message in cases:
        with pytest.raises(error, match=message):
            fwAD.make_dual(primal, tangent, level=level)
    with fwAD.dual_level():
        assert _tangent(fwAD.make_dual(x, x, level=0)) is x
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(x, three, level=2)
        with pytest.raises(RuntimeError, match="no level exists"):
            fwAD.make_dual(x, x, level=-1)


def test_unpack_dual_level_argument_like_the_reference():
    x, t = _f64([1.0]), _f64([2.0])
    for level in (None, -1, -3):
        assert fwAD.unpack_dual(x, level=level).primal is x      # no level: x itself
    outside = fwAD.unpack_dual(x, level=5)
    assert outside.tangent is None and outside.primal is not x   # a view of x
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        assert fwAD.unpack_dual(d, level=0).tangent is t
        negative = fwAD.unpack_dual(d, level=-1)
        assert negative.primal is d and negative.tangent is None
        for with_tangent in (d, d * 2, d[0:1]):
            with pytest.raises(RuntimeError, match="Invalid level given to _fw_primal"):
                fwAD.unpack_dual(with_tangent, level=3)
        plain = fwAD.unpack_dual(x, level=3)                     # no tangent: no error
        assert plain.tangent is None and plain.primal is not x
    assert fwAD.unpack_dual(d, level=3).tangent is None          # its level is gone


def test_dual_level_as_decorator():
    @fwAD.dual_level()
    def jvp_of_square(x, t):
        return _tangent(fwAD.make_dual(x, t) ** 2)
    assert jvp_of_square(_f64([3.0]), _f64([1.0])).tolist() == [6.0]
    assert _registry._dispatch is None


# --- make_dual / unpack_dual ----------------------------------------------------------
def test_make_dual_errors():
    x = _f64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[2\] while the given forward "
                                               r"gradient is of size \[3\]"):
            fwAD.make_dual(x, _f64([1.0, 2.0, 3.0]))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, "
                                             "but got: chainrule.int64"):
            fwAD.make_dual(cr.tensor([1, 2]), x)
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(x, cr.tensor([1, 2]))
        d = fwAD.make_dual(x, x)
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same level"):
            fwAD.make_dual(d, x)
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(x, x, level=5)
        with pytest.raises(RuntimeError, match="Invalid level given to _fw_primal"):
            fwAD.unpack_dual(d, level=5)


def test_unpack_dual_returns_named_tuple_with_the_tangent_itself():
    x, t = _f64([1.0]), _f64([2.0])
    assert fwAD.unpack_dual(x) == (x, None)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        unpacked = fwAD.unpack_dual(d)
        assert isinstance(unpacked, fwAD.UnpackedDualTensor)
        assert unpacked.tangent is t and unpacked[1] is t
        assert unpacked.primal._base is x and _tangent(unpacked.primal) is None
        assert np.shares_memory(d.numpy(), x.numpy())
        d.add_(1)
        assert x._version == d._version == 1 and x.tolist() == [2.0]


def test_make_dual_returns_a_view_of_the_primal_as_the_reference_does():
    root = _f64([1.0, 2.0, 3.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(root, _f64([1.0, 1.0, 1.0]))
        assert d._is_view() and d._base is root and _tangent(root) is None
        of_view = fwAD.make_dual(root[1:], _f64([5.0, 5.0]))
        assert of_view._base is root                   # linked to the root, like any view
        s = of_view.as_strided((2,), (1,), 1)          # strides into the root's memory
        assert s.tolist() == [2.0, 3.0] and _tangent(s).tolist() == [5.0, 5.0]
        leaf = cr.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            fwAD.make_dual(leaf, _f64([1.0]).float()).add_(1)
        made = fwAD.make_dual(leaf * 2, _f64([1.0]).float())
        assert made._base.grad_fn.name() == "MulBackward0"


def test_make_dual_keeps_the_gradient_path_to_the_primal():
    x = _f64([1.0, 2.0]).requires_grad_()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, _f64([1.0, 1.0]))
        (d * d).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_detach_drops_the_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(_f64([1.0]), _f64([1.0]))
        assert _tangent(d.detach()) is None


def test_op_without_forward_rule_raises_naming_it():
    with fwAD.dual_level():
        d = fwAD.make_dual(_f64([3.0]), _f64([1.0]))
        with pytest.raises(NotImplementedError,
                           match="Trying to use forward AD with aten::floor_divide that does "
                                 "not support it"):
            cr.floor_divide(d, d)
        with pytest.raises(NotImplementedError,       # no silent zero for `input`'s tangent
                           match="forward AD with igamma that does not support it because"):
            cr.special.gammainc(d, _f64([2.0]))


def test_inputs_without_tangent_count_as_zero():
    with fwAD.dual_level():
        d = fwAD.make_dual(_f64([2.0]), _f64([1.0]))
        assert _tangent(d * _f64([5.0])).tolist() == [5.0]
        assert _tangent(_f64([5.0]) - d).tolist() == [-1.0]
        assert _tangent(_f64([5.0]) + 1) is None


# --- in-place ops and views ------------------------------------------------------------
def test_inplace_on_dual_updates_its_tangent_in_place():
    with fwAD.dual_level():
        t = _f64([1.0, 1.0])
        d = fwAD.make_dual(_f64([1.0, 2.0]), t)
        d.mul_(d)
        assert _tangent(d) is t and t.tolist() == [2.0, 4.0]


def test_inplace_gives_a_plain_tensor_a_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(_f64([1.0, 2.0]), _f64([3.0, 4.0]))
        y = cr.zeros(2, dtype=cr.float64)
        y.add_(d)
        assert _tangent(y).tolist() == [3.0, 4.0]
        y.copy_(d)                         # the tangent is a copy, not d's
        y.mul_(2)
        assert _tangent(d).tolist() == [3.0, 4.0]


def test_views_share_the_tangent():
    with fwAD.dual_level():
        t = _f64([[1.0, 2.0], [3.0, 4.0]])
        d = fwAD.make_dual(cr.zeros(2, 2, dtype=cr.float64), t)
        view = d.transpose(0, 1)[0]
        assert _tangent(view).tolist() == [1.0, 3.0]
        view.mul_(10)
        assert t.tolist() == [[10.0, 2.0], [30.0, 4.0]]


def test_inplace_on_view_of_plain_base_gives_the_base_a_tangent():
    with fwAD.dual_level():
        base = cr.zeros(4, dtype=cr.float64)
        view = base[1:3]
        view.copy_(fwAD.make_dual(_f64([1.0, 2.0]), _f64([5.0, 6.0])))
        assert _tangent(base).tolist() == [0.0, 5.0, 6.0, 0.0]
        assert _tangent(view).tolist() == [5.0, 6.0]


def test_inplace_on_view_of_a_detached_view_gives_the_detached_tensor_a_tangent():
    # Note [views of a detached tensor]: the view's root is the detached tensor
    memory = cr.zeros(3, 4, dtype=cr.float64)
    detached = memory[:, 1:3].detach()
    with fwAD.dual_level():
        view = detached.t()
        view.copy_(fwAD.make_dual(cr.ones(2, 3, dtype=cr.float64), _f64([[1.0] * 3, [2.0] * 3])))
        assert _tangent(detached).tolist() == [[1.0, 2.0]] * 3
        assert _tangent(memory) is None
    assert memory[:, 1:3].tolist() == [[1.0, 1.0]] * 3


def test_setitem_with_dual_value():
    with fwAD.dual_level():
        base = cr.zeros(3, dtype=cr.float64)
        base[cr.tensor([0, 2])] = fwAD.make_dual(_f64([1.0, 2.0]), _f64([7.0, 8.0]))
        assert _tangent(base).tolist() == [7.0, 0.0, 8.0]


# --- custom Functions ------------------------------------------------------------------
class Scale(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, k):
        assert _tangent(x) is None            # forward sees no tangents
        ctx.save_for_forward(x, y)
        ctx.k = k
        return x * y * k

    @staticmethod
    def backward(ctx, g):
        return None, None, None

    @staticmethod
    def jvp(ctx, tx, ty, tk):
        x, y = ctx.saved_tensors
        assert tk is None and ty.tolist() == [0.0, 0.0]
        return (tx * y + x * ty) * ctx.k


class Exp(cr.autograd.Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, t):
        (result,) = ctx.saved_tensors
        return t * result


class NoJvp(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_function_jvp_with_save_for_forward():
    with fwAD.dual_level():
        d = fwAD.make_dual(_f64([1.0, 2.0]), _f64([1.0, 1.0]))
        out = Scale.apply(d, _f64([3.0, 4.0]), 2.0)
        assert out.tolist() == [6.0, 16.0] and _tangent(out).tolist() == [6.0, 8.0]


def test_setup_context_style_function_jvp():
    with fwAD.dual_level():
        d = fwAD.make_dual(_f64([0.0, 1.0]), _f64([2.0, 1.0]))
        out = Exp.apply(d)
        np.testing.assert_allclose(_tangent(out).numpy(), [2.0, np.e])


def test_function_without_jvp_raises_the_reference_message():
    with fwAD.dual_level():
        d = fwAD.make_dual(_f64([1.0]), _f64([1.0]))
        with pytest.raises(NotImplementedError, match="You must implement the jvp function for "
                                                      "custom autograd.Function"):
            NoJvp.apply(d)
        assert _tangent(NoJvp.apply(_f64([1.0]))) is None


# --- compositions ----------------------------------------------------------------------
def test_reverse_over_forward():
    p = _f64([0.5, 1.0]).requires_grad_()
    t = _f64([1.0, 0.0]).requires_grad_()
    with fwAD.dual_level():
        jvp = _tangent((fwAD.make_dual(p, t) ** 3).sum())
        gp, gt = cr.autograd.grad(jvp, (p, t))
    assert jvp.item() == pytest.approx(0.75)
    assert gp.tolist() == [3.0, 0.0] and gt.tolist() == [0.75, 3.0]


def test_forward_over_reverse_hvp():
    x = _f64([0.5, -1.0, 2.0]).requires_grad_()
    v = _f64([1.0, 2.0, -1.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        (g,) = cr.autograd.grad((d.sin() * d).sum(), d, create_graph=True)
        hvp = _tangent(g)
    xs, vs = x.detach().numpy(), v.numpy()
    expected = (2 * np.cos(xs) - xs * np.sin(xs)) * vs
    np.testing.assert_allclose(hvp.detach().numpy(), expected)


def test_matches_finite_differences_through_an_mlp():
    cr.manual_seed(0)
    w1, w2 = cr.randn(4, 3, dtype=cr.float64), cr.randn(2, 4, dtype=cr.float64)
    x, v = cr.randn(3, dtype=cr.float64), cr.randn(3, dtype=cr.float64)

    def f(x):
        return cr.nn.functional.softmax(w2 @ cr.tanh(w1 @ x), dim=0)
    with fwAD.dual_level():
        jvp = _tangent(f(fwAD.make_dual(x, v)))
    eps = 1e-6
    fd = (f(x + eps * v) - f(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(jvp.numpy(), fd.numpy(), atol=1e-8)



def test_docstring_examples():
    assert failed_examples("chainrule_forward_ad") == 0


def test_a_dual_prints_its_tangent_like_the_reference():
    # Note [tangent slot]: tangent_of; the suffix wraps past the line width
    with fwAD.dual_level():
        d = fwAD.make_dual(cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0]))
        assert repr(d * 2) == "tensor([2., 4.], tangent=tensor([6., 8.]))"
        x = cr.tensor([1.0, 2.0], requires_grad=True)
        assert repr(fwAD.make_dual(x, cr.ones(2)) * 3) == (
            "tensor([3., 6.], grad_fn=<MulBackward0>,\n"
            "       tangent=tensor([3., 3.], grad_fn=<AddBackward0>))")
    assert repr(d) == "tensor([1., 2.])"


def test_dual_and_primal_nodes_are_the_references():
    # make_dual records a ViewBackward0 to the same shape, unpack_dual's primal the
    # reference's torch::autograd::Identity (shown as <Identity> in a repr)
    x = cr.tensor([1.0, 2.0], dtype=cr.float64, requires_grad=True)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x * 2, cr.ones(2, dtype=cr.float64))
        primal = fwAD.unpack_dual(dual).primal
        assert dual.grad_fn.name() == "ViewBackward0"
        assert dual.grad_fn.next_functions[0][0].name() == "MulBackward0"
        assert primal.grad_fn.name() == "torch::autograd::Identity"
        assert primal.grad_fn.next_functions[0][0] is dual.grad_fn
        assert "grad_fn=<Identity>" in repr(primal)
        assert fwAD.unpack_dual(x).primal.grad_fn.name() == "torch::autograd::Identity"
        (primal * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
