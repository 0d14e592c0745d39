"""src/view_maker.h: the C make_view gives what core's make_view gives — the same
values, links (base, version counter, view_fn, listing on the root), node and
gradients — in every grad mode, and declines (to Python) what it does not handle."""
import numpy as np
import pytest

import chainrule as cr
import chainrule_engine
from chainrule._ops import views
from chainrule_engine import _engine

VIEWS = {
    "view": lambda y: y.view(-1, 2), "reshape": lambda y: y.reshape(2, 6), "t": lambda y: y.t(),
    "transpose": lambda y: y.transpose(0, 1), "permute": lambda y: y.permute(1, 0),
    "unsqueeze": lambda y: y.unsqueeze(1), "squeeze": lambda y: y[:1].squeeze(0),
    "expand": lambda y: y[:1].expand(5, 4), "select": lambda y: y[1],
    "slices": lambda y: y[:, 1:3], "split": lambda y: y.split(2)[1],
    "view of a view": lambda y: y.t()[1:].unsqueeze(0), "real": lambda y: y.real,
}
MODES = {"grad": cr.enable_grad, "no_grad": cr.no_grad, "inference": cr.inference_mode}


def _facts(make, requires_grad, mode):
    x = cr.tensor(np.arange(12.0).reshape(3, 4) / 10 + 0.5, requires_grad=requires_grad)
    y = x * 1 if requires_grad else x
    with MODES[mode]():
        v = make(y)
        facts = [v.tolist(), v._base is y, v._is_view(), type(v.grad_fn).__name__,
                 v.requires_grad, v.is_inference(), v.stride(),
                 type(v._extra.view_fn) if v._extra else None]
        # Note [how a view was made]: its mark, and no accumulator under no_grad
        facts += [v._extra.creation, v._extra.grad_acc] if v._extra else [None]
        facts.append([f for f in type(v._extra).__slots__ if not hasattr(v._extra, f)]
                     if v._extra else None)          # every slot set, as _Extras() does
    root_views = y._extra.views if y._extra is not None else None
    facts.append(len(root_views) if root_views else 0)
    if not v.is_inference() and v._data.flags.writeable and make is not VIEWS["split"]:
        try:            # refused for a view made under no_grad of a recorded tensor
            v.mul_(2)
        except RuntimeError as e:
            facts.append(str(e))
        facts += [y._version, v._version is not None, type(y.grad_fn).__name__]
    if requires_grad and mode == "grad":
        y.sum().backward()
        facts.append(x.grad.tolist())
    return facts


def _python_maker():
    return views.set_view_maker(None)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("requires_grad", [True, False], ids=["recorded", "plain"])
@pytest.mark.parametrize("name", list(VIEWS))
def test_same_as_python(name, requires_grad, mode):
    _facts(VIEWS[name], requires_grad, mode)      # the op's first call fills _FAST_OPS
    got = _facts(VIEWS[name], requires_grad, mode)
    previous = _python_maker()
    try:
        expected = _facts(VIEWS[name], requires_grad, mode)
    finally:
        views.set_view_maker(previous)
    assert got == expected


def test_forward_errors_are_python_errors():
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        cr.ones(3, 4).t().view(12)


def _subclass_and_hooked_facts():
    class Sub(cr.Tensor):
        pass
    s = cr.ones(2, 3).as_subclass(Sub)
    v = s.t()
    leaf = cr.ones(2, 3, requires_grad=True)
    leaf.register_hook(lambda g: g * 2)
    leaf.t().sum().backward()
    return [type(v).__name__, v._base is s._base, v._is_view(), leaf.grad.tolist()]


def test_subclasses_and_hooked_bases_as_in_python():
    got = _subclass_and_hooked_facts()
    previous = _python_maker()
    try:
        assert got == _subclass_and_hooked_facts()
    finally:
        views.set_view_maker(previous)


def test_slot_restores_the_python_function():
    previous = _python_maker()
    try:
        assert previous is _engine.make_view
        from chainrule._ops import shape
        assert shape.make_view is views.make_view
    finally:
        views.set_view_maker(previous)
    assert views.set_view_maker(previous) is _engine.make_view


def test_turned_off_by_configuration():
    chainrule_engine._configure_view_maker(enabled=False)
    try:
        from chainrule._ops import shape
        assert shape.make_view is views.make_view
    finally:
        chainrule_engine._configure_view_maker()
    from chainrule._ops import shape
    assert shape.make_view is _engine.make_view
