"""Parity tier for __torch_function__ and chainrule.overrides against PyTorch (skips
without torch): what a subclass's results are, what a logging subclass and a mode see
(function names, types, arguments), tensor-likes and NotImplemented, the helpers and
autograd through subclasses."""
import collections

import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402


def _subclasses(lib):
    class Plain(lib.Tensor):
        pass

    class Logged(lib.Tensor):
        calls = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append((func.__name__, [t.__name__ for t in types]))
            return super().__torch_function__(func, types, args, kwargs or {})
    return Plain, Logged


def _names(values):
    return [type(v).__name__ for v in values]


def scenario_result_types(lib):
    Plain, _ = _subclasses(lib)
    t = lib.tensor([[1.0, -2.0], [3.0, 4.0]]).as_subclass(Plain)
    r = t.max(1)
    return _names([t + 1, 2 * t, lib.sin(t), t.sum(), t[0], t.T, t.mT, t.detach(), t.clone(),
                   lib.nn.functional.relu(t), lib.linalg.norm(t), lib.stack([t, t]),
                   lib.ones(2) * t, t @ t, t.new_zeros(2), t.float(), t.to(lib.float64),
                   r, r.values, r.indices, t.shape, t.dtype, t.tolist(), t.dim(), t.unbind(),
                   lib.cat([lib.ones(1, 2), t]), t.reshape(4), t.view(4), t.mean(0),
                   lib.where(t > 0, t, lib.zeros(2, 2))]) + [repr(t), str(t.sum())]


def scenario_logged_calls(lib):
    _, Logged = _subclasses(lib)
    F = lib.nn.functional
    t = lib.tensor([1.0, 2.0]).as_subclass(Logged)
    Logged.calls.clear()
    t + 1; 1 + t; t - 1; 1 - t; t * 2; 2 * t; t / 2; 2 / t; t ** 2; 2 ** t  # noqa: E702
    -t; abs(t); t @ t; t // 2; t % 2; t == 1; t < 1; t >= 1  # noqa: E702
    t.add(1); lib.add(t, 1); lib.mul(lib.ones(2), t); t.sin(); t.sum(dim=0)  # noqa: E702
    t[0]; t.shape; t.dtype; t.requires_grad; t.grad; len(t); list(t)  # noqa: E702
    F.relu(t); F.mse_loss(t, lib.ones(2)); F.linear(t, lib.ones(3, 2))  # noqa: E702
    lib.linalg.vector_norm(t); lib.special.expit(t); lib.fft.fft(t)  # noqa: E702
    t.clone().add_(1); u = t.clone(); u += 1; u *= 2  # noqa: E702
    t.detach(); t.numpy(); t.tolist(); t.item() if False else None; repr(t)  # noqa: E702
    return list(Logged.calls)


def scenario_arguments_as_given(lib):
    got = []

    class Record(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            got.append((func.__name__, len(args), sorted(kwargs or {})))
            return super().__torch_function__(func, types, args, kwargs or {})
    r = lib.ones(2).as_subclass(Record)
    lib.add(r, 2, alpha=3)
    lib.add(r, 2)
    r.sum(0, keepdim=True)
    r.sum()
    return got


def scenario_mode_counts(lib):
    class Count(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.seen = collections.Counter()
            self.types = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.seen[func.__name__] += 1
            self.types.append([t.__name__ for t in types])
            return func(*args, **(kwargs or {}))
    lib.manual_seed(0)
    w = lib.randn(3, 2, requires_grad=True)
    with Count() as mode:
        x = lib.ones(4, 3)
        y = lib.tanh(x @ w).sum()
        y.backward()
        z = lib.add(w.grad, 1).mean()
        lib.zeros(2)
        lib.tensor([1.0])
        lib.arange(3)
    return dict(mode.seen), mode.types, round(z.item(), 5)


def scenario_nested_modes(lib):
    log = []

    class Tag(lib.overrides.TorchFunctionMode):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((self.name, func.__name__,
                        lib.overrides._get_current_function_mode() is not None))
            return func(*args, **(kwargs or {}))
    with Tag("outer"):
        with Tag("inner"):
            lib.mul(lib.ones(1), 2)
    with Tag("a"):
        with lib._C.DisableTorchFunction():
            lib.ones(1)
        with lib._C.DisableTorchFunctionSubclass():
            lib.ones(1)
    return log, lib.overrides._get_current_function_mode() is None


def scenario_tensor_like(lib):
    handled = {}

    class Diag:
        def __init__(self, n, value):
            self.n, self.value = n, value

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func not in handled:
                return NotImplemented
            return handled[func](*args, **(kwargs or {}))
    handled[lib.mean] = lambda d: d.value / d.n
    handled[lib.add] = lambda a, b: ("add", [type(a).__name__, type(b).__name__])
    handled[lib.Tensor.add] = lambda a, b: "method add"
    handled[lib.Tensor.__add__] = lambda a, b: "operator add"
    d = Diag(4, 2.0)
    record = [lib.mean(d), lib.add(d, 1), lib.add(lib.ones(1), d), lib.ones(1) + d,
              lib.ones(1).add(d)]
    for call in (lambda: lib.mul(d, 2), lambda: lib.nn.functional.mse_loss(d, d)):
        try:
            call()
        except TypeError as e:
            record.append(str(e).replace("chainrule.", "torch.").splitlines()[0][:60])
    return record


def scenario_helpers(lib):
    Plain, _ = _subclasses(lib)
    o = lib.overrides
    t, s = lib.ones(1), lib.ones(1).as_subclass(Plain)
    p = lib.nn.Parameter(lib.ones(1))

    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "like"
    return [o.has_torch_function((t,)), o.has_torch_function((t, s)),
            o.has_torch_function((p,)), o.has_torch_function_unary(Like()),
            o.has_torch_function_variadic(t, 1), o.is_tensor_like(t), o.is_tensor_like(Like()),
            o.is_tensor_like(1.0), o.is_tensor_like(s),
            o.is_tensor_method_or_property(lib.Tensor.add),
            o.is_tensor_method_or_property(lib.add),
            lib.Tensor.grad.__get__ in o.get_default_nowrap_functions(),
            lib.add in o.get_overridable_functions()[lib],
            lib.zeros in o.get_ignored_functions(),
            lib._C._is_torch_function_enabled(), lib._C._has_torch_function((s,)),
            type(lib.Tensor.__torch_function__).__name__]


def scenario_autograd(lib):
    Plain, Logged = _subclasses(lib)
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a.as_subclass(Plain)
    out = (b * b + b.sin()).sum()
    out.backward()
    leaf = Plain(lib.tensor([0.5, -1.0])).requires_grad_()
    (g,) = lib.autograd.grad((leaf.exp() * leaf).sum(), leaf, create_graph=True)
    g.sum().backward()

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * grad
    p = lib.tensor([1.0, -2.0], requires_grad=True)
    Logged.calls.clear()
    q = Cube.apply(p.as_subclass(Logged))
    q.sum().backward()
    return [b.is_leaf, b.requires_grad, b.grad_fn.name(), type(out).__name__,
            a.grad.tolist(), type(a.grad).__name__, leaf.is_leaf, type(g).__name__,
            g.tolist(), leaf.grad.tolist(), type(q).__name__, p.grad.tolist(),
            [c[0] for c in Logged.calls]]


SCENARIOS = {name[len("scenario_"):]: fn for name, fn in globals().items()
             if name.startswith("scenario_")}


def _normal(record):
    if isinstance(record, float):
        return round(record, 4)
    if isinstance(record, str):
        return record.replace("chainrule.", "torch.")
    if isinstance(record, (list, tuple)):
        return [_normal(r) for r in record]
    if isinstance(record, dict):
        return {k: _normal(v) for k, v in record.items()}
    return record


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_parity(name):
    assert _normal(SCENARIOS[name](cr)) == _normal(SCENARIOS[name](torch))


def test_torch_tensors_do_not_dispatch_back_into_chainrule():
    """A torch tensor handed to a chainrule function (dlpack, array interop) is data:
    its default __torch_function__ would only call the function again, so it does not
    take part in dispatch, also once an overriding subclass has switched dispatch on."""
    class Overriding(cr.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    assert isinstance(Overriding, type)
    assert cr.from_dlpack(torch.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
    assert cr.as_tensor(torch.arange(2.0).numpy()).tolist() == [0.0, 1.0]
