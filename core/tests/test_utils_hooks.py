"""chainrule.utils.hooks: BackwardHook, the machinery of nn.Module's full backward
hooks in the reference, driven directly."""
import warnings

import pytest

import chainrule as cr
from chainrule.utils.hooks import BackwardHook


def _run(pre_hooks, hooks, args):
    hook = BackwardHook("module", hooks, pre_hooks)
    args = hook.setup_input_hook(args)
    out = hook.setup_output_hook((args[0] * args[2], args[3], 7))
    (out[0].sum() * 2 + out[1].sum()).backward()
    return hook, args, out


def test_hooks_see_the_gradients_with_none_for_non_tensors():
    seen = []
    a, b = cr.ones(2, requires_grad=True), cr.ones(3, requires_grad=True)
    hook, args, out = _run([lambda m, go: seen.append(("pre", m, len(go), go[2]))],
                           [lambda m, gi, go: seen.append(("hook", gi[1], go[0].tolist()))],
                           (a, "not a tensor", 5.0, b))
    assert hook.input_tensors_index == [0, 3] and hook.output_tensors_index == [0, 1]
    assert hook.n_inputs == 4 and hook.n_outputs == 3 and hook.grad_outputs is None
    assert args[1] == "not a tensor" and out[2] == 7
    assert args[0].grad_fn.name() == out[0].grad_fn.name() == "BackwardHookFunctionBackward"
    assert seen == [("pre", "module", 3, None), ("hook", None, [2.0, 2.0])]
    assert a.grad.tolist() == [10.0, 10.0] and b.grad.tolist() == [1.0] * 3


def test_hooks_may_replace_gradients_and_must_keep_their_number():
    a, b = cr.ones(2, requires_grad=True), cr.ones(3, requires_grad=True)
    _run([lambda m, go: (go[0] * 10, go[1], None)],
         [lambda m, gi, go: (gi[0] + 1, None, None, gi[3] * 0)], (a, None, 1.0, b))
    assert a.grad.tolist() == [21.0, 21.0] and b.grad.tolist() == [0.0] * 3
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of "
                                           "grad_input, got 1, but expected 4"):
        _run([], [lambda m, gi, go: (gi[0],)], (cr.ones(2, requires_grad=True), 0, 1., b))


def test_no_input_requires_grad_runs_the_hooks_at_the_outputs():
    seen, w = [], cr.ones(2, requires_grad=True)
    hook = BackwardHook(None, [lambda m, gi, go: seen.append(gi)], [])
    x = hook.setup_input_hook((cr.ones(2),))[0]
    y = hook.setup_output_hook(x * w)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.sum().backward()
    assert seen == [(None,)] and "Full backward hook is firing" in str(caught[0].message)
    assert hook.input_tensors_index is None and not BackwardHook(None, [], []).user_hooks
