"""chainrule.autograd.grad_mode: the submodule's names, set_multithreading_enabled,
enforce_grad_layout_policy and _force_original_view_tracking (functions, context
managers, decorators, thread locality, argument checks) and view replay's grad_fns."""
import threading

import pytest

import chainrule as cr
from chainrule.autograd import grad_mode


def in_other_thread(fn):
    result = []
    thread = threading.Thread(target=lambda: result.append(fn()))
    thread.start()
    thread.join()
    return result[0]


def test_submodule_names():
    assert grad_mode.no_grad is cr.no_grad and grad_mode.inference_mode is cr.inference_mode
    assert grad_mode.set_grad_enabled is cr.set_grad_enabled
    assert grad_mode.enable_grad is cr.enable_grad
    assert cr.autograd.set_multithreading_enabled is grad_mode.set_multithreading_enabled
    assert set(grad_mode.__all__) >= {"set_multithreading_enabled", "enforce_grad_layout_policy"}


def test_multithreading_switch_is_a_call_a_block_and_thread_local():
    cr.autograd.set_multithreading_enabled(False)
    try:
        assert not cr.autograd.is_multithreading_enabled()
        assert in_other_thread(cr.autograd.is_multithreading_enabled)
    finally:
        cr.autograd.set_multithreading_enabled(True)
    with cr.autograd.set_multithreading_enabled(False):
        x = cr.ones(2, requires_grad=True)
        (x * 3).sum().backward()            # backward runs on this thread either way
        assert x.grad.tolist() == [3.0, 3.0]
    assert cr.autograd.is_multithreading_enabled()


def test_multithreading_decorator_sets_the_mode_when_decorating_as_torch():
    @cr.autograd.set_multithreading_enabled(False)
    def inside():
        return cr.autograd.is_multithreading_enabled()
    try:
        assert not cr.autograd.is_multithreading_enabled()   # torch's behaviour too
        assert inside() is False
    finally:
        cr.autograd.set_multithreading_enabled(True)


def test_view_replay_switch():
    assert not cr.autograd.is_view_replay_enabled()
    with cr.autograd._force_original_view_tracking(True):
        assert cr.autograd.is_view_replay_enabled()
        assert not in_other_thread(cr.autograd.is_view_replay_enabled)
    assert not cr.autograd.is_view_replay_enabled()

    @cr.autograd._force_original_view_tracking(True)
    def inside():
        return cr.autograd.is_view_replay_enabled()
    assert not cr.autograd.is_view_replay_enabled() and inside()
    assert not cr.autograd.is_view_replay_enabled()


def _views_after_inplace():
    leaf = cr.arange(12.0, requires_grad=True)
    x = leaf.reshape(3, 4).clone()
    row, cols = x[0], x.t()[1:]
    x.mul_(2)
    return leaf, x, row, cols


def _gradients(leaf, views):
    return [cr.autograd.grad((v * v).sum(), leaf, retain_graph=True)[0] for v in views]


def test_view_replay_gives_the_views_own_history():
    with cr.autograd._force_original_view_tracking(True):
        leaf, x, row, cols = _views_after_inplace()
    assert type(row.grad_fn).__name__ == "SelectBackward0"
    assert type(cols.grad_fn).__name__ == "SliceBackward0"
    assert type(cols.grad_fn.next_functions[0][0]).__name__ == "TBackward0"
    assert row.grad_fn.next_functions[0][0] is x.grad_fn
    plain_leaf, _, row_plain, cols_plain = _views_after_inplace()
    assert type(row_plain.grad_fn).__name__ == "AsStridedBackward0"
    for a, b in zip(_gradients(leaf, (row, cols)), _gradients(plain_leaf, (row_plain, cols_plain))):
        assert cr.equal(a, b)


def test_view_replay_on_an_inplace_view_write():
    with cr.autograd._force_original_view_tracking(True):
        x = cr.ones(2, 3, requires_grad=True).clone()
        v = x[1]
        v.mul_(3)
    assert type(v.grad_fn).__name__ == "SelectBackward0"
    assert type(x.grad_fn).__name__ == "CopySlices"


def test_grad_layout_switch():
    p = cr.ones(2, 3).t().requires_grad_()
    with cr.autograd.enforce_grad_layout_policy(False):
        (p * 2).sum().backward()
    assert p.grad.stride() == p.stride()

    @cr.autograd.enforce_grad_layout_policy(False)
    def inside():
        from chainrule.autograd.grad_mode import SWITCHES
        return SWITCHES.grad_layout
    assert inside() is False and grad_mode.SWITCHES.grad_layout is True


@pytest.mark.parametrize("switch, name", [
    (cr.autograd.set_multithreading_enabled, "set_multithreading_enabled"),
    (cr.autograd._force_original_view_tracking, "set_view_replay_enabled"),
    (cr.autograd.enforce_grad_layout_policy, "set_grad_layout_enforcement_enabled")])
def test_switches_need_a_bool(switch, name):
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'enabled' \(position 1\) must "
                                        "be bool, not int"):
        switch(1)
