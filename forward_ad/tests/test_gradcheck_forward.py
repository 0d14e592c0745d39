"""gradcheck's forward-mode checks with the forward_ad layer (Note [forward-mode
gradcheck] in core/chainrule/autograd/_gradcheck_forward.py)."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck


def _double(*shape, complex=False, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape)
    if complex:
        values = values + 1j * rng.standard_normal(shape)
    return cr.tensor(values, requires_grad=True)


class _ScaledJvp(cr.autograd.Function):
    """sin with a correct backward and a jvp scaled by ``SCALE``."""
    SCALE = 1.1

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_forward(a)
        ctx.save_for_backward(a)
        return a.sin()

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a.cos()

    @staticmethod
    def jvp(ctx, t):
        (a,) = ctx.saved_tensors
        return t * a.cos() * _ScaledJvp.SCALE


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("backward", [True, False])
def test_forward_jacobians_of_correct_functions_pass(fast_mode, backward):
    x, z = _double(3), _double(3, complex=True, seed=1)
    for f, inputs in [(lambda a, b: ((a * b.abs()).tanh(), (b * b).exp()), (x, z)),
                      (lambda a: cr.polar(a.exp(), a), (x,))]:
        assert gradcheck(f, inputs, check_forward_ad=True, check_backward_ad=backward,
                         fast_mode=fast_mode, check_batched_forward_grad=True)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_wrong_jvp_is_caught_and_named(fast_mode):
    x = _double(3)
    assert gradcheck(_ScaledJvp.apply, (x,), fast_mode=fast_mode)      # backward is right
    with pytest.raises(cr.autograd.gradcheck.GradcheckError,
                       match="Jacobian computed with forward mode mismatch for output 0 "
                             "with respect to input 0"):
        gradcheck(_ScaledJvp.apply, (x,), check_forward_ad=True, fast_mode=fast_mode)
    assert not gradcheck(_ScaledJvp.apply, (x,), check_forward_ad=True,
                         check_backward_ad=False, raise_exception=False)


def test_forward_over_reverse_in_gradgradcheck():
    x = _double(2, 3)
    assert gradgradcheck(lambda a: a.exp() * a.sin(), (x,), check_fwd_over_rev=True)
    assert gradgradcheck(lambda a: (a * a).cumsum(1), (x,), check_fwd_over_rev=True,
                         check_rev_over_rev=False, check_undefined_grad=False)
