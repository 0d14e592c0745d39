"""Parity tier for the functional and forward_ad layers: chainrule against PyTorch.

Each scenario is written once as a function of the library module (``torch`` or
``chainrule``) and returns a record: results keep their nesting (tuples, lists, dicts)
with every tensor as ("tensor", values, requires_grad); an exception becomes its type
and message (torch's ``torch.`` prefixes read as ``chainrule.``). Records must match.
Covers torch.autograd.functional, torch.func and torch.autograd.forward_ad.
"""
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

try:
    import chainrule as cr
except ImportError:  # running from a checkout without Bazel: use <repo>/core
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
    import chainrule as cr

from parity_support import compare, values  # noqa: E402

SCENARIOS = {}
A = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def record(x):
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, [record(v) for v in x])
    if isinstance(x, dict):
        return {k: record(v) for k, v in x.items()}
    if isinstance(x, (torch.Tensor, cr.Tensor)):
        return ("tensor", values(x), bool(x.requires_grad))
    return x


def outcome(fn):
    """The record of ``fn()``, or (exception type, message) if it raised."""
    try:
        return record(fn())
    except Exception as exc:  # noqa: BLE001 - the type and message are what we compare
        return ("raised", type(exc).__name__, str(exc).replace("torch.", "chainrule."))


def t(lib, data, **kw):
    return lib.tensor(data, dtype=lib.float64, **kw)


def g(lib, x):
    return lib.tanh(t(lib, A) @ x)


def f(lib, x):
    return (g(lib, x) ** 2).sum()


def two_in_two_out(lib, x, y):
    return (x * y.sum(), (x ** 2).sum() * y)


X, V, Y = [0.3, -0.2, 0.7], [1.0, 0.5, -2.0], [0.1, 0.4]


# --- torch.autograd.functional --------------------------------------------------------
@scenario
def functional_values(lib):
    F = lib.autograd.functional
    x, v, y = t(lib, X), t(lib, V), t(lib, Y)
    return [outcome(lambda: F.vjp(lambda x: g(lib, x), x, t(lib, [1.0, -1.0]))),
            outcome(lambda: F.jvp(lambda x: g(lib, x), x, v)),
            outcome(lambda: F.vhp(lambda x: f(lib, x), x, v)),
            outcome(lambda: F.hvp(lambda x: f(lib, x), x, v)),
            outcome(lambda: F.vjp(lambda x, y: two_in_two_out(lib, x, y), (x, y),
                                  (t(lib, [1.0, 2.0, 3.0]), t(lib, [1.0, 1.0])))),
            outcome(lambda: F.jvp(lambda x, y: two_in_two_out(lib, x, y), (x, y), (v, y))),
            outcome(lambda: F.hvp(lambda x, y: (x.sum() * y ** 2).sum(), (x, y), (v, y))),
            outcome(lambda: F.vjp(lambda x: (x ** 2).sum(), t(lib, [2.0]))),
            outcome(lambda: F.jvp(lambda x: x ** 3, t(lib, 2.0)))]


@scenario
def functional_jacobian_and_hessian(lib):
    F = lib.autograd.functional
    x, y = t(lib, X), t(lib, Y)
    out = []
    for vectorize in (False, True):
        out.append(outcome(lambda: F.jacobian(lambda x: g(lib, x), x, vectorize=vectorize)))
        out.append(outcome(lambda: F.jacobian(lambda x, y: two_in_two_out(lib, x, y), (x, y),
                                              vectorize=vectorize)))
        out.append(outcome(lambda: F.jacobian(lambda x: (x.sum(),), (x,), vectorize=vectorize)))
        out.append(outcome(lambda: F.hessian(lambda x: f(lib, x), x, vectorize=vectorize)))
        out.append(outcome(lambda: F.hessian(lambda x, y: (x.sum() * y ** 3).sum(), (x, y),
                                             vectorize=vectorize)))
    out.append(outcome(lambda: F.jacobian(lambda x, y: two_in_two_out(lib, x, y), (x, y),
                                          vectorize=True, strategy="forward-mode")))
    out.append(outcome(lambda: F.hessian(lambda x: f(lib, x), x, vectorize=True,
                                         outer_jacobian_strategy="forward-mode")))
    out.append(outcome(lambda: F.jacobian(lambda x: t(lib, [1.0, 2.0]), x)))
    z = lib.tensor([1 + 2j, -0.5j, 0.25, 2 - 1j], dtype=lib.complex128)
    for vectorize in (False, True):
        out.append(outcome(lambda: F.jacobian(lambda z: z * z.sin(), z, vectorize=vectorize)))
    for transform in (lib.func.jacrev, lib.func.jacfwd, lib.func.hessian):
        out.append(outcome(lambda: transform(lambda z: z * z.sin())(z)))
    return out


@scenario
def functional_create_graph(lib):
    F = lib.autograd.functional
    x, v = t(lib, X, requires_grad=True), t(lib, V)
    _, jv = F.jvp(lambda x: g(lib, x), x, v, create_graph=True)
    _, hv = F.hvp(lambda x: f(lib, x), x, v, create_graph=True)
    jac = F.jacobian(lambda x: g(lib, x), x, create_graph=True)
    hess = F.hessian(lambda x: f(lib, x), x, create_graph=True)
    grads = [lib.autograd.grad(r.sum(), x)[0] for r in (jv, hv, jac, hess)]
    return record([jv, hv, jac, hess, grads])


@scenario
def functional_errors(lib):
    F = lib.autograd.functional
    x, y = t(lib, X), t(lib, Y)
    linear = lambda x: 2 * x  # noqa: E731
    return [
        outcome(lambda: F.vjp(lambda x: x * 2, x)),
        outcome(lambda: F.vjp(lambda x: x * 2, x, t(lib, [1.0]))),
        outcome(lambda: F.vjp(lambda x, y: (x, y), (x, y), (x,))),
        outcome(lambda: F.jvp(lambda x: x, [1.0, 2.0])),
        outcome(lambda: F.jvp(lambda x: x, (x, 3))),
        outcome(lambda: F.jvp(lambda x: x, x)),
        outcome(lambda: F.vjp(lambda x: t(lib, [1.0, 2.0, 3.0]), x, x, strict=True)),
        outcome(lambda: F.vjp(lambda x, y: x * 2, (x, y), x, strict=True)),
        outcome(lambda: F.jvp(lambda x: linear(x), x, x, strict=True)),
        outcome(lambda: F.jacobian(lambda x, y: x * 2, (x, y), strict=True)),
        outcome(lambda: F.jacobian(linear, x, strict=True, vectorize=True)),
        outcome(lambda: F.jacobian(linear, x, strategy="sideways")),
        outcome(lambda: F.jacobian(linear, x, strategy="forward-mode")),
        outcome(lambda: F.jacobian(linear, x, strategy="forward-mode", vectorize=True,
                                   create_graph=True)),
        outcome(lambda: F.jacobian(linear, x, strategy="forward-mode", vectorize=True,
                                   strict=True)),
        outcome(lambda: F.hessian(lambda x: (2 * x).sum(), x, strict=True)),
        outcome(lambda: F.hessian(lambda x: x, x)),
        outcome(lambda: F.hessian(lambda x: (x, x), x)),
        outcome(lambda: F.hessian(lambda x: (x ** 2).sum(), x,
                                  outer_jacobian_strategy="sideways")),
        outcome(lambda: F.hvp(lambda x: x ** 2, x, x)),
        outcome(lambda: F.vhp(lambda x: (x ** 2).sum(), x)),
        outcome(lambda: F.hvp(lambda x: (x ** 2).sum(), x, t(lib, [1.0]))),
        outcome(lambda: F.vhp(lambda x: (2 * x).sum(), x, x, strict=True)),
        outcome(lambda: F.hvp(lambda x: (2 * x).sum(), x, x, strict=True)),
    ]


# --- torch.func ---------------------------------------------------------------------
def mlp_loss(lib, w, x):
    return (lib.tanh(x @ w.T) ** 2).sum()


@scenario
def func_transforms(lib):
    fn = lib.func
    x, y, v = t(lib, X), t(lib, Y), t(lib, V)
    w, batch = t(lib, A), t(lib, [[0.1, 0.2, 0.3], [-0.5, 0.4, 0.0], [1.0, -1.0, 0.5]])
    return [
        outcome(lambda: fn.grad(lambda x: f(lib, x))(x)),
        outcome(lambda: fn.grad(lambda x, y: (x.sum() * y ** 2).sum(), argnums=(0, 1))(x, y)),
        outcome(lambda: fn.grad_and_value(lambda x: (f(lib, x), x * 2), has_aux=True)(x)),
        outcome(lambda: fn.grad(lambda d: (d["a"] * d["b"][0]).sum())(
            {"a": x, "b": (v, y)})),
        outcome(lambda: fn.jvp(lambda x: g(lib, x), (x,), (v,))),
        outcome(lambda: fn.jvp(lambda x, y: two_in_two_out(lib, x, y), (x, y), (v, y))),
        outcome(lambda: fn.jacrev(lambda x: g(lib, x))(x)),
        outcome(lambda: fn.jacfwd(lambda x: g(lib, x))(x)),
        outcome(lambda: fn.jacrev(lambda x, y: {"p": x * y.sum(), "q": (x.sum(),)},
                                  argnums=(0, 1))(x, y)),
        outcome(lambda: fn.jacfwd(lambda x, y: two_in_two_out(lib, x, y), argnums=1)(x, y)),
        outcome(lambda: fn.hessian(lambda x: f(lib, x))(x)),
        outcome(lambda: fn.jacfwd(fn.jacrev(lambda x: f(lib, x)))(x)),
        outcome(lambda: fn.jacrev(fn.jacrev(lambda x: f(lib, x)))(x)),
        outcome(lambda: fn.grad(fn.grad(lambda x: (x ** 3).sin()))(t(lib, 0.7))),
        outcome(lambda: fn.vmap(fn.grad(lambda w, x: mlp_loss(lib, w, x)),
                                in_dims=(None, 0))(w, batch)),
        outcome(lambda: fn.vmap(fn.jacrev(lambda x: g(lib, x)))(batch)),
    ]


@scenario
def func_tangents_under_vmap(lib):
    """Forward mode composed with vmap (Note [tangents of batched tensors])."""
    fn = lib.func
    batch = t(lib, [[0.1, 0.2, 0.3], [-0.5, 0.4, 0.0], [1.0, -1.0, 0.5]])
    dirs = t(lib, [[1.0, 0.0, 2.0], [0.5, -1.0, 0.0], [0.0, 0.3, 1.0]])
    x, v = t(lib, X), t(lib, V)
    return [
        outcome(lambda: fn.vmap(lambda x, v: fn.jvp(lambda x: g(lib, x), (x,), (v,)))(
            batch, dirs)),
        outcome(lambda: fn.vmap(lambda v: fn.jvp(lambda x: g(lib, x), (x,), (v,)))(dirs)),
        outcome(lambda: fn.vmap(lambda x: fn.jvp(lambda x: g(lib, x), (x,), (v,)))(batch)),
        outcome(lambda: fn.jvp(fn.vmap(lambda x: g(lib, x)), (batch,), (dirs,))),
        outcome(lambda: fn.vmap(fn.jacfwd(lambda x: g(lib, x)))(batch)),
        outcome(lambda: fn.vmap(fn.hessian(lambda x: f(lib, x)))(batch)),
        outcome(lambda: fn.jacfwd(fn.vmap(lambda x: g(lib, x) * x.sum()))(batch)),
        outcome(lambda: fn.vmap(fn.vmap(lambda x, v: fn.jvp(lambda x: x.sin() * x.sum(),
                                                            (x,), (v,))))(
            batch.reshape(3, 3, 1).expand(3, 3, 2), dirs.reshape(3, 3, 1).expand(3, 3, 2))),
    ]


@scenario
def func_vjp(lib):
    fn = lib.func
    x, y = t(lib, X), t(lib, Y)
    out, vjp_fn = fn.vjp(lambda x, y: two_in_two_out(lib, x, y), x, y)
    out2, vjp_fn2, aux = fn.vjp(lambda x: (g(lib, x), x.sum()), x, has_aux=True)
    return [record(out), outcome(lambda: vjp_fn((t(lib, [1.0, 2.0, 3.0]), t(lib, [1.0, -1.0])))),
            record(out2), record(aux), outcome(lambda: vjp_fn2(t(lib, [1.0, -1.0]))),
            outcome(lambda: vjp_fn(t(lib, [1.0, 2.0, 3.0])))[:2]]


@scenario
def func_errors(lib):
    fn = lib.func
    x = t(lib, X)
    return [
        outcome(lambda: fn.grad(lambda x: x * 2)(x)),
        outcome(lambda: fn.grad(lambda x: (x.sum(), 1))(x)),
        outcome(lambda: fn.grad(lambda x: x.sum(), has_aux=True)(x)),
        outcome(lambda: fn.grad(lambda x: x.sum(), argnums=2)(x)),
        outcome(lambda: fn.grad(lambda x: x.sum(), argnums=())(x)),
        outcome(lambda: fn.grad(lambda x: x.sum(), argnums=(0, 0))(x)),
        outcome(lambda: fn.grad(lambda x: x.sum(), argnums=1.0)(x)),
        outcome(lambda: fn.grad(lambda x: x.sum())(3.0)),
        outcome(lambda: fn.jvp(lambda x: x, x, x)),
        outcome(lambda: fn.jvp(lambda x: 1, (x,), (x,))),
        outcome(lambda: fn.vjp(lambda x: 1, x)),
        outcome(lambda: fn.jacrev(lambda x: x, chunk_size=0)(x)),
        outcome(lambda: fn.jvp(lambda x: t(lib, [1.0]), (x,), (x,), strict=True)),
    ]


def linear(lib, weight, bias):
    layer = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        layer.weight.copy_(t(lib, weight))
        layer.bias.copy_(t(lib, bias))
    return layer


class _Tied:
    """A module reaching one Linear under two names (built per library)."""

    @staticmethod
    def make(lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = linear(lib, A, [0.1, -0.2])
                self.b = self.a

            def forward(self, x, scale=1.0):
                return self.a(x) * scale + self.b(x)
        return Tied()


@scenario
def func_module_helpers(lib):
    fn = lib.func
    x, batch = t(lib, X), t(lib, [[0.1, 0.2, 0.3], [-0.5, 0.4, 0.0]])
    model = linear(lib, A, [0.1, -0.2])
    params = {k: v.detach() for k, v in model.named_parameters()}
    w2 = t(lib, [[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
    tied = _Tied.make(lib)
    models = [linear(lib, [[i, 1.0, -1.0], [0.5, i, 0.5]], [i, -i]) for i in range(3)]
    stacked, buffers = fn.stack_module_state(models)
    ensemble = fn.vmap(lambda p: fn.functional_call(models[0], p, (batch,)))(stacked)

    def loss(p, xb):
        return (fn.functional_call(model, p, (xb.unsqueeze(0),)) ** 2).sum()
    return [
        outcome(lambda: fn.functional_call(model, {"weight": w2}, x)),
        outcome(lambda: fn.functional_call(model, ({"weight": w2}, {"bias": x[:2]}), (x,))),
        outcome(lambda: fn.grad(lambda p: fn.functional_call(model, p, (batch,)).sum())(params)),
        outcome(lambda: fn.vmap(fn.grad(loss), in_dims=(None, 0))(params, batch)),
        outcome(lambda: fn.functional_call(model, {"weight": w2, "foo": x}, x, strict=True)),
        outcome(lambda: fn.functional_call(model, ({"weight": w2}, {"weight": w2}), x)),
        outcome(lambda: fn.functional_call(tied, {"a.weight": w2}, (x,), {"scale": 3.0})),
        outcome(lambda: fn.functional_call(tied, {"a.weight": w2, "b.weight": w2 * 2}, x)),
        outcome(lambda: fn.functional_call(tied, {"a.weight": w2, "b.weight": w2 * 2}, x,
                                           tie_weights=False)),
        record(model.weight),
        record(stacked), record(buffers), record(ensemble),
        outcome(lambda: fn.stack_module_state([])),
        outcome(lambda: fn.stack_module_state([model, linear(lib, A, [0.0, 0.0]).eval()])),
    ]


@scenario
def func_linearize_and_friends(lib):
    fn = lib.func
    x, v = t(lib, X), t(lib, V)
    out, jvp_fn = fn.linearize(lambda x, y: (x.sin() * y, (x * y).sum()), x, v)
    net = fn.replace_all_batch_norm_modules_(lib.nn.Sequential(lib.nn.BatchNorm1d(3)))

    def mutate(a):
        b = a.clone()
        b.add_(1)
        a.mul_(2)
        return b
    y = t(lib, [1.0, 2.0])
    return [
        record(out), outcome(lambda: jvp_fn(v, x)),
        outcome(lambda: jvp_fn(v)), outcome(lambda: jvp_fn(v, t(lib, [1.0]))),
        outcome(lambda: jvp_fn(v, v.float())),
        record([net[0].running_mean, net[0].running_var, net[0].track_running_stats]),
        record([fn.functionalize(mutate)(y), y]),
        outcome(lambda: fn.functionalize(mutate, remove="views")),
        record(fn.debug_unwrap(x) is x),
        outcome(lambda: fn.vmap(lambda r: fn.debug_unwrap(r) * 1)(t(lib, [[1.0], [2.0]]))),
    ]


# --- torch.autograd.forward_ad --------------------------------------------------------
class _Scale:
    """A custom Function with jvp (built per library)."""

    @staticmethod
    def make(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.save_for_forward(x)
                ctx.k = k
                return x * x * k

            @staticmethod
            def backward(ctx, grad):
                return None, None

            @staticmethod
            def jvp(ctx, tx, tk):
                (x,) = ctx.saved_tensors
                return 2 * x * tx * ctx.k
        return Scale


@scenario
def forward_ad_values_and_errors(lib):
    fwAD = lib.autograd.forward_ad
    x, v = t(lib, X), t(lib, V)
    out = []
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        y = (d.sin() * d).exp().sum() + g(lib, d).prod()
        out.append(record(fwAD.unpack_dual(y)))
        z = t(lib, [0.0, 0.0, 0.0, 0.0])
        z[1:].copy_(d)
        z.mul_(2)
        out.append(record(fwAD.unpack_dual(z)))
        out.append(record(fwAD.unpack_dual(_Scale.make(lib).apply(d, 3.0))))
        out.append(outcome(lambda: fwAD.make_dual(x, t(lib, [1.0]))))
        out.append(outcome(lambda: fwAD.make_dual(lib.tensor([1, 2]), lib.tensor([1, 2]))))
        out.append(outcome(lambda: fwAD.make_dual(d, v)))
        out.append(outcome(lambda: fwAD.enter_dual_level()))
        out.append(outcome(lambda: fwAD.exit_dual_level(level=4)))
    out.append(record(fwAD.unpack_dual(y)))
    out.append(outcome(lambda: fwAD.make_dual(x, v)))
    out.append(outcome(lambda: fwAD.exit_dual_level()))
    return out


@scenario
def forward_ad_with_reverse(lib):
    fwAD = lib.autograd.forward_ad
    p, tan = t(lib, X, requires_grad=True), t(lib, V, requires_grad=True)
    with fwAD.dual_level():
        jvp = fwAD.unpack_dual(f(lib, fwAD.make_dual(p, tan))).tangent
        over = lib.autograd.grad(jvp, (p, tan))
        d = fwAD.make_dual(p, t(lib, V))
        (grad,) = lib.autograd.grad(f(lib, d), d, create_graph=True)
        hvp = fwAD.unpack_dual(grad).tangent
    return record([jvp, over, hvp])


@scenario
def func_captured_tensors_keep_history(lib):
    # Note [captured tensors keep their history]: a model's Jacobian in a training loss
    w = t(lib, A, requires_grad=True)
    x = t(lib, X)
    model = lambda x: lib.tanh(w @ x)          # noqa: E731
    jacs = [lib.func.jacrev(model)(x), lib.func.jacfwd(model)(x),
            lib.func.jvp(model, (x,), (t(lib, V),))[1],
            lib.func.vjp(model, x)[1](t(lib, [1.0, -1.0]))[0],
            lib.func.grad(lambda x: model(x).sum())(x)]
    return record([jacs, [lib.autograd.grad((j ** 2).sum(), w)[0] for j in jacs]])


@scenario
def gradcheck_forward_mode(lib):
    class Wrong(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_forward(a)
            ctx.save_for_backward(a)
            return a.exp()

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.saved_tensors[0].exp()

        @staticmethod
        def jvp(ctx, tangent):
            return tangent * ctx.saved_tensors[0]

    x = t(lib, X, requires_grad=True)
    z = lib.tensor([1 + 2j, -0.5j], dtype=lib.complex128, requires_grad=True)
    check = lib.autograd.gradcheck
    return [check(lambda a, c: (a.sin() * c.abs().sum(), (c * c).exp()), (x, z),
                  check_forward_ad=True, check_batched_forward_grad=True, fast_mode=fast)
            for fast in (False, True)] + \
        [check(Wrong.apply, (x,), check_forward_ad=True, raise_exception=False),
         check(Wrong.apply, (x,), check_forward_ad=False, raise_exception=False),
         lib.autograd.gradgradcheck(lambda a: a.exp() * a, (x,), check_fwd_over_rev=True)]


def _sin_functions(lib):
    """An old-style (ctx in forward), a setup_context-style and one with generate_vmap_rule
    and jvp: custom Functions as func transforms see them."""
    class Old(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            return g * ctx.saved_tensors[0].cos()

    class New(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        backward = Old.backward

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.saved_tensors[0].cos()

    class NoVmap(New):
        jvp = lib.autograd.Function.jvp

    class Generated(New):
        generate_vmap_rule = True
    return Old, NoVmap, New, Generated


@scenario
def func_transforms_with_custom_functions(lib):
    fn, x = lib.func, t(lib, [0.5, 1.0])
    transforms = [lambda f: fn.grad(lambda x: f(x).sum()), fn.vmap, fn.jacrev, fn.jacfwd,
                  lambda f: fn.hessian(lambda x: f(x).sum()),
                  lambda f: (lambda x: fn.jvp(f, (x,), (x,))),
                  lambda f: (lambda x: fn.vjp(f, x)[0]),
                  lambda f: (lambda x: fn.linearize(f, x)[1](x))]
    return [outcome(lambda: transform(cls.apply)(x))
            for transform in transforms for cls in _sin_functions(lib)] + \
        [outcome(lambda: lib.autograd.functional.jacobian(cls.apply, x))
         for cls in _sin_functions(lib)]


def _per_sample_loss(lib, kwargs, in_dims):
    """vmap(grad(...)) of nll_loss on per-sample log-probabilities (3 positions, 4
    classes), labels mapped (in_dims 0) or shared (None): values and gradients."""
    F = lib.nn.functional
    logits = lib.tensor([[[0.5, -1.0, 2.0, 0.1], [1.5, 0.25, -0.5, 0.0], [0.3, 0.3, -2.0, 1.0]],
                         [[0.2, 0.1, 0.0, -0.1], [-1.0, 2.0, 0.5, 0.5], [0.0, 1.0, 2.0, 3.0]]],
                        dtype=lib.float64)
    labels = lib.tensor([[0, 3, 0], [3, 3, 3]]) if in_dims == 0 else lib.tensor([3, 2, 0])

    def loss(z, y):
        out = F.nll_loss(z.log_softmax(1), y, **kwargs)
        return out.sum() if out.dim() else out
    return outcome(lambda: lib.func.vmap(lib.func.grad_and_value(loss), in_dims=(0, in_dims))(
        logits, labels))


@scenario
def func_per_sample_nll_loss(lib):
    # ignore_index=3 ignores all of the second sample's mapped labels: nan loss, zero
    # gradient; a class weight of 0 on every kept label: nan gradient there
    weights = [None, [1.0, 0.5, 2.0, 1.5], [0.0, 1.0, 1.0, 0.0]]
    out = []
    for in_dims in (0, None):
        for reduction in ("none", "sum", "mean"):
            for w in weights:
                kwargs = {"reduction": reduction, "ignore_index": 3,
                          "weight": None if w is None else t(lib, w)}
                out.append(_per_sample_loss(lib, kwargs, in_dims))
    return out


@scenario
def func_vmap_of_ops_picking_by_index(lib):
    vmap, x = lib.func.vmap, t(lib, [[0.5, -1.0, 2.0, 0.5], [1.5, 0.25, -0.5, 0.0]])
    return [outcome(lambda: vmap(lambda r: lib.topk(r, 2))(x)),
            outcome(lambda: vmap(lambda r: lib.kthvalue(r, 2))(x)),
            outcome(lambda: vmap(lambda r: lib.median(r.reshape(2, 2), 1))(x)),
            outcome(lambda: vmap(lib.median)(x)),
            outcome(lambda: vmap(lambda r: lib.cummax(r, 0))(x)),
            outcome(lambda: vmap(lambda r: lib.take(r, lib.tensor([[3, -4]])))(x)),
            outcome(lambda: vmap(lambda r: lib.take(r, lib.tensor([4])))(x)),
            outcome(lambda: vmap(lambda r, v: r.index_fill(0, lib.tensor([1]), v))(
                x, t(lib, [7.0, 8.0]))),
            outcome(lambda: vmap(lib.masked_select)(x, x > 0)),
            outcome(lambda: vmap(lambda r: lib.masked_select(r, x[0] > 0))(x)),
            outcome(lambda: vmap(lib.nn.functional.gaussian_nll_loss)(x, x, x.exp())),
            outcome(lambda: vmap(lib.nonzero)(x)),
            outcome(lambda: vmap(lambda r: lib.nonzero(r, as_tuple=True))(x)),
            outcome(lambda: vmap(lib.unique)(x)),
            outcome(lambda: vmap(lambda r: lib.unique(r, dim=0))(x)),
            outcome(lambda: vmap(lib.unique_consecutive)(x)),
            outcome(lambda: vmap(lambda r: r[r > 0])(x)),
            outcome(lambda: vmap(lambda r: r[x[0] > 0])(x)),
            outcome(lambda: vmap(lib.argwhere)(x))]


@scenario
def func_rearrange(lib):
    data = lib.arange(48.0).reshape(2, 6, 4).requires_grad_()
    patterns = [("a b c -> c a b", {}), ("a (h w) c -> a w h c", {"w": 3}),
                ("a ... -> (...) a", {}), ("a b c -> a () b c", {}),
                ("a (b1 b2) c -> (a b2) (c b1)", {"b1": 3}), ("a b -> a b", {}),
                ("a b c -> a b", {}), ("a (h w) c -> a h w c", {"h": 4})]
    out = [outcome(lambda: lib.func.rearrange(data, p, **k)) for p, k in patterns]
    out.append(outcome(lambda: lib.func.rearrange([data[0], data[1]], "s b c -> b (s c)")))
    return out


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_parity(name):
    ours, theirs = SCENARIOS[name](cr), SCENARIOS[name](torch)
    problems = compare(ours, theirs, rtol=1e-7, atol=1e-9)
    assert not problems, "\n".join(problems[:20])
