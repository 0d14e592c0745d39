"""chainrule.overrides and the __torch_function__ protocol (_torch_function.py): subclass
propagation, user overrides on subclasses and tensor-likes, modes, NotImplemented, the
helpers, and autograd with subclasses."""
import collections

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import _torch_function
from chainrule.overrides import (TorchFunctionMode, get_default_nowrap_functions,
                                 get_ignored_functions, get_overridable_functions,
                                 handle_torch_function, has_torch_function,
                                 has_torch_function_unary, has_torch_function_variadic,
                                 is_tensor_like, is_tensor_method_or_property, resolve_name,
                                 wrap_torch_function)


class Plain(cr.Tensor):
    pass


class Logged(cr.Tensor):
    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs)


class Like:
    """A tensor-like: no Tensor, a __torch_function__."""
    handled = {}

    def __init__(self, value):
        self.value = value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func not in cls.handled:
            return NotImplemented
        return cls.handled[func](*args, **(kwargs or {}))


@pytest.fixture
def dispatch_off():
    """Dispatch as in a process where nothing has turned it on yet."""
    saved = _torch_function.ON[0]
    _torch_function.ON[0] = False
    yield
    _torch_function.ON[0] = saved


# --- subclass propagation ------------------------------------------------------------------
def test_results_keep_the_subclass():
    t = cr.tensor([1.0, -2.0, 3.0]).as_subclass(Plain)
    for out in (t + 1, 1 - t, cr.sin(t), t.sum(), t[0], t.T, F.relu(t), t.detach(),
                cr.linalg.norm(t), t.max(0).values, cr.stack([t, t])):
        assert type(out) is Plain
    r = t.max(0)
    assert type(r) is cr.return_types.max and type(r.indices) is Plain
    assert [type(p) for p in t.split(1)] == [Plain] * 3
    assert type(t.shape) is cr.Size and type(t.tolist()) is list and type(t.dim()) is int
    assert type(cr.ones(3) * t) is Plain


def test_constructors():
    base = cr.tensor([1, 2])
    t = Plain(base)
    assert type(t) is Plain and t is not base and t.dtype == cr.int64
    assert t.data_ptr() == base.data_ptr()
    assert type(Plain([1, 2])) is Plain and Plain([1, 2]).dtype == cr.float32
    assert Plain(2, 3).shape == (2, 3)
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        Plain("a")
    with pytest.raises(TypeError, match="Creating a Tensor subclass from a class that does not "
                                        "inherit from Tensor"):
        base.as_subclass(int)
    assert repr(Plain([1.0, 2.0])) == "Plain([1., 2.])"


def test_subclass_with_its_own_new_and_init():
    class Tagged(cr.Tensor):
        @staticmethod
        def __new__(cls, data, tag):
            return super().__new__(cls, data)

        def __init__(self, data, tag):
            self.tag = tag
    t = Tagged(cr.ones(2), "w")
    assert type(t) is Tagged and t.tag == "w" and (t * 2).tolist() == [2.0, 2.0]


def test_parameters_and_buffers_give_plain_tensors():
    p = cr.nn.Parameter(cr.ones(2))
    assert type(p * 2) is cr.Tensor and type(p.detach()) is cr.Tensor
    assert cr.nn.Parameter.__torch_function__ is cr._C._disabled_torch_function_impl

    class MyParam(cr.nn.Parameter):
        pass
    assert type(MyParam(cr.ones(2)) * 2) is cr.Tensor


def test_disable_torch_function_subclass():
    t = cr.ones(2).as_subclass(Plain)
    with cr._C.DisableTorchFunctionSubclass():
        assert type(t + 1) is cr.Tensor and not cr._C._is_torch_function_enabled()
    assert type(t + 1) is Plain and cr._C._is_torch_function_enabled()


# --- user overrides ------------------------------------------------------------------------
def test_logging_subclass_sees_functions_methods_properties_and_operators():
    t = cr.ones(2).as_subclass(Logged)
    Logged.calls.clear()
    t + 1
    t.sin()
    cr.mul(t, 2)
    t.shape
    F.relu(t)
    t[0]
    cr.linalg.vector_norm(t)
    assert Logged.calls == ["add", "sin", "mul", "__get__", "relu", "__getitem__",
                            "linalg_vector_norm"]


def test_tensor_like_dispatch_and_not_implemented():
    Like.handled = {cr.mean: lambda x: x.value / 2}
    assert cr.mean(Like(3.0)) == 1.5
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'chainrule.add'; all "
                                        "__torch_function__ handlers returned NotImplemented"):
        cr.add(Like(1.0), 1)
    with pytest.raises(TypeError, match="no implementation found for "
                                        "'chainrule.nn.functional.relu'"):
        F.relu(Like(1.0))


@pytest.mark.usefixtures("dispatch_off")
def test_a_tensor_like_met_first_turns_dispatch_on():
    Like.handled = {cr.sum: lambda x, dim=None: ("sum", x.value, dim)}
    assert cr.sum(Like(2.0), dim=0) == ("sum", 2.0, 0)
    assert _torch_function.ON[0]


@pytest.mark.usefixtures("dispatch_off")
def test_a_tensor_like_operand_of_an_operator():
    seen = []

    class Other:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func.__name__, [type(a).__name__ for a in args]))
            return "handled"
    assert cr.ones(2) + Other() == "handled"
    assert seen == [("add", ["Tensor", "Other"])]


def test_types_order_puts_subclasses_first_and_the_arguments_as_given():
    class Sub(Logged):
        pass
    got = []

    class Record(cr.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            got.append((types, args, kwargs))
            return "r"
    a = cr.ones(1).as_subclass(Logged)
    b = cr.ones(1).as_subclass(Sub)
    assert [type(x) for x in _torch_function.overloaded_args([a, 1, b, a])] == [Sub, Logged]
    r = cr.ones(1).as_subclass(Record)
    assert cr.add(r, 2, alpha=3) == "r" and got[-1] == ((Record,), (r, 2), {"alpha": 3})
    assert cr.add(r, 2) == "r" and got[-1] == ((Record,), (r, 2), {})


def test_default_torch_function_refuses_unrelated_types():
    class A(cr.Tensor):
        pass

    class B(cr.Tensor):
        pass
    assert cr.Tensor.__torch_function__.__func__(A, cr.add, (A, B), (1, 2)) is NotImplemented


# --- modes ---------------------------------------------------------------------------------
class Count(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.counts[func.__name__] += 1
        return func(*args, **(kwargs or {}))


def test_mode_sees_calls_on_plain_tensors_and_nests():
    x = cr.ones(2, requires_grad=True)
    with Count() as outer:
        with Count() as inner:
            y = (x * 2).sum()
            y.backward()
        cr.zeros(1)
    assert inner.counts == {"mul": 1, "sum": 1, "backward": 1}
    assert outer.counts == {"mul": 1, "sum": 1, "backward": 1, "zeros": 1}
    assert x.grad.tolist() == [2.0, 2.0]
    assert cr.overrides._get_current_function_mode() is None


def test_mode_is_off_while_it_runs_and_can_replace_results():
    class Replace(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            assert cr.overrides._get_current_function_mode() is None
            return "replaced" if func is cr.exp else func(*args, **(kwargs or {}))
    with Replace():
        assert cr.exp(cr.ones(1)) == "replaced" and cr.sin(cr.zeros(1)).item() == 0.0


def test_disable_torch_function_hides_modes():
    with Count() as mode:
        with cr._C.DisableTorchFunction():
            cr.add(cr.ones(1), 1)
        cr.add(cr.ones(1), 1)
    assert mode.counts == {"ones": 1, "add": 1}


# --- helpers -------------------------------------------------------------------------------
def test_helpers():
    t, s, like = cr.ones(1), cr.ones(1).as_subclass(Plain), Like(1)
    assert not has_torch_function((t, 1.0)) and has_torch_function((t, s))
    assert has_torch_function_unary(like) and not has_torch_function_variadic(t, t)
    assert not has_torch_function((cr.nn.Parameter(cr.ones(1)),))
    assert is_tensor_like(t) and is_tensor_like(like) and not is_tensor_like(np.ones(1))
    assert is_tensor_method_or_property(cr.Tensor.add) and not is_tensor_method_or_property(cr.add)
    assert cr.Tensor.grad.__get__ in get_default_nowrap_functions()
    assert cr.zeros in get_ignored_functions() and cr.add not in get_ignored_functions()
    overridable = get_overridable_functions()
    assert cr.add in overridable[cr] and F.relu in overridable[cr.nn.functional]
    assert cr.zeros not in overridable[cr]
    assert resolve_name(cr.add) == "chainrule.add"
    assert resolve_name(cr.linalg.norm) == "chainrule.linalg.linalg_norm"
    assert cr.overrides.get_testing_overrides()[cr.add](1, 2) == -1


def test_handle_torch_function_and_wrap_torch_function():
    def double(x):
        if has_torch_function_unary(x):
            return handle_torch_function(double, (x,), x)
        return x * 2
    Like.handled = {double: lambda x: "like"}
    assert double(Like(1)) == "like" and double(cr.ones(1)).item() == 2.0

    @wrap_torch_function(lambda x: (x,))
    def neg(x):
        return -x
    Like.handled = {neg: lambda x: "neg like"}
    assert neg(Like(1)) == "neg like" and neg(cr.ones(1)).item() == -1.0


# --- autograd ------------------------------------------------------------------------------
def test_gradients_through_subclass_tensors():
    a = cr.tensor([1.0, 2.0], requires_grad=True)
    b = a.as_subclass(Plain)
    assert not b.is_leaf and b.grad_fn.name() == "AliasBackward0"
    out = (b * b).sum()
    assert type(out) is Plain
    out.backward()
    assert type(a.grad) is cr.Tensor and a.grad.tolist() == [2.0, 4.0]


def test_subclass_leaf_and_autograd_grad():
    leaf = Plain(cr.tensor([0.5, 1.0])).requires_grad_()
    assert leaf.is_leaf and leaf.requires_grad
    (g,) = cr.autograd.grad((leaf ** 3).sum(), leaf, create_graph=True)
    assert type(g) is Plain and np.allclose(g.tolist(), [0.75, 3.0])
    g.sum().backward()
    assert np.allclose(leaf.grad.tolist(), [3.0, 6.0])


def test_custom_function_with_subclass_arguments():
    class Square(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad
    p = cr.tensor([1.5, -2.0], requires_grad=True)
    Logged.calls.clear()
    q = Square.apply(p.as_subclass(Logged))
    q.sum().backward()
    assert type(q) is Logged and p.grad.tolist() == [3.0, -4.0]
    assert Logged.calls[:2] == ["mul", "sum"]


def test_make_subclass_is_a_detached_leaf():
    base = cr.ones(2, requires_grad=True) * 2
    t = cr.Tensor._make_subclass(Plain, base, True)
    assert type(t) is Plain and t.is_leaf and t.requires_grad
    assert t.data_ptr() == base.data_ptr()


def test_pickle_keeps_the_subclass_and_its_attributes():
    import pickle
    t = cr.tensor([1.0, 2.0]).as_subclass(Plain)
    t.tag = "w"
    u = pickle.loads(pickle.dumps(t))
    assert type(u) is Plain and u.tag == "w" and u.tolist() == [1.0, 2.0]


def test_warnings_point_at_the_callers_line_through_the_wrappers():
    y = cr.ones(1, requires_grad=True) * 2
    with pytest.warns(UserWarning, match="not a leaf Tensor") as caught:
        y.grad
    assert caught[0].filename == __file__


def test_importing_chainrule_leaves_dispatch_off():
    # a subclass chainrule defines for itself (SparseGrad, ...) must not turn on
    # dispatch for every call of every program (Note [torch function slot])
    import os
    import subprocess
    import sys
    code = ("import chainrule, chainrule.nn, chainrule.optim, chainrule.distributions\n"
            "from chainrule import _torch_function\nprint(_torch_function.ON[0])")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip() == "False"
