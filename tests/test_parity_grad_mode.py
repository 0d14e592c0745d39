"""Parity tier for chainrule.autograd's engine switches and legacy names against
PyTorch (skips without torch): set_multithreading_enabled, enforce_grad_layout_policy,
_force_original_view_tracking (the grad_fns a view gets after an in-place change of
its base), grad_mode, NestedIOFunction, SavedTensor, the profiler names."""
import threading

import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402


def _other_thread(fn):
    out = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join()
    return out[0]


def _switch_record(lib, switch, read):
    """What a switch does as a call, in a block, as a decorator and across threads."""
    record = [read()]
    with switch(False):
        record += [read(), _other_thread(read)]
    record.append(read())

    @switch(False)
    def inside():
        return read()
    record += [read(), inside(), read()]
    switch(True)
    with pytest.raises(TypeError) as info:
        switch("yes")
    return record + [str(info.value)]


def test_multithreading_switch_matches_torch():
    got = [_switch_record(lib, lib.autograd.set_multithreading_enabled,
                          lib.autograd.is_multithreading_enabled) for lib in (cr, torch)]
    assert got[0] == got[1]


def test_view_replay_switch_matches_torch():
    got = [_switch_record(lib, lib.autograd._force_original_view_tracking,
                          lib.autograd.is_view_replay_enabled) for lib in (cr, torch)]
    assert got[0] == got[1]
    torch.autograd._force_original_view_tracking(False)


def test_grad_layout_switch_matches_torch():
    messages = []
    for lib in (cr, torch):
        with pytest.raises(TypeError) as info:
            lib.autograd.enforce_grad_layout_policy(0)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    # chainrule always lays .grad out like its parameter: relaxing the policy keeps
    # torch's values but not its strides (torch may keep the incoming gradient's)
    values = []
    for lib in (cr, torch):
        p = lib.ones(2, 3).t().requires_grad_()
        with lib.autograd.enforce_grad_layout_policy(False):
            (p * 2).sum().backward()
        values.append(p.grad.tolist())
    assert values[0] == values[1]


def _view_histories(lib, replay):
    names = []
    with lib.autograd._force_original_view_tracking(replay):
        leaf = lib.arange(12.0, requires_grad=True)
        x = leaf.reshape(3, 4).clone()
        row, cols, wide = x[0], x.t()[1:], x[0].unsqueeze(0).expand(2, 4)
        x.mul_(2)
        y = leaf.reshape(3, 4).clone()
        v = y[1]
        v.add_(1)
        for t in (row, cols, wide, v, y):
            names.append(type(t.grad_fn).__name__)
        names.append(type(cols.grad_fn.next_functions[0][0]).__name__)
        loss = (row[:3] * cols[0]).sum() + (wide * lib.arange(8.0).reshape(2, 4)).sum() + (v * v).sum()
        names.append(lib.autograd.grad(loss, leaf)[0].tolist())
    return names


@pytest.mark.parametrize("replay", [True, False])
def test_view_grad_fns_after_inplace_match_torch(replay):
    assert _view_histories(cr, replay) == _view_histories(torch, replay)


def test_grad_mode_submodule_and_names_match_torch():
    assert cr.autograd.grad_mode.__all__ == torch.autograd.grad_mode.__all__
    layers = {"Variable", "variable"}        # the compat layer's (tests/test_layers.py)
    for name in set(torch.autograd.__all__) - layers:
        assert hasattr(cr.autograd, name), name
    for name in torch.autograd.grad_mode.__all__:
        assert hasattr(cr.autograd.grad_mode, name), name


def test_nested_io_function_matches_torch():
    got = []
    for lib in (cr, torch):
        class Scale(lib.autograd.NestedIOFunction):
            def forward_extended(self, pair):
                return [pair[0] * 2, (pair[1] * 3,)]

            def backward_extended(self, grad_first, grad_rest):
                return [grad_first * 2, None, grad_rest[0] * 3]
        with pytest.warns() if lib is torch else _nothing():
            f = Scale()
        f._nested_input = ([lib.ones(1), lib.ones(2)],)
        out = [t.tolist() for t in f.forward()]
        grads = [None if g is None else g.tolist() for g in f.backward(lib.ones(1), lib.ones(2))]
        f.save_for_backward(lib.ones(1), [lib.zeros(1)])
        f.mark_non_differentiable(lib.ones(1), k=[lib.zeros(1)])
        with pytest.raises(AttributeError) as info:
            Scale.__call__(f, lib.ones(1))
        got.append((out, grads, len(f.to_save), len(f.non_differentiable), str(info.value)))
    assert got[0] == got[1]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_saved_tensor_matches_torch():
    got = []
    for lib in (cr, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.pow(2)
        raw = y.grad_fn._raw_saved_self
        raw.register_hooks(lambda t: t * 10, lambda t: t)
        y.sum().backward()
        with pytest.raises(RuntimeError) as info:
            lib.autograd.SavedTensor()
        got.append((isinstance(raw, lib.autograd.SavedTensor), x.grad.tolist(), str(info.value)))
    assert got[0] == got[1]


def test_profiler_names_match_torch():
    pytest.importorskip("chainrule_profiler")
    assert cr.autograd.kineto_available() is False or torch.autograd.kineto_available()
    assert {a.name for a in cr.autograd._supported_activities()} <= \
        {a.name for a in torch.autograd._supported_activities()}
    assert cr.autograd.ProfilerActivity.CPU.name == torch.autograd.ProfilerActivity.CPU.name
