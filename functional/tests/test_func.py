"""chainrule.func's transforms and custom Functions: Note [custom Functions under
transforms] (core's _vmap.py) — the reference's errors for a Function that the
transforms cannot run, the same Functions still running everywhere else."""
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from chainrule._ops import _batching_rules
from chainrule._batched import FUNC_TRANSFORMS

SETUP_CONTEXT = "it must override the setup_context staticmethod"
NO_VMAP = "does not have vmap support"


class OldSin(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        return g * ctx.saved_tensors[0].cos()


class Sin(cr.autograd.Function):
    @staticmethod
    def forward(x):
        return x.sin()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    backward = OldSin.backward

    @staticmethod
    def jvp(ctx, t):
        return t * ctx.saved_tensors[0].cos()


class GeneratedSin(Sin):
    generate_vmap_rule = True


TRANSFORMS = {
    "grad": lambda f: func.grad(lambda x: f(x).sum()),
    "vjp": lambda f: (lambda x: func.vjp(f, x)[0]),
    "jvp": lambda f: (lambda x: func.jvp(f, (x,), (x,))[1]),
    "jacrev": func.jacrev,
    "jacfwd": func.jacfwd,
    "hessian": lambda f: func.hessian(lambda x: f(x).sum()),
    "vmap": func.vmap,
}
X = cr.tensor([0.5, 1.0], dtype=cr.float64)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_a_function_with_ctx_in_forward_is_refused_by_every_transform(name):
    with pytest.raises(RuntimeError, match=SETUP_CONTEXT):
        TRANSFORMS[name](OldSin.apply)(X)
    assert FUNC_TRANSFORMS.active == 0 and FUNC_TRANSFORMS.batching == 0


def test_after_the_error_plain_autograd_and_functional_still_run_it():
    with pytest.raises(RuntimeError, match=SETUP_CONTEXT):
        func.grad(lambda x: OldSin.apply(x).sum())(X)
    x = X.clone().requires_grad_()
    OldSin.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(X.numpy()))
    jac = cr.autograd.functional.jacobian(OldSin.apply, X)
    np.testing.assert_allclose(jac.numpy(), np.diag(np.cos(X.numpy())))


@pytest.mark.parametrize("name", ["jacfwd", "hessian", "vmap"])
def test_transforms_that_batch_the_forward_want_a_vmap_rule(name):
    with pytest.raises(RuntimeError, match=f"You tried to vmap over Sin, but it {NO_VMAP}"):
        TRANSFORMS[name](Sin.apply)(X)


@pytest.mark.parametrize("name", ["grad", "vjp", "jvp", "jacrev"])
def test_the_others_run_a_setup_context_function(name):
    expected = {"grad": np.cos, "vjp": np.sin, "jvp": lambda x: x * np.cos(x),
                "jacrev": lambda x: np.diag(np.cos(x))}[name]
    out = TRANSFORMS[name](Sin.apply)(X)
    np.testing.assert_allclose(out.numpy(), expected(X.numpy()), rtol=1e-12)


def test_a_generated_vmap_rule_with_jvp_runs_under_jacfwd_and_hessian():
    np.testing.assert_allclose(func.jacfwd(GeneratedSin.apply)(X).numpy(),
                               np.diag(np.cos(X.numpy())), rtol=1e-12)
    np.testing.assert_allclose(TRANSFORMS["hessian"](GeneratedSin.apply)(X).numpy(),
                               np.diag(-np.sin(X.numpy())), rtol=1e-12)


def test_the_library_s_own_functions_run_under_transforms():
    """Gamma's rsample and cdf are custom Functions in the setup_context style."""
    alpha = cr.tensor([1.5, 2.5], dtype=cr.float64)

    def draw(a):
        cr.manual_seed(1)
        return cr.distributions.Gamma(a, cr.ones(2, dtype=cr.float64)).rsample().sum()
    a = alpha.clone().requires_grad_()
    draw(a).backward()
    np.testing.assert_allclose(func.grad(draw)(alpha).numpy(), a.grad.numpy(), rtol=1e-12)
    cdf = func.jacrev(lambda x: cr.distributions.Gamma(alpha, 1.0).cdf(x))(X)
    assert cdf.shape == (2, 2) and cdf[0, 1].item() == 0.0


class Outer(cr.autograd.Function):
    """Calls a ctx-in-forward Function inside its own forward."""

    @staticmethod
    def forward(x):
        return OldSin.apply(x) * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        return 2 * g * ctx.saved_tensors[0].cos()


def test_a_function_s_forward_runs_below_the_transforms():
    """As the reference: Functions called inside a checked Function's forward are not
    checked (grad and grad of grad)."""
    np.testing.assert_allclose(func.grad(lambda x: Outer.apply(x).sum())(X).numpy(),
                               2 * np.cos(X.numpy()), rtol=1e-12)
    x = cr.tensor(1.0, dtype=cr.float64)
    assert func.grad(func.grad(lambda x: Outer.apply(x).sum()))(x).item() == \
        pytest.approx(-2 * np.sin(1.0))


def test_vmap_checks_even_unbatched_arguments():
    c = cr.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match=SETUP_CONTEXT):
        func.vmap(lambda x: x + OldSin.apply(c))(cr.ones(3, 2))
    with pytest.raises(RuntimeError, match=NO_VMAP):
        func.vmap(lambda x: x + Sin.apply(c))(cr.ones(3, 2))
    out = func.vmap(func.vmap(GeneratedSin.apply))(cr.ones(2, 3, 2))
    np.testing.assert_allclose(out.numpy(), np.sin(np.ones((2, 3, 2))), rtol=1e-6)


def test_transforms_under_no_grad_give_plain_results_for_inputs_requiring_grad():
    # nothing outside records under no_grad (or in a custom Function's backward)
    x = cr.tensor([1., 2.], requires_grad=True)
    with cr.no_grad():
        results = [func.jacrev(cr.sin)(x), func.grad(lambda t: t.sin().sum())(x), func.vjp(cr.sin, x)[0],
                   func.vjp(cr.sin, x)[1](cr.ones(2))[0]]
    assert not any(r.requires_grad for r in results)
    assert func.jacrev(cr.sin)(x).requires_grad


def test_jacrev_in_a_custom_functions_backward_does_not_batch_through_it():
    class Triple(cr.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors        # its grad_fn is this Function's node
            return g * func.jacrev(cr.tanh)(z).diagonal()

    x = cr.tensor([0.1, 0.2], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Triple.apply(x).sum().backward()
    assert np.allclose(x.grad.numpy(), 1 - np.tanh([0.3, 0.6]) ** 2)


def test_integer_outputs_and_inputs_are_refused_as_in_the_reference():
    x = cr.tensor([1., -2., 3.])
    for transform in (func.jacrev(lambda t: (t > 0).long()), lambda t: func.vjp(lambda u: u > 0, t)):
        with pytest.raises(RuntimeError, match="vjp\\(f, ...\\): All outputs of f must be "
                                               "floating-point or complex Tensors, got Tensor "
                                               "with dtype chainrule.(int64|bool)"):
            transform(x)
    for transform in (func.jacfwd(lambda t: t * 2), func.hessian(lambda t: (t * 2).sum())):
        with pytest.raises(ValueError, match="Expected primal to be floating point or "
                                             "complex, but got: chainrule.int64"):
            transform(cr.tensor([1, 2]))


def test_jacfwd_randomness_error_refuses_a_draw():
    # Note [randomness of jacfwd], in the one-pass evaluation and the per-basis one
    for f in [lambda x: x * cr.rand(3), lambda x: cr.nn.functional.dropout(x, 0.5),
              lambda x: _scaled_in_place(x) * cr.rand(3)]:
        with pytest.raises(RuntimeError, match="randomness error mode"):
            func.jacfwd(f)(cr.ones(3))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        func.vmap(func.jacfwd(lambda x: x * cr.rand(3), randomness="same"))(cr.ones(2, 3))


def _scaled_in_place(x):
    """x, through an in-place op on a view (jacfwd's one pass refuses those)."""
    y = x.clone()
    y[:2].mul_(1)
    return y


@pytest.mark.parametrize("per_basis", [False, True])
def test_jacfwd_randomness_same_and_different(per_basis):
    # "same": one draw for every basis tangent; "different": one (basis, 3) draw, a row
    # per basis tangent
    scale = _scaled_in_place if per_basis else (lambda x: x)
    f = lambda x: scale(x) * cr.rand(3)         # noqa: E731
    cr.manual_seed(0)
    same = func.jacfwd(f, randomness="same")(cr.ones(3))
    cr.manual_seed(0)
    assert cr.equal(same, cr.diag(cr.rand(3)))
    cr.manual_seed(0)
    different = func.jacfwd(f, randomness="different")(cr.ones(3))
    after = cr.rand(1)
    cr.manual_seed(0)
    assert cr.equal(different, cr.diag(cr.diag(cr.rand(3, 3))))
    assert cr.equal(after, cr.rand(1))


def test_jacfwd_aux_is_the_first_basis_evaluation():
    cr.manual_seed(0)
    _, aux = func.jacfwd(lambda x: (x * 2, cr.rand(2)), has_aux=True,
                         randomness="different")(cr.ones(3))
    cr.manual_seed(0)
    assert cr.equal(aux, cr.rand(3, 2)[0])


NESTED_FORWARD = "Nested forward mode AD is not supported at the moment"


def test_forward_transforms_refuse_a_users_dual_level():
    # Note [a transform's dual level]: the reference's error, before jacfwd's dtype check
    import chainrule.autograd.forward_ad as fwAD
    x, t = cr.tensor([1.0, 2.0]), cr.ones(2)
    with fwAD.dual_level():
        for call in [lambda: func.jvp(cr.sin, (x,), (t,)),
                     lambda: func.jacfwd(cr.sin)(x),
                     lambda: func.jacfwd(cr.sin)(cr.ones(2, dtype=cr.long)),
                     lambda: func.hessian(lambda a: a.sin().sum())(x),
                     lambda: func.linearize(cr.sin, x),
                     lambda: func.vmap(lambda a: func.jvp(cr.sin, (a,), (a,))[1])(x[None])]:
            with pytest.raises(RuntimeError, match=NESTED_FORWARD):
                call()
        assert cr.equal(func.jacrev(cr.sin)(x), cr.diag(x.cos()))
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        with fwAD.dual_level():
            func.jvp(cr.sin, [x], (t,))


def test_reverse_transforms_of_duals_return_plain_results_with_tangents():
    # the reference's jacrev/vjp/grad unwrap their own level: no history leaves them,
    # the user's dual's tangent does
    import chainrule.autograd.forward_ad as fwAD
    p = cr.tensor([0.5, 1.5], dtype=cr.float64)
    f = lambda a: (a ** 3).sin()        # noqa: E731
    with fwAD.dual_level():
        d = fwAD.make_dual(p, cr.tensor([1.0, 2.0], dtype=cr.float64))
        jac, aux = func.jacrev(lambda a: (f(a), a), has_aux=True)(d)
        out, vjp_fn = func.vjp(f, d)
        (back,) = vjp_fn(cr.ones(2, dtype=cr.float64))
        (made,) = vjp_fn(cr.ones(2, dtype=cr.float64), create_graph=True)
        g, value = func.grad_and_value(lambda a: f(a).sum())(d)
        results = [jac, aux, out, back, made, g, value]
        assert not any(r.requires_grad or r.grad_fn is not None for r in results)
        tangents = [fwAD.unpack_dual(r).tangent for r in results]
        assert not any(t is None or t.requires_grad for t in tangents)
        assert np.allclose(tangents[0].diagonal().numpy(), tangents[3].numpy())
        assert np.allclose(tangents[3].numpy(), tangents[5].numpy())
        assert tangents[3].tolist() == pytest.approx([2.906463, 3.564738], abs=1e-5)
        assert tangents[1].tolist() == [1.0, 2.0]
        w = cr.tensor([0.5, 1.5], dtype=cr.float64, requires_grad=True)
        tracked = func.grad(lambda a: f(a).sum())(fwAD.make_dual(w, p))
        assert tracked.grad_fn is not None     # an outer reverse pass may differentiate it


def test_reverse_transforms_of_duals_inside_vmap_return_plain_results_with_tangents():
    # as outside vmap (the reference's numbers); duals made inside vmap too, which the
    # reference refuses ("Batching rule not implemented for aten::_make_dual")
    import chainrule.autograd.forward_ad as fwAD
    p = cr.tensor([[0.5, 1.5], [0.2, -0.3]], dtype=cr.float64)
    t = cr.tensor([[1.0, 2.0], [0.5, 0.5]], dtype=cr.float64)
    f = lambda a: (a ** 3).sin()        # noqa: E731
    one = cr.ones(2, dtype=cr.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(p, t)
        results = [func.vmap(func.jacrev(f))(d),
                   func.vmap(func.jacrev(lambda a: (f(a), a), has_aux=True))(d)[1],
                   func.vmap(lambda a: func.vjp(f, a)[0])(d),
                   func.vmap(lambda a: func.vjp(f, a)[1](one)[0])(d),
                   func.vmap(lambda a: func.vjp(f, a)[1](one, create_graph=True)[0])(d),
                   func.vmap(func.grad_and_value(lambda a: f(a).sum()))(d)[1],
                   func.vmap(lambda a, b: func.grad(lambda c: f(c).sum())(
                       fwAD.make_dual(a, b)))(p, t)]
        assert not any(r.requires_grad or r.grad_fn is not None for r in results)
        tangents = [fwAD.unpack_dual(r).tangent for r in results]
        assert not any(x is None or x.requires_grad for x in tangents)
        want = [[2.906463, 3.564738], [0.599923, -0.898688]]
        for k in (3, 4, 6):
            assert np.allclose(tangents[k].numpy(), want, atol=1e-6)
        assert np.allclose(tangents[0].diagonal(0, 1, 2).numpy(), want, atol=1e-6)
        assert cr.equal(tangents[1], t)
        assert np.allclose(tangents[5].numpy(), [-12.389785, 0.194949], atol=1e-6)
        w = p.clone().requires_grad_()
        tracked = func.vmap(func.grad(lambda a: f(a).sum()))(fwAD.make_dual(w, t))
        assert tracked.grad_fn is not None     # an outer reverse pass may differentiate it


def test_forward_transforms_nest_in_each_other():
    x, t = cr.tensor([1.0, 2.0], dtype=cr.float64), cr.ones(2, dtype=cr.float64)
    f = lambda a: (a ** 3).sin()        # noqa: E731
    second = func.jvp(lambda a: func.jvp(f, (a,), (t,))[1], (x,), (t,))[1]
    assert np.allclose(second.numpy(), func.hessian(lambda a: f(a).sum())(x).sum(0).numpy())
    inner_jacfwd = func.jvp(lambda a: func.jacfwd(f)(a), (x,), (t,))[1]
    assert np.allclose(inner_jacfwd.numpy(), np.diag(second.numpy()))
    assert cr.equal(func.jacfwd(lambda a: func.jvp(f, (a,), (t,))[1])(x).diagonal(), second)


def test_jvp_outputs_are_aliases_as_the_references():
    # the reference's transforms unwrap their outputs as aliases, where unpack_dual's
    # primal is an Identity node
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    out, tangent = func.jvp(lambda a: a * 1, (x,), (cr.ones(2),))
    assert out.grad_fn.name() == "AliasBackward0" and tangent.tolist() == [1.0, 1.0]


_F = cr.nn.functional
_ONE_PASS = {      # ops whose batching rules run once on 0-d or per-entry operands
    "scatter_add, 0-d": (lambda x: (x * 2).scatter_add(0, cr.tensor(0), x.sin()), (3,)),
    "scatter_reduce, 0-d": (lambda x: x.scatter_reduce(0, cr.tensor([0, 0]),
                                                       cr.stack([x, x * x]), "prod"), (3,)),
    "gather, 0-d": (lambda x: x.gather(0, cr.tensor([0, 0])) * x, (3,)),
    "unfold, 0-d": (lambda x: x.unfold(0, 1, 1) * x, (3,)),
    "index_add, 0-d": (lambda x: x.index_add(0, cr.tensor([0]), x * x, alpha=2.5), (3,)),
    # (the reference's jacrev gives 4 times the derivative through the 0-d source)
    "index_copy, 0-d index": (lambda x: x.index_copy(0, cr.tensor(2), 1.5 * x[0]), (3, 4)),
    "multi_margin_loss, 0-d": (lambda x: _F.multi_margin_loss(x, cr.tensor(0), p=2), (3,)),
    "multi_margin_loss, weight": (lambda x: _F.multi_margin_loss(
        x, cr.tensor([0, 4]), weight=cr.tensor([0.5, 1.0, 2.0, 0.0, 3.0])), (3, 2, 5)),
    "embedding_bag, per_sample_weights": (lambda p: _F.embedding_bag(
        cr.tensor([1, 2, 4, 1]), cr.arange(12.0).reshape(6, 2).double(), cr.tensor([0, 2]),
        mode="sum", per_sample_weights=p * p), (3, 4)),
}


@pytest.mark.parametrize("name", list(_ONE_PASS))
def test_transforms_over_one_pass_batching_rules_match_loops(name):
    fn, shape = _ONE_PASS[name]
    x = cr.tensor(np.random.default_rng(3).standard_normal(shape))
    total = lambda a: fn(a).sum()       # noqa: E731
    _batching_rules.LOOP_LOG = log = set()
    try:
        pairs = [(func.vmap(func.grad(total))(x), [func.grad(total)(r) for r in x]),
                 (func.vmap(func.jacrev(fn))(x), [func.jacrev(fn)(r) for r in x]),
                 (func.vmap(func.vmap(fn))(x[None])[0], [fn(r) for r in x]),
                 (func.vmap(fn, in_dims=-1)(x.movedim(0, -1)), [fn(r) for r in x])]
        jac = func.jacrev(func.vmap(fn))(x)        # one entry's rows see only that entry
    finally:
        _batching_rules.LOOP_LOG = None
    assert not log, log
    for got, want in pairs:
        assert np.allclose(got.numpy(), cr.stack(want).numpy())
    for i, r in enumerate(x):
        block = jac[(i,) + (slice(None),) * (jac.ndim - x.ndim - 1) + (i,)]
        assert np.allclose(block.numpy(), func.jacrev(fn)(r).numpy())
