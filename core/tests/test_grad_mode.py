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


def test_inference_tensors_do_not_track_versions():
    # issue 9, wrong today 6
    with cr.inference_mode():
        t = cr.ones(2)
        with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
            t._version
        t.add_(1)
        view = t[:1]
    for inference in (t, view, t[1:], t.detach(), t.unsqueeze(0), t.split(1)[1]):
        assert inference.is_inference()     # views of an inference tensor are ones too
        with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
            inference._version
    assert cr.ones(2)._version == 0 and t.clone()._version == 0 and not (t * 2).is_inference()


def test_numpy_of_a_tensor_that_requires_grad_when_grad_mode_is_off():
    # issue 9, wrong today 5: allowed whenever grad mode is off, like the reference
    x = cr.ones(2, requires_grad=True)
    for mode in (cr.no_grad(), cr.inference_mode(), cr.set_grad_enabled(False)):
        with mode:
            assert x.numpy().tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    assert x.numpy(force=True).tolist() == [1.0, 1.0]


def test_inference_mode_false_is_noop_and_decorator():
    with cr.inference_mode(False):
        assert cr.is_grad_enabled()
    with cr.inference_mode(), cr.inference_mode(False):       # grad mode back on
        assert cr.is_grad_enabled() and not cr.is_inference_mode_enabled()
        assert (cr.ones(1, requires_grad=True) * 2).requires_grad
    with cr.no_grad(), cr.inference_mode(False):
        assert cr.is_grad_enabled()
    assert cr.is_grad_enabled() and not cr.is_inference_mode_enabled()

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
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"
                       ".*or use `chainrule.no_grad\\(\\)` instead of `chainrule.inference_"):
        w * t
    assert (w + t).requires_grad          # add saves nothing: allowed, like the reference


def test_inference_tensor_inplace_and_requires_grad_outside_mode():
    with cr.inference_mode():
        t = cr.ones(2)
        t.add_(1)                          # fine inside
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode.*rfcs/pull/17 for more details"):
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
