"""Unit tests of gradcheck and gradgradcheck themselves: they pass correct
derivatives and catch wrong ones (throwaway table ops with broken formulas)."""
import contextlib
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import FUNCTIONS, _registry
from chainrule._ops._namespaces import ArrayNamespace
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.autograd.gradcheck import GradcheckError


def _double(*shape, seed=0, complex=False, requires_grad=True):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, shape)
    if complex:
        values = values + 1j * rng.uniform(-1, 1, shape)
    return cr.tensor(values, dtype=cr.complex128 if complex else cr.float64,
                     requires_grad=requires_grad)


@contextlib.contextmanager
def temporary_op(name, forward, vjp, inputs=("self",), formula_name=None):
    """A throwaway table op (removed from the table afterwards); with
    ``formula_name`` it is also callable from formulas as ``F.<formula_name>``."""
    op = _registry.defop(name, forward, inputs=inputs, vjp=vjp)
    if formula_name:
        setattr(ArrayNamespace, formula_name, staticmethod(forward))
        FUNCTIONS[formula_name] = lambda *ts: _registry.apply_op(op, ts, {})
    try:
        yield lambda *ts: _registry.apply_op(op, ts, {})
    finally:
        del _registry.OPS[name]
        if formula_name:
            delattr(ArrayNamespace, formula_name)
            del FUNCTIONS[formula_name]


@pytest.fixture
def wrong_square():
    """x * x whose VJP forgets the factor 2."""
    with temporary_op("_test_wrong_square", lambda a: a * a,
                      vjp=(lambda F, g, self: g * F.conj(self),)) as fn:
        yield fn


# --- correct derivatives pass -----------------------------------------------------------
@pytest.mark.parametrize("fast_mode", [False, True])
def test_passes_correct_functions(fast_mode):
    x, y = _double(3, 4), _double(4, seed=1)
    assert gradcheck(lambda a: (a * a).sin(), (x,), fast_mode=fast_mode)
    assert gradcheck(lambda a, b: a * b + a.exp(), (x, y), fast_mode=fast_mode)
    assert gradcheck(lambda a: a.sigmoid(), x, fast_mode=fast_mode)    # a bare tensor


def test_accepts_non_tensor_arguments_and_inputs_without_grad():
    x, w = _double(3), _double(3, seed=1, requires_grad=False)
    assert gradcheck(lambda a, k, b: a * k + b, (x, 3.0, w))


def test_multiple_outputs_and_non_differentiable_outputs_are_ignored():
    x = _double(2, 3)
    assert gradcheck(lambda a: (a * 2, a.exp(), a.detach() * 3, (a > 0).long()), (x,))


def test_output_that_is_the_input_or_a_view_of_it():
    x = _double(2, 3)
    assert gradcheck(lambda a: a, (x,))
    assert gradcheck(lambda a: a.reshape(6), (x,))


def test_inputs_are_restored_exactly_even_when_read_only():
    arr = np.random.default_rng(3).uniform(-1, 1, (2, 3))
    arr.setflags(write=False)
    x = cr.from_numpy(arr).requires_grad_()
    before = arr.copy()
    assert gradcheck(lambda a: a.exp(), (x,))
    assert np.array_equal(x.detach().numpy(), before)
    y = _double(2, 3)
    copy = y.detach().numpy().copy()
    gradcheck(lambda a: a.tan(), (y,))
    assert np.array_equal(y.detach().numpy(), copy)


def test_inputs_shared_with_numpy_and_saved_for_backward():
    # Their arrays are locked while a graph saves them (Note [read-only saved arrays]).
    arr = np.random.default_rng(4).uniform(-1, 1, (2, 3))
    before = arr.copy()
    x = cr.from_numpy(arr).requires_grad_()
    assert gradcheck(lambda a: a * a * a.sin(), (x,))
    assert gradgradcheck(lambda a: a * a * a.sin(), (x,))
    assert np.array_equal(arr, before)


def test_empty_and_zero_dim_inputs():
    assert gradcheck(lambda a: a.exp(), (_double(0, 3),))
    assert gradcheck(lambda a: a.exp(), (_double(),))
    assert gradcheck(lambda a: a.exp(), (_double(0, 3),), fast_mode=True)


# --- wrong derivatives are caught --------------------------------------------------------
def test_detects_a_wrong_vjp(wrong_square):
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong_square, (_double(3),))
    message = str(info.value)
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,\n"
                              "numerical:")
    assert "\nanalytical:" in message


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)
    assert gradcheck.GradcheckError is GradcheckError


def test_raise_exception_false_returns_false(wrong_square):
    assert gradcheck(wrong_square, (_double(3),), raise_exception=False) is False


def test_fast_mode_detects_a_wrong_vjp_and_shows_slow_mode_jacobians(wrong_square):
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0") as info:
        gradcheck(wrong_square, (_double(3),), fast_mode=True)
    assert "slow mode" in str(info.value)
    assert gradcheck(wrong_square, (_double(3),), fast_mode=True,
                     raise_exception=False) is False


def test_error_names_the_output_and_input(wrong_square):
    x, y = _double(3), _double(3, seed=1)
    with pytest.raises(GradcheckError, match="output 1 with respect to input 1"):
        gradcheck(lambda a, b: (a * 2, wrong_square(b)), (x, y))


def test_tolerances_are_used(wrong_square):
    x = _double(3) * 1e-3        # derivative error 2x - x = x: tiny here
    x = x.detach().requires_grad_()
    assert gradcheck(wrong_square, (x,), atol=1e-2)
    assert not gradcheck(wrong_square, (x,), atol=1e-6, rtol=1e-6, raise_exception=False)


# --- complex -------------------------------------------------------------------------
@pytest.mark.parametrize("fast_mode", [False, True])
def test_complex_functions_pass(fast_mode):
    z, x = _double(2, 3, complex=True), _double(2, 3, seed=1)
    for fn in (lambda a: a * a, lambda a: a.exp(), lambda a: a.abs(), lambda a: a.conj() * a,
               lambda a: cr.real(a) * cr.imag(a), lambda a: a.angle(), lambda a: a.sgn()):
        assert gradcheck(fn, (z,), fast_mode=fast_mode)
    assert gradcheck(lambda a, b: a * b, (z, x), fast_mode=fast_mode)      # mixed inputs
    assert gradcheck(lambda b: b * (1 + 2j), (x,), fast_mode=fast_mode)   # real -> complex


@pytest.mark.parametrize("fast_mode", [False, True])
def test_detects_a_vjp_that_forgets_the_conjugate(fast_mode):
    with temporary_op("_test_exp_no_conj", np.exp,
                      vjp=(lambda F, g, result: g * result,)) as bad_exp:
        assert gradcheck(bad_exp, (_double(3),), fast_mode=fast_mode)      # real: fine
        with pytest.raises(GradcheckError, match="While considering the (real|imaginary) part "
                                                 "of complex outputs only, Jacobian mismatch"):
            gradcheck(bad_exp, (_double(3, complex=True),), fast_mode=fast_mode)


def test_complex_input_real_output_checks_both_perturbations():
    # d|z|^2 with the imaginary direction dropped would pass a real-axis-only check.
    with temporary_op("_test_abs2_real_axis_only", lambda a: (a * np.conj(a)).real,
                      vjp=(lambda F, g, self: g * 2 * F.real(self) + self * 0,)) as bad:
        assert not gradcheck(bad, (_double(3, complex=True),), raise_exception=False)


# --- precision warnings and input errors ----------------------------------------------
def test_warns_for_inputs_that_are_not_double_precision():
    x = cr.tensor([0.5, 1.5], dtype=cr.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double "
                                         "precision floating point or complex"):
        assert gradcheck(lambda a: a * 2, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)


def test_no_warning_for_double_inputs(recwarn):
    gradcheck(lambda a: a * 2, (_double(2),))
    assert not [w for w in recwarn if "double precision" in str(w.message)]


def test_requires_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (_double(2, requires_grad=False),))


def test_rejects_overlapping_inputs():
    x = cr.from_numpy(np.broadcast_to(np.ones(3), (2, 3)).copy())
    x._data = np.broadcast_to(np.ones(3), (2, 3))        # a stride-0 leaf
    x.requires_grad_()
    with pytest.raises(RuntimeError, match="dimension with stride 0"):
        gradcheck(lambda a: a * 2, (x,))


def test_rejects_non_tensor_outputs():
    with pytest.raises(TypeError, match="output 1 is a float"):
        gradcheck(lambda a: (a * 2, 3.0), (_double(2),))


def test_function_without_differentiable_outputs():
    x = _double(3)
    assert gradcheck(lambda a: (a > 0).long(), (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be "
                                             "zero"):
        gradcheck(lambda a: a.detach() * 2, (x,))


# --- reentrancy, zero and undefined output gradients --------------------------------------
def _noisy_backward(scale):
    rng = np.random.default_rng(5)

    def fn(a):
        y = a * 1
        y.register_hook(lambda g: g * (1 + float(rng.normal()) * scale))
        return y
    return fn


def test_nondeterministic_backward_fails_unless_nondet_tol_allows_it():
    x = _double(3)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(_noisy_backward(1e-7), (x,))
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(_noisy_backward(1e-7), (x,), fast_mode=True)
    assert gradcheck(_noisy_backward(1e-7), (x,), nondet_tol=1e-5)
    assert gradcheck(_noisy_backward(1e-7), (x,), nondet_tol=1e-5, fast_mode=True)


def test_backward_must_be_multiplied_by_grad_output():
    with temporary_op("_test_ignores_grad", lambda a: a.copy(),
                      vjp=(lambda F, g: F.ones_like(g),)) as bad:
        with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
            gradcheck(bad, (_double(1),))


def _pre_hooked(hook):
    def fn(a):
        y = a * 2
        y.grad_fn.register_prehook(hook)
        return y
    return fn


def test_undefined_output_grads_must_be_handled():
    crashes_on_none = _pre_hooked(lambda grads: (grads[0] * 1,))
    with pytest.raises(GradcheckError, match="handle undefined output grads"):
        gradcheck(crashes_on_none, (_double(3),))
    assert gradcheck(crashes_on_none, (_double(3),), check_undefined_grad=False)


def test_undefined_output_grads_must_give_zero_or_undefined_input_grads():
    fills_ones = _pre_hooked(lambda grads: (cr.ones(3, dtype=cr.float64)
                                            if grads[0] is None else grads[0],))
    with pytest.raises(GradcheckError, match="Expected all input grads to be undefined or "
                                             "zero"):
        gradcheck(fills_ones, (_double(3),))


def test_undefined_grads_one_output_at_a_time():
    x = _double(2, 3)
    assert gradcheck(lambda a: (a * 2, a.exp(), a), (x,))


# --- options -----------------------------------------------------------------------------
def test_check_grad_dtypes_and_batched_grad_pass_on_correct_functions():
    x, z = _double(2, 3), _double(3, complex=True, seed=2)
    assert gradcheck(lambda a, b: (a * 2).sum() * b, (x, z), check_grad_dtypes=True,
                     check_batched_grad=True)


def test_forward_mode_checks_name_the_forward_ad_layer(monkeypatch):
    monkeypatch.setitem(sys.modules, "chainrule_forward_ad", None)     # not installed
    x = _double(2)
    with pytest.raises(NotImplementedError, match="chainrule-forward-ad"):
        gradcheck(lambda a: a * 2, (x,), check_forward_ad=True)
    with pytest.raises(NotImplementedError, match="chainrule-forward-ad"):
        gradgradcheck(lambda a: a * 2, (x,), check_fwd_over_rev=True)


def test_inconsistent_flags():
    x = _double(2)
    with pytest.raises(ValueError, match="at least one of check_forward_ad or "
                                         "check_backward_ad"):
        gradcheck(lambda a: a, (x,), check_backward_ad=False)
    with pytest.raises(ValueError, match="check_batched_grad=True requires check_backward_ad"):
        gradcheck(lambda a: a, (x,), check_backward_ad=False, check_forward_ad=True,
                  check_batched_grad=True)
    with pytest.raises(ValueError, match="check_rev_over_rev"):
        gradgradcheck(lambda a: a, (x,), check_rev_over_rev=False)


# --- gradgradcheck --------------------------------------------------------------------
@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_passes_correct_functions(fast_mode):
    x, z = _double(2, 3), _double(3, complex=True, seed=1)
    assert gradgradcheck(lambda a: a.exp() * a.sin(), (x,), fast_mode=fast_mode)
    assert gradgradcheck(lambda a, b: (a * b, a.tanh()), (x, _double(3, seed=2)),
                         fast_mode=fast_mode)
    assert gradgradcheck(lambda a: (a * a).exp(), (z,), fast_mode=fast_mode)


def test_gradgradcheck_with_given_and_non_contiguous_grad_outputs():
    x = _double(2, 3)
    g = _double(2, 3, seed=4)
    assert gradgradcheck(lambda a: a.exp() * a, (x,), (g,))
    assert gradgradcheck(lambda a: a.exp() * a, (x,), gen_non_contig_grad_outputs=True)


def test_gradgradcheck_detects_a_wrong_second_derivative():
    # The first derivative has the right values (2 * x * g) but is built with an op whose
    # own VJP is wrong: only the second-order check can see it.
    with temporary_op("_test_bad_double", lambda a: 2 * a, formula_name="_test_bad_double",
                      vjp=(lambda F, g: 3 * g,)):
        with temporary_op("_test_square", lambda a: a * a,
                          vjp=(lambda F, g, self: g * F._test_bad_double(self),)) as square:
            x = _double(3)
            assert gradcheck(square, (x,))
            with pytest.raises(GradcheckError, match="Jacobian mismatch"):
                gradgradcheck(square, (x,))
            assert gradgradcheck(square, (x,), raise_exception=False) is False
