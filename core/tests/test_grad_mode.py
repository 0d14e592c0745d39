"""no_grad, enable_grad, set_grad_enabled, inference_mode: context managers,
decorators (also on generators), nesting."""
import pytest

import chainrule as cr


def test_no_grad_context_and_decorator():
    x = cr.ones(2, requires_grad=True)
    with cr.no_grad():
        assert not (x * 2).requires_grad

    @cr.no_grad()
    def f():
        return x * 2
    assert not f().requires_grad
    assert (x * 2).requires_grad


def test_enable_grad_inside_no_grad():
    x = cr.ones(2, requires_grad=True)
    with cr.no_grad():
        with cr.enable_grad():
            assert (x * 2).requires_grad
        assert not cr.is_grad_enabled()


def test_set_grad_enabled_function_context_decorator():
    x = cr.ones(1, requires_grad=True)
    cr.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        cr.set_grad_enabled(True)
    with cr.set_grad_enabled(False):
        assert not cr.is_grad_enabled()
    assert cr.is_grad_enabled()

    @cr.set_grad_enabled(False)
    def f():
        return cr.is_grad_enabled()
    assert f() is False and cr.is_grad_enabled()


def test_set_grad_enabled_rejects_non_bool():
    with pytest.raises(TypeError):
        cr.set_grad_enabled(1)


def test_no_grad_decorates_generator():
    @cr.no_grad()
    def gen():
        yield cr.is_grad_enabled()
        yield cr.is_grad_enabled()
    assert list(gen()) == [False, False]
    assert cr.is_grad_enabled()


def test_no_grad_restores_after_exception():
    with pytest.raises(ValueError):
        with cr.no_grad():
            raise ValueError
    assert cr.is_grad_enabled()


def test_inference_mode_makes_inference_tensors():
    x = cr.ones(2, requires_grad=True)
    with cr.inference_mode():
        y = x * 2
        assert not cr.is_grad_enabled() and cr.is_inference_mode_enabled()
    assert y.is_inference() and not y.requires_grad
    assert not cr.is_inference_mode_enabled()


def test_inference_mode_false_is_noop_and_decorator():
    with cr.inference_mode(False):
        assert cr.is_grad_enabled()

    @cr.inference_mode()
    def f():
        return cr.is_inference_mode_enabled()
    assert f() is True


def test_no_grad_class_decoration_rejected():
    with pytest.raises(TypeError):
        @cr.no_grad()
        class C:
            pass


def test_autograd_exports_grad_modes():
    assert cr.autograd.no_grad is cr.no_grad
    assert cr.autograd.set_grad_enabled is cr.set_grad_enabled


def test_inference_tensor_in_recorded_op_is_error():
    with cr.inference_mode():
        t = cr.ones(2)
    w = cr.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        w * t
    assert (w + t).requires_grad          # add saves nothing: allowed, like the reference


def test_inference_tensor_inplace_and_requires_grad_outside_mode():
    with cr.inference_mode():
        t = cr.ones(2)
        t.add_(1)                          # fine inside
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode"):
        t.add_(1)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor"):
        t.requires_grad_()


def test_inference_mode_nested_with_enable_grad():
    x = cr.ones(1, requires_grad=True)
    with cr.inference_mode():
        with cr.enable_grad():
            assert cr.is_grad_enabled()
        assert not cr.is_grad_enabled()
    assert (x * 2).requires_grad
