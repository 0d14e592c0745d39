"""chainrule.vmap: in_dims/out_dims, nested structures, gradients through it, errors."""
import functools
import math
import warnings

import numpy as np
import pytest

import chainrule as cr


def test_maps_over_leading_dim():
    x = cr.randn(4, 3, dtype=cr.float64)
    y = cr.randn(4, 3, dtype=cr.float64)
    out = cr.vmap(cr.dot)(x, y)
    assert np.allclose(out.numpy(), (x.numpy() * y.numpy()).sum(1))


def test_in_dims_none_and_other_dim_and_out_dims():
    x = cr.randn(3, 5, dtype=cr.float64)
    w = cr.randn(3, dtype=cr.float64)
    out = cr.vmap(lambda col, w: col * w, in_dims=(1, None), out_dims=1)(x, w)
    assert out.shape == (3, 5) and np.allclose(out.numpy(), x.numpy() * w.numpy()[:, None])


def test_nested_inputs_and_tuple_outputs():
    a = cr.randn(2, 3, dtype=cr.float64)
    b = cr.randn(2, dtype=cr.float64)

    def f(pair, scale):
        x, y = pair
        return x.sum() * y, x * scale["k"]
    s, m = cr.vmap(f, in_dims=((0, 0), {"k": None}))((a, b), {"k": cr.tensor(2.0, dtype=cr.float64)})
    assert s.shape == (2,) and m.shape == (2, 3)
    assert np.allclose(s.numpy(), a.numpy().sum(1) * b.numpy())


def test_gradients_flow_through_vmap():
    x = cr.randn(4, 3, dtype=cr.float64, requires_grad=True)
    out = cr.vmap(lambda row: (row ** 2).sum())(x)
    out.sum().backward()
    assert np.allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_jacobian_rows_match_is_grads_batched():
    x = cr.randn(3, dtype=cr.float64, requires_grad=True)
    y = x.sin()
    eye = cr.eye(3, dtype=cr.float64)
    (batched,) = cr.autograd.grad(y, x, eye, is_grads_batched=True, retain_graph=True)
    rows = cr.vmap(lambda v: cr.autograd.grad(y, x, v, retain_graph=True)[0])(eye)
    assert np.allclose(batched.numpy(), rows.numpy())


def test_errors():
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        cr.vmap(cr.mul)(cr.ones(2), cr.ones(3))
    with pytest.raises(ValueError, match="Expected at least one Tensor to vmap over"):
        cr.vmap(cr.mul, in_dims=(None, None))(cr.ones(2), cr.ones(2))
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        cr.vmap(cr.mul, in_dims=None)(cr.ones(2), cr.ones(2))
    with pytest.raises(ValueError, match="got no inputs"):
        cr.vmap(lambda: cr.ones(2))()
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        cr.vmap(cr.mul, in_dims=(0, 0, 0))(cr.ones(2), cr.ones(2))
    with pytest.raises(ValueError, match="the input is of type <class 'int'>. We cannot vmap "
                                         "over non-Tensor arguments"):
        cr.vmap(lambda x, k: x * k)(cr.ones(2), 3)
    with pytest.raises(ValueError, match="must only return Tensors"):
        cr.vmap(lambda x: 3)(cr.ones(2))
    with pytest.raises(ValueError, match="dimensionality 1"):
        cr.vmap(lambda x: x, in_dims=2)(cr.ones(2))
    with pytest.raises(RuntimeError, match="randomness"):
        cr.vmap(lambda x: x, randomness="sometimes")


def test_parity_with_torch_vmap():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((4, 3, 2))
    ours = cr.vmap(lambda m: m.t() @ m, in_dims=0, out_dims=2)(cr.tensor(a))
    theirs = torch.vmap(lambda m: m.t() @ m, in_dims=0, out_dims=2)(torch.tensor(a))
    assert np.allclose(ours.numpy(), theirs.numpy())


class _Cube(cr.autograd.Function):
    """x ** 3, setup_context style."""

    forward = staticmethod(lambda x: x ** 3)
    setup_context = staticmethod(lambda ctx, inputs, output: ctx.save_for_backward(*inputs))
    backward = staticmethod(lambda ctx, g: 3 * g * ctx.saved_tensors[0] ** 2)


class _CubeWithRule(_Cube):
    calls = 0

    @staticmethod
    def vmap(info, in_dims, x):
        _CubeWithRule.calls += 1
        return _Cube.apply(x), in_dims[0]


class _CubeGenerated(_Cube):
    generate_vmap_rule = True


def test_custom_function_vmap_staticmethod_runs_once():
    x = cr.randn(4, 3, dtype=cr.float64, requires_grad=True)
    _CubeWithRule.calls = 0
    out = cr.vmap(_CubeWithRule.apply)(x)
    assert _CubeWithRule.calls == 1 and np.allclose(out.detach().numpy(), x.detach().numpy() ** 3)
    out.sum().backward()
    assert np.allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)


def test_custom_function_generated_rule_and_missing_rule():
    x = cr.randn(4, 3, dtype=cr.float64)
    assert np.allclose(cr.vmap(_CubeGenerated.apply)(x).numpy(), x.numpy() ** 3)
    with pytest.raises(RuntimeError, match="You tried to vmap over _Cube, but it does not "
                                           "have vmap support. Please override and implement "
                                           "the vmap staticmethod or set generate_vmap_rule"):
        cr.vmap(_Cube.apply)(x)


def test_custom_function_without_setup_context_is_the_reference_error():
    class Twice(cr.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    with pytest.raises(RuntimeError, match="it must override the setup_context staticmethod"):
        cr.vmap(Twice.apply)(cr.ones(2, 3))


def test_one_evaluation_not_a_loop():
    calls = []

    def f(x):
        calls.append(x.shape)
        return x.sin() @ cr.ones(3, dtype=cr.float64)
    out = cr.vmap(f)(cr.randn(5, 3, dtype=cr.float64))
    assert calls == [(3,)] and out.shape == (5,)


def test_nested_vmap_and_out_dims():
    x = cr.randn(2, 3, 4, dtype=cr.float64)
    y = cr.randn(4, dtype=cr.float64)
    out = cr.vmap(cr.vmap(lambda a, b: a * b + a.sum(), in_dims=(0, None)),
                  in_dims=(0, None), out_dims=1)(x, y)
    a = x.numpy()
    expected = (a * y.numpy() + a.sum(-1, keepdims=True)).transpose(1, 0, 2)
    assert out.shape == (3, 2, 4) and np.allclose(out.numpy(), expected)


def test_chunk_size_matches_one_pass():
    x = cr.randn(7, 3, dtype=cr.float64)
    f = lambda r: (r.exp() * 2).cumsum(0)        # noqa: E731
    assert np.allclose(cr.vmap(f, chunk_size=3)(x).numpy(), cr.vmap(f)(x).numpy())


def test_randomness_modes():
    x = cr.ones(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        cr.vmap(lambda r: r * cr.rand(3))(x)
    same = cr.vmap(lambda r: r * cr.rand(3), randomness="same")(x)
    assert np.allclose(same.numpy(), same.numpy()[0])
    different = cr.vmap(lambda r: r * cr.rand(3), randomness="different")(x)
    assert not np.allclose(different.numpy(), different.numpy()[0])


@pytest.mark.parametrize("write, message", [
    (lambda b, row: b.add_(row), r"output with shape \[3\] doesn't match the broadcast shape "
                                 r"\[2, 3\]"),
    (lambda b, row: b[None].add_(row), r"output with shape \[1, 3\] doesn't match the "
                                       r"broadcast shape \[2, 1, 3\]"),
    (lambda b, row: b.mul_(row), r"vmap: inplace arithmetic\(self, \*extra_args\) is not "
                                 r"possible .* not being vmapped over in a vmap"),
    (lambda b, row: b.__setitem__(0, row[0]), "vmap: inplace arithmetic"),
    (lambda b, row: b.copy_(row), "vmap: inplace arithmetic"),
    (lambda b, row: b.fill_(row[0]), r"vmap: fill_\(self, .* operators instead of fill_\."),
    (lambda b, row: b.index_put_((cr.tensor([0]),), row[:1]), r"vmap: index_put_\(self"),
    (lambda b, row: b.pow_(row), r"vmap: aten::pow_\(self, .* not being vmapped over at "
                                 r"level 1\. .* instead of aten::pow_\."),
    (lambda b, row: cr.add(b, row, out=b), r"Batching rule not implemented for aten::add.out; "
                                           r"the fallback path doesn't work on out= or view ops")])
def test_inplace_into_unbatched_tensor_is_the_reference_error(write, message):
    # Note [in-place writes of batched values]: worded as the op's batching rule words it
    def f(row):
        buffer = cr.zeros(3)
        write(buffer, row)
        return buffer
    with pytest.raises(RuntimeError, match=message):
        cr.vmap(f)(cr.ones(2, 3))
    out = cr.vmap(lambda row: row.clone().mul_(2))(cr.ones(2, 3))
    assert np.allclose(out.numpy(), 2)


def _once(fn):
    """fn() and whether anything ran per entry (an op's loop or the whole call)."""
    from chainrule._ops import _batching_rules
    _batching_rules.LOOP_LOG = log = set()
    try:
        return fn(), log
    finally:
        _batching_rules.LOOP_LOG = None


def test_convolution_with_a_batched_input_folds_the_batch():
    x = cr.randn(3, 2, 2, 5, 5, dtype=cr.float64)
    w = cr.randn(4, 2, 3, 3, dtype=cr.float64)
    out, log = _once(lambda: cr.vmap(lambda xi: cr.nn.functional.conv2d(xi, w))(x))
    loop = cr.stack([cr.nn.functional.conv2d(x[i], w) for i in range(3)])
    assert not log and np.allclose(out.numpy(), loop.numpy())



@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("rest", [(), (3, 2)])
def test_batch_norm_with_a_batched_input_runs_once(training, rest):
    # training: each entry's statistics per channel (the batch folds into C); evaluation:
    # the running statistics, shared (the batch folds into N)
    x = cr.randn(3, 4, 5, *rest, dtype=cr.float64, requires_grad=True)
    w, b = cr.rand(5, dtype=cr.float64), cr.randn(5, dtype=cr.float64)
    rm, rv = cr.randn(5, dtype=cr.float64), cr.rand(5, dtype=cr.float64) + 1

    def bn(xi):
        return cr.nn.functional.batch_norm(xi, None if training else rm,
                                           None if training else rv, w, b, training)
    out, log = _once(lambda: cr.vmap(bn)(x))
    loop = cr.stack([bn(x[i]) for i in range(3)])
    assert not log and np.allclose(out.detach().numpy(), loop.detach().numpy())
    g = cr.randn(*out.shape, dtype=cr.float64)
    (got,) = cr.autograd.grad(out, x, g)
    (want,) = cr.autograd.grad(loop, x, g)
    assert np.allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("dims", [(0, 0, 0, None, None), (None, 0, None, None, None),
                                  (0, None, 0, None, None), (0, None, None, 0, 0),
                                  (None, None, None, 0, 0), (0, 0, 0, 0, 0)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_with_per_entry_parameters_runs_once(training, dims):
    # model ensembles: each entry's weight, bias or running statistics (stacked buffers)
    x, w, b, rm = [_f64(*((3,) if d == 0 else ()) + s)
                   for d, s in zip(dims, [(2, 4, 3), (4,), (4,), (4,)])]
    rv = cr.rand(*((3,) if dims[4] == 0 else ()), 4, dtype=cr.float64) + 0.5

    def bn(x, w, b, rm, rv):
        return cr.nn.functional.batch_norm(x, None if training else rm,
                                           None if training else rv, w, b, training)
    _once_like_a_loop(bn, [x, w, b, rm.detach(), rv], dims)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2, "scale_grad_by_freq": True}])
def test_embedding_with_a_batched_weight_runs_once(kwargs):
    # model ensembles: a weight per entry, the indices shared
    weight = cr.randn(3, 5, 4, dtype=cr.float64, requires_grad=True)
    idx = cr.tensor([[0, 2], [2, 4]])
    embed = lambda w: cr.nn.functional.embedding(idx, w, **kwargs)      # noqa: E731
    out, log = _once(lambda: cr.vmap(embed)(weight))
    loop = cr.stack([embed(weight[i]) for i in range(3)])
    assert not log and np.allclose(out.detach().numpy(), loop.detach().numpy())
    g = cr.randn(*out.shape, dtype=cr.float64)
    (got,) = cr.autograd.grad(out, weight, g)
    (want,) = cr.autograd.grad(loop, weight, g)
    assert np.allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("groups", [1, 2])
def test_convolution_with_batched_weights_is_one_grouped_convolution(groups):
    # model ensembles: Note [entries as groups]
    x = cr.randn(2, 4, 5, 5, dtype=cr.float64)
    w = cr.randn(3, 6, 4 // groups, 3, 3, dtype=cr.float64, requires_grad=True)
    b = cr.randn(3, 6, dtype=cr.float64)

    def conv(wi, bi):
        return cr.nn.functional.conv2d(x, wi, bi, padding=1, groups=groups)
    out, log = _once(lambda: cr.vmap(conv)(w, b))
    loop = cr.stack([conv(w[i], b[i]) for i in range(3)])
    assert not log and np.allclose(out.detach().numpy(), loop.detach().numpy())
    g = cr.randn(*out.shape, dtype=cr.float64)
    assert np.allclose(cr.autograd.grad(out, w, g)[0].numpy(),
                       cr.autograd.grad(loop, w, g)[0].numpy())

class _CountedCube(_Cube):
    """_Cube whose backward notes each call's grad mode."""
    grad_modes = []

    @staticmethod
    def backward(ctx, g):
        _CountedCube.grad_modes.append(cr.is_grad_enabled())
        return _Cube.backward(ctx, g)


def test_is_grads_batched_runs_a_custom_backward_once_on_the_batch():
    # Like the reference: one call with the batched cotangents, no warning, recording
    # only under create_graph (a vmap staticmethod is for vmapping the forward).
    x = cr.randn(3, dtype=cr.float64, requires_grad=True)
    _CountedCube.grad_modes = []
    y = _CountedCube.apply(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (g,) = cr.autograd.grad(y, x, cr.eye(3, dtype=cr.float64), is_grads_batched=True,
                                retain_graph=True)
    assert _CountedCube.grad_modes == [False] and g.grad_fn is None
    assert np.allclose(g.numpy(), np.diag(3 * x.detach().numpy() ** 2))
    (g,) = cr.autograd.grad(y, x, cr.eye(3, dtype=cr.float64), is_grads_batched=True,
                            create_graph=True)
    assert _CountedCube.grad_modes == [False, True]
    (second,) = cr.autograd.grad(g.sum(), x)
    assert np.allclose(second.numpy(), 6 * x.detach().numpy())


def test_is_grads_batched_with_create_graph_is_differentiable():
    a = cr.randn(4, 4, dtype=cr.float64)
    x = cr.randn(4, dtype=cr.float64, requires_grad=True)
    y = cr.tanh(a @ x) * x
    eye = cr.eye(4, dtype=cr.float64)
    (jac,) = cr.autograd.grad(y, x, eye, create_graph=True, is_grads_batched=True)
    rows = [cr.autograd.grad(y, x, eye[i], create_graph=True)[0] for i in range(4)]
    assert np.allclose(jac.detach().numpy(), cr.stack(rows).detach().numpy())
    (second,) = cr.autograd.grad(jac.sum(), x, retain_graph=True)
    (expected,) = cr.autograd.grad(cr.stack(rows).sum(), x)
    assert np.allclose(second.numpy(), expected.numpy())


def test_grad_of_batched_output_needs_batched_inputs():
    w = cr.randn(3, dtype=cr.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="not batched the same way"):
        cr.vmap(lambda x: cr.autograd.grad((x * w).sum(), w))(cr.randn(2, 3, dtype=cr.float64))


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_cross_entropy_with_batched_targets_is_one_pass(reduction):
    x = cr.randn(4, 5, 3, dtype=cr.float64)
    target = cr.tensor(np.random.default_rng(0).integers(0, 3, (4, 5)))
    target[0, 1] = -100                                   # ignore_index
    loss = lambda a, b: cr.nn.functional.cross_entropy(a, b, reduction=reduction)  # noqa
    out, log = _once(lambda: cr.vmap(loss)(x, target))
    loop = cr.stack([loss(x[i], target[i]) for i in range(4)])
    assert not log and np.allclose(out.numpy(), loop.numpy())


def test_structure_mismatch_messages_print_both_structures():
    from chainrule._vmap import structure_repr
    assert structure_repr(({"a": 1, "b": (2, 3)}, [4])) == (
        "TreeSpec(tuple, None, [TreeSpec(dict, ['a', 'b'], [*,\n    TreeSpec(tuple, None, "
        "[*,\n      *])]),\n  TreeSpec(list, None, [*])])")
    with pytest.raises(ValueError, match=r"in_dims has structure TreeSpec\(tuple, None, "
                                         r"\[\*,\n  \*\]\) but inputs has structure"):
        cr.vmap(cr.sin, in_dims=(0, 0))(cr.ones(2))
    with pytest.raises(ValueError, match=r"expected `in_dims` to be int or a \(potentially "
                                         r"nested\) tuple .* got: <class 'float'>"):
        cr.vmap(cr.sin, in_dims=0.5)(cr.ones(2))
    with pytest.raises(ValueError, match=r"out_dims=\(0, 0, 0\)\)\(<inputs>\): out_dims is "
                                         "not compatible"):
        cr.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(cr.ones(2))


def test_unbatched_non_tensor_outputs_with_out_dims_none_also_per_entry():
    shape = cr.vmap(lambda a: cr.rand(2).shape, randomness="different", out_dims=None)(cr.ones(3))
    assert shape == (2,) and type(shape) is tuple


def _vjp_in_vmap(x, cotangent_of):
    """grad of x.sin() * w inside vmap over x, w batched like x (what func.vjp makes of
    a shared weight), with the cotangent ``cotangent_of(output)`` gives."""
    from chainrule._vmap import differentiable_input
    w = differentiable_input(cr.arange(3.0, dtype=cr.float64), False)
    out = x.sin() * w
    return cr.autograd.grad(out, w, cotangent_of(out))[0]


def test_cotangent_batched_at_a_newer_level_than_its_output():
    # Note [cotangents batched beyond their outputs]: vmap(vjp_fn)(basis) inside vmap
    x = cr.linspace(-1, 1, 6, dtype=cr.float64).reshape(2, 3)
    basis = cr.eye(3, dtype=cr.float64)
    got = cr.vmap(lambda xi: cr.vmap(lambda v: _vjp_in_vmap(xi, lambda o: v))(basis))(x)
    assert got.shape == (2, 3, 3)
    expected = cr.stack([cr.diag(xi.sin()) for xi in x])
    assert np.allclose(got.numpy(), expected.numpy())


def test_unbatched_cotangent_of_a_batched_output_broadcasts():
    x = cr.linspace(-1, 1, 6, dtype=cr.float64).reshape(2, 3)
    v = cr.tensor([1.0, 2.0, 3.0], dtype=cr.float64)
    got = cr.vmap(lambda xi: _vjp_in_vmap(xi, lambda o: v))(x)
    assert np.allclose(got.numpy(), (x.sin() * v).numpy())


def test_out_dims_match_the_outputs_structure_as_a_prefix():
    x = cr.ones(2, 3)
    assert cr.vmap(cr.sin, out_dims=(1,))(x).shape == (3, 2)      # (d,) for one Tensor
    w = cr.zeros(4)
    out = cr.vmap(lambda a: {"k": a, "j": (a, w)}, out_dims={"k": 1, "j": (0, None)})(x)
    assert out["k"].shape == (3, 2) and out["j"][0].shape == (2, 3) and out["j"][1] is w
    chunked = cr.vmap(lambda a: {"k": a.sum()}, out_dims={"k": 0}, chunk_size=1)(x)
    assert chunked["k"].tolist() == [3.0, 3.0]
    for out_dims, fn in [((0, 1), cr.sin), ([0, 1], lambda a: (a, a)),
                         ((0, 1), lambda a: [a, a]), ((0,), lambda a: {"k": a})]:
        with pytest.raises(ValueError, match="out_dims is not compatible with the structure"):
            cr.vmap(fn, out_dims=out_dims)(x)
    with pytest.raises(ValueError, match="`out_dims` must be an int, None or a python"):
        cr.vmap(lambda a: (a,), out_dims=1.5)(x)


@pytest.mark.parametrize("fn,message", [
    (lambda x: cr.unique(x), "Attempted to vmap over aten::_unique2"),
    (lambda x: x.unique(dim=0), "Attempted to vmap over aten::unique_dim"),
    (lambda x: cr.unique_consecutive(x), "Attempted to vmap over aten::unique_consecutive"),
    (lambda x: x.nonzero(), "Attempted to vmap over aten::nonzero"),
    (lambda x: cr.where(x > 0), "Attempted to vmap over aten::where"),
    (lambda x: cr.nonzero(x, as_tuple=True), "Batching rule not implemented for "
                                             "aten::nonzero_numpy"),
    (lambda x: x[x > 0], "Attempting to batch over indexing with a boolean mask"),
    (lambda x: cr.ones(3).masked_select(x > 0), "Attempted to vmap over `mask` in "
                                                r"torch.masked_select\(self, mask\)")])
def test_ops_with_value_dependent_shapes_refuse_batched_inputs(fn, message):
    # the reference refuses even where every entry's result has one shape
    x = cr.tensor([[1., -2., 1.], [3., -3., 1.]])
    with pytest.raises(RuntimeError, match=message):
        cr.vmap(fn)(x)


def test_unbatched_masks_and_argwhere_still_batch():
    x = cr.tensor([[1., -2., 1.], [3., -3., 1.]])
    m = cr.tensor([True, False, True])
    assert cr.vmap(lambda r: r[m])(x).tolist() == [[1., 1.], [3., 1.]]
    assert cr.vmap(lambda r: r.masked_select(m))(x).tolist() == [[1., 1.], [3., 1.]]
    assert cr.vmap(cr.argwhere)(x).shape == (2, 3, 1)
    g = cr.ones(2, 2)                  # a batched backward through a boolean mask
    y = x[0].requires_grad_()
    assert cr.autograd.grad(y[y > 0], y, g, is_grads_batched=True)[0].tolist() == \
        [[1., 0., 1.]] * 2


def test_reading_values_of_a_batched_tensor_uses_the_references_words():
    x = cr.ones(2, 3)
    for read in (lambda r: r.tolist(), lambda r: r.numpy()):
        with pytest.raises(RuntimeError, match="Cannot access data pointer of Tensor that "
                                               "doesn't have storage"):
            cr.vmap(read)(x)
    with pytest.raises(RuntimeError, match="please file an issue at "
                                           r"https://github.com/pytorch/pytorch/issues \."):
        cr.vmap(lambda r: r if r.sum() > 0 else -r)(x)
    with pytest.raises(RuntimeError, match="If error is occurring somewhere inside PyTorch "
                                           "internals, please file a bug report."):
        cr.vmap(lambda r: r.sum().item())(x)


def test_different_randomness_draws_once_for_the_batch():
    # Note [one draw for a batch]: the reference's batched draw, shaped (batch, *shape)
    x = cr.zeros(3, 4, 5)
    for draw, whole in [(lambda t: cr.randn_like(t), lambda: cr.randn(3, 4, 5)),
                        (lambda t: cr.normal(t, 1.0), lambda: cr.normal(x, 1.0)),
                        (lambda t: cr.rand(2) + t.sum(), lambda: cr.rand(3, 2)),
                        (lambda t: cr.bernoulli(t + 0.5), lambda: cr.bernoulli(x + 0.5))]:
        cr.manual_seed(0)
        got = cr.vmap(draw, randomness="different")(x)
        cr.manual_seed(0)
        assert cr.equal(got, whole())
    cr.manual_seed(0)                 # draws of several ops come in the ops' order
    got = cr.vmap(lambda t: cr.rand(2) + cr.randn(20).sum() + t.sum(),
                  randomness="different")(x)
    cr.manual_seed(0)
    first = cr.rand(3, 2)
    assert cr.equal(got, first + cr.randn(3, 20).sum(1, keepdim=True))


def _close(a, b):
    return np.allclose(a.detach().numpy(), b.detach().numpy(), equal_nan=True)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("kwargs", [{}, {"ignore_index": 1}, {"weight": [0.5, 2.0, 1.0]},
                                    {"ignore_index": 1, "weight": [0.0, 1.0, 0.0]}])
@pytest.mark.parametrize("spatial", [(), (2,)])
def test_nll_loss_with_shared_targets_runs_once(reduction, kwargs, spatial):
    # Note [targets along a trailing dimension]: forward, backward, batched backward
    x = cr.randn(4, 5, 3, *spatial, dtype=cr.float64, requires_grad=True)
    target = cr.tensor(np.random.default_rng(1).integers(0, 3, (5, *spatial)))
    target.view(-1)[0] = 0                  # a kept label of weight 0 (nan when all are)
    if "weight" in kwargs:
        kwargs = dict(kwargs, weight=cr.tensor(kwargs["weight"], dtype=cr.float64))

    def loss(xi):
        return cr.nn.functional.nll_loss(xi, target, reduction=reduction, **kwargs)
    out, log = _once(lambda: cr.vmap(loss)(x))
    loop = cr.stack([loss(x[i]) for i in range(4)])
    assert not log and _close(out, loop)
    g = cr.randn(*out.shape, dtype=cr.float64, requires_grad=True)
    (got,) = cr.autograd.grad(out, x, g, create_graph=True)
    (want,) = cr.autograd.grad(loop, x, g, create_graph=True)
    assert _close(got, want)
    rows = cr.randn(3, *got.shape, dtype=cr.float64)
    (batched,), log = _once(lambda: cr.autograd.grad(got, g, rows, is_grads_batched=True,
                                                     retain_graph=True))
    looped = cr.stack([cr.autograd.grad(want, g, r, retain_graph=True)[0] for r in rows])
    assert not log and _close(batched, looped)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_nll_loss_with_batched_targets_and_weights_runs_once(reduction):
    x = cr.randn(4, 5, 3, dtype=cr.float64, requires_grad=True)
    target = cr.tensor([[0, 1, 2, 1, 0], [1, 1, 1, 1, 1], [2, 0, 1, 1, 2], [0, 0, 0, 1, 1]])
    weight = cr.tensor([0.0, 2.0, 0.5], dtype=cr.float64)

    def loss(xi, ti):
        return cr.nn.functional.nll_loss(xi, ti, weight=weight, ignore_index=1,
                                         reduction=reduction)
    out, log = _once(lambda: cr.vmap(loss)(x, target))
    loop = cr.stack([loss(x[i], target[i]) for i in range(4)])
    assert not log and _close(out, loop)        # entry 1: all ignored, entry 3: weight 0
    g = cr.ones(*out.shape, dtype=cr.float64)
    assert _close(cr.autograd.grad(out, x, g)[0], cr.autograd.grad(loop, x, g)[0])


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("entry", [(5, 4), (4,)])
@pytest.mark.parametrize("batched_target", [True, False])
@pytest.mark.parametrize("loss", ["multi_margin", "multi_margin_p2_weight", "multilabel"])
def test_hinge_losses_run_once(reduction, entry, batched_target, loss):
    # hinge_loss: the entries' rows as one loss; values, gradients and double backward
    rng = np.random.default_rng(2)
    x = cr.tensor(rng.standard_normal((3,) + entry), requires_grad=True)
    if loss == "multilabel":
        target = cr.tensor(rng.integers(-1, 4, (3,) + entry))
        fn = cr.nn.functional.multilabel_margin_loss
    else:
        target = cr.tensor(rng.integers(0, 4, (3,) + entry[:-1]))
        weight = cr.tensor([0.5, 1.0, 2.0, 0.0], dtype=cr.float64)
        kw = {"p": 2, "weight": weight, "margin": 0.7} if "p2" in loss else {}
        fn = functools.partial(cr.nn.functional.multi_margin_loss, **kw)
    target = target if batched_target else target[0]
    loss_of = lambda xi, ti: fn(xi, ti, reduction=reduction)          # noqa: E731
    dims = (0, 0 if batched_target else None)
    out, log = _once(lambda: cr.vmap(loss_of, in_dims=dims)(x, target))
    loop = cr.stack([loss_of(x[i], target[i] if batched_target else target)
                     for i in range(3)])
    assert not log and _close(out, loop)
    g = cr.randn(*out.shape, dtype=cr.float64)
    (got,) = cr.autograd.grad(out, x, g, create_graph=True)
    (want,) = cr.autograd.grad(loop, x, g, create_graph=True)
    assert _close(got, want)
    if "p2" in loss:                    # (p = 1: piecewise linear, no second derivative)
        assert _close(cr.autograd.grad((got ** 2).sum(), x)[0],
                      cr.autograd.grad((want ** 2).sum(), x)[0])


@pytest.mark.parametrize("pick", [
    lambda r: cr.topk(r, 2), lambda r: cr.topk(r, 3, largest=False, sorted=False),
    lambda r: cr.kthvalue(r, 2, keepdim=True), lambda r: cr.median(r, 0),
    lambda r: cr.nanmedian(r, 0), lambda r: cr.cummax(r, 0), lambda r: cr.cummin(r, -1),
    lambda r: cr.sort(r), lambda r: cr.argsort(r, descending=True), cr.median,
    cr.nanmedian, lambda r: cr.take(r, cr.tensor([[4, -1], [0, 2]])),
    lambda r: cr.masked_select(r, cr.tensor([True, False, True, True, False]))])
@pytest.mark.parametrize("entry", [(5,), ()])
def test_ops_picking_by_index_run_once(pick, entry):
    # the indices of the whole batch in one call; ties as per entry (Note [ties on the CPU])
    x = cr.tensor([[1., 3., 3., 0., 2.], [2., 2., 2., 2., 2.], [float("nan"), 1., 0., 5., 4.]],
                  dtype=cr.float64)[:, :entry[0] if entry else 1].reshape(3, *entry)
    x.requires_grad_()
    try:
        loop = [pick(x[i]) for i in range(3)]
    except (RuntimeError, IndexError):
        return                                  # k out of range, mask shapes of a 0-d entry
    out, log = _once(lambda: cr.vmap(pick)(x))
    outs, loops = ([out], [loop]) if isinstance(out, cr.Tensor) else (out, list(zip(*loop)))
    for got, want in zip(outs, loops):
        assert _close(got, cr.stack(list(want)))
    assert not log
    if outs[0].requires_grad:
        g, want = cr.randn(*outs[0].shape, dtype=cr.float64), cr.stack(list(loops[0]))
        assert _close(cr.autograd.grad(outs[0], x, g)[0], cr.autograd.grad(want, x, g)[0])


@pytest.mark.parametrize("entry", [(4, 2), ()])
@pytest.mark.parametrize("value", ["batched", "unbatched"])
def test_index_fill_runs_once(entry, value):
    x = cr.randn(3, *entry, dtype=cr.float64, requires_grad=True)
    v = cr.randn(3, dtype=cr.float64, requires_grad=True)
    if value == "unbatched":
        v = v[0].detach().item()
    index = cr.tensor([0, 2] if entry else [0])
    fill = lambda xi, vi: xi.index_fill(0, index, vi)  # noqa: E731
    out, log = _once(lambda: cr.vmap(fill, in_dims=(0, 0 if value == "batched" else None))(x, v))
    loop = cr.stack([fill(x[i], v[i] if value == "batched" else v) for i in range(3)])
    assert not log and _close(out, loop)
    if value == "unbatched":
        return
    g = cr.randn(3, *entry, dtype=cr.float64)
    for a, b in zip(cr.autograd.grad(out, (x, v), g), cr.autograd.grad(loop, (x, v), g)):
        assert _close(a, b)


@pytest.mark.parametrize("pool", [
    lambda a: cr.nn.functional.max_pool2d(a, 2, return_indices=True),
    lambda a: cr.nn.functional.adaptive_max_pool2d(a, (2, 1), return_indices=True)])
def test_max_pooling_indices_of_the_whole_batch(pool):
    x = cr.randn(3, 2, 4, 4, dtype=cr.float64, requires_grad=True)
    (values, indices), log = _once(lambda: cr.vmap(pool)(x))
    loop = [pool(x[i]) for i in range(3)]
    assert not log and _close(indices, cr.stack([i for _, i in loop]))
    want = cr.stack([v for v, _ in loop])
    assert _close(values, want)
    g = cr.randn(*values.shape, dtype=cr.float64)
    assert _close(cr.autograd.grad(values, x, g)[0], cr.autograd.grad(want, x, g)[0])


def test_ctc_loss_folds_the_batch_into_its_samples():
    lp = cr.randn(3, 6, 2, 4, dtype=cr.float64).log_softmax(-1).requires_grad_()
    loss = lambda a: cr.nn.functional.ctc_loss(a, cr.tensor([[1, 2], [3, 3]]),  # noqa: E731
                                               (6, 5), (2, 2), reduction="none")
    out, log = _once(lambda: cr.vmap(loss)(lp))
    loop = cr.stack([loss(lp[i]) for i in range(3)])
    assert not log and _close(out, loop)
    g = cr.randn(3, 2, dtype=cr.float64)
    assert _close(cr.autograd.grad(out, lp, g)[0], cr.autograd.grad(loop, lp, g)[0])


def test_what_the_reference_refuses_or_loops_under_vmap():
    x = cr.randn(3, 4, dtype=cr.float64)
    with pytest.raises(RuntimeError, match="Attempted to vmap over `mask` in torch.masked_sel"):
        cr.vmap(cr.masked_select)(x, x > 0)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        cr.vmap(cr.nn.functional.gaussian_nll_loss)(x, x, x.exp())
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        cr.vmap(cr.nn.functional.binary_cross_entropy)(x.sigmoid() * 1.5, x.sigmoid())
    for dynamic in (cr.nonzero, cr.unique, cr.unique_consecutive):
        with pytest.raises(RuntimeError, match="can output dynamic shape. Attempted to vmap"):
            cr.vmap(dynamic)(x)
    with pytest.raises(RuntimeError, match="batch over indexing with a boolean mask"):
        cr.vmap(lambda r: r[r > 0])(x)
    with pytest.warns(UserWarning, match="batching rule for aten::masked_scatter. Please"):
        out = cr.vmap(cr.masked_scatter)(x, x > 0, x)          # it loops there too
    assert np.allclose(out.numpy(), cr.stack([cr.masked_scatter(r, r > 0, r) for r in x]).numpy())


@pytest.mark.parametrize("dims", [(0, 0), (None, 0), (0, None)])
def test_lstsq_solution_runs_once(dims):
    # the table op (the public function computes ranks per entry: residuals' shapes)
    from chainrule._ops._registry import apply_op
    from chainrule._ops.linalg import LSTSQ
    a = cr.randn(*(3,)[:dims[0] is not None], 5, 4, dtype=cr.float64, requires_grad=True)
    b = cr.randn(*(3,)[:dims[1] is not None], 5, 2, dtype=cr.float64, requires_grad=True)
    solve = lambda ai, bi: apply_op(LSTSQ, (ai, bi), {"rcond": None})  # noqa: E731
    out, log = _once(lambda: cr.vmap(solve, in_dims=dims)(a, b))
    loop = cr.stack([solve(a if dims[0] is None else a[i], b if dims[1] is None else b[i])
                     for i in range(3)])
    assert not log and _close(out, loop)
    g = cr.randn(*out.shape, dtype=cr.float64)
    for got, want in zip(cr.autograd.grad(out, (a, b), g), cr.autograd.grad(loop, (a, b), g)):
        assert _close(got, want)


def test_every_level_decides_a_draw():
    # Note [randomness of jacfwd]: an outer "error" level refuses the draw an inner
    # "same" one allows, and an outer "different" one draws per outer entry
    x = cr.ones(2, 2, 3)
    draw = lambda r: r * cr.rand(3)        # noqa: E731
    with pytest.raises(RuntimeError, match="randomness error mode"):
        cr.vmap(cr.vmap(draw, randomness="same"))(x)
    cr.manual_seed(0)
    got = cr.vmap(cr.vmap(draw, randomness="same"), randomness="different")(x)
    cr.manual_seed(0)
    assert cr.equal(got, cr.rand(2, 1, 3).expand(2, 2, 3))


def _once_like_a_loop(fn, args, in_dims):
    """vmap(fn) ran without a per-entry loop and equals the loop, values and gradients
    (with respect to every floating argument)."""
    out, log = _once(lambda: cr.vmap(fn, in_dims=in_dims)(*args))
    size = next(a.shape[d] for a, d in zip(args, in_dims) if d is not None)
    loop = cr.stack([fn(*[a if d is None else a.select(d, i) for a, d in zip(args, in_dims)])
                     for i in range(size)])
    assert not log, log
    assert np.allclose(out.detach().numpy(), loop.detach().numpy(), atol=1e-12)
    wrt = [a for a in args if a.requires_grad]
    g = cr.randn(*out.shape, dtype=cr.float64)
    for got, want in zip(cr.autograd.grad(out, wrt, g), cr.autograd.grad(loop, wrt, g)):
        assert np.allclose(got.numpy(), want.numpy(), atol=1e-12)


def _f64(*shape):
    return cr.randn(*shape, dtype=cr.float64, requires_grad=True)


_F = cr.nn.functional
_PER_ENTRY_WEIGHTS = {     # model ensembles: a weight or bias per entry (Note [affine after
    "layer_norm": (lambda x, w, b: _F.layer_norm(x, (5,), w, b), (4, 5), (5,)),   # normalising])
    "group_norm": (lambda x, w, b: _F.group_norm(x, 2, w, b), (2, 4, 3), (4,)),
    "group_norm 4-D": (lambda x, w, b: _F.group_norm(x, 2, w, b), (2, 4, 3, 2), (4,)),
}


@pytest.mark.parametrize("dims", [(0, 0, 0), (None, 0, 0), (0, 0, None), (0, None, 0)])
@pytest.mark.parametrize("name", list(_PER_ENTRY_WEIGHTS))
def test_norms_with_per_entry_weights_run_once(name, dims):
    fn, x_shape, w_shape = _PER_ENTRY_WEIGHTS[name]
    args = [_f64(*((3,) if d == 0 else ()) + shape) for d, shape in
            zip(dims, (x_shape, w_shape, w_shape))]
    _once_like_a_loop(fn, args, dims)
    _once_like_a_loop(lambda x, w: fn(x, w, None), args[:2], dims[:2])
    _once_like_a_loop(lambda x, b: fn(x, None, b), args[::2], dims[::2])


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("x_batched", [True, False])
def test_index_select_with_an_index_per_entry_runs_once(dim, x_batched):
    x = _f64(*((3,) if x_batched else ()), 4, 5)
    index = cr.tensor([[0, 3], [1, 1], [3, 0]])
    _once_like_a_loop(lambda xi, i: cr.index_select(xi, dim, i), [x, index],
                      (0 if x_batched else None, 0))
    with pytest.raises(IndexError, match="index out of range in self"):
        cr.vmap(lambda xi, i: xi.index_select(0, i), in_dims=(None, 0))(
            x.detach()[0] if x_batched else x.detach(), cr.tensor([[0], [9], [1]]))


_INDEX_PER_ENTRY = {       # (fn, its arguments after x and the index, their batch dims)
    "index_add": (lambda x, i, s: x.index_add(1, i, s, alpha=2.0), [(3, 4, 2)], [0]),
    "index_add shared source": (lambda x, i, s: x.index_add(-1, i, s), [(4, 2)], [None]),
    "index_copy": (lambda x, i, s: x.index_copy(1, i, s), [(3, 4, 2)], [0]),
    "index_fill": (lambda x, i: x.index_fill(1, i, -1.5), [], []),
    "index_fill of a 1-D entry": (lambda x, i: x[0].index_fill(0, i, -1.5), [], []),
    "index_fill with a value per entry": (lambda x, i, v: x.index_fill(1, i, v), [(3,)], [0]),
    "index_fill with a shared value": (lambda x, i, v: x.index_fill(-1, i, v), [()], [None]),
}


@pytest.mark.parametrize("x_batched", [True, False])
@pytest.mark.parametrize("name", list(_INDEX_PER_ENTRY))
def test_index_ops_with_an_index_per_entry_run_once(name, x_batched):
    # Note [an index per entry]; distinct positions per entry (index_copy writes each once)
    fn, shapes, dims = _INDEX_PER_ENTRY[name]
    x = _f64(*((3,) if x_batched else ()), 4, 5)
    index = cr.tensor([[0, 3], [1, 2], [3, 0]])
    _once_like_a_loop(fn, [x, index] + [_f64(*s) for s in shapes],
                      (0 if x_batched else None, 0, *dims))


@pytest.mark.parametrize("equation", ["...ij,jk->...ik", "bij,jk", "...j,jk", "Bij,jA",
                                      "ij,jk->", "i...,i..."])
@pytest.mark.parametrize("dims", [(0, 0), (0, None), (None, 0)])
def test_einsum_with_ellipses_and_implicit_outputs_runs_once(equation, dims):
    shapes = {"...ij,jk->...ik": ((2, 4, 5), (5, 6)), "bij,jk": ((2, 4, 5), (5, 6)),
              "...j,jk": ((2, 4, 5), (5, 6)), "Bij,jA": ((2, 4, 5), (5, 6)),
              "ij,jk->": ((4, 5), (5, 6)), "i...,i...": ((3, 2), (3, 2))}[equation]
    args = [_f64(*((3,) if d == 0 else ()) + s) for d, s in zip(dims, shapes)]
    _once_like_a_loop(lambda a, b: cr.einsum(equation, a, b), args, dims)


_I, _J = cr.tensor([0, 2]), cr.tensor([1, 3])
_APART = {             # advanced indices apart: NumPy puts their dims first, then the batch
    "getitem": (lambda x: x[_I, :, _J], [], []),      # (fn, other args' shapes, batch dims)
    "getitem with None": (lambda x: x[_I, None, _J], [], []),
    "getitem 2-D index": (lambda x: x[cr.tensor([[0], [2]]), :, _J], [], []),
    "getitem mask": (lambda x: x[cr.tensor([True, False, True]), :, _J], [], []),
    "setitem values per entry": (lambda x, v: _written(x, v), [(3, 2, 4)], [0]),
    "setitem a value per entry": (lambda x, v: _written(x, v), [(3,)], [0]),
    "setitem shared values": (lambda x, v: _written(x, v), [(2, 4)], [None]),
    "setitem shared row": (lambda x, v: _written(x, v), [(4,)], [None]),
}


def _written(x, v):
    x = x.clone()
    x[_I, :, _J] = v
    return x


@pytest.mark.parametrize("name", list(_APART))
def test_advanced_indices_apart_run_once(name):
    fn, shapes, dims = _APART[name]
    _once_like_a_loop(fn, [_f64(3, 3, 4, 5)] + [_f64(*s) for s in shapes], (0, *dims))


_CONV_PER_ENTRY = {    # Note [entries as groups]: (fn, argument shapes, batch dims)
    "transposed": (lambda x, w, b: _F.conv_transpose2d(x, w, b, stride=2, padding=1),
                   [(3, 2, 4, 5, 5), (3, 4, 6, 3, 3), (3, 6)], (0, 0, 0)),
    "transposed, grouped, shared input": (
        lambda x, w: _F.conv_transpose2d(x, w, groups=2, output_padding=1, stride=2),
        [(2, 4, 5, 5), (3, 4, 3, 3, 3)], (None, 0)),
    "transposed, a bias per entry": (lambda x, w, b: _F.conv_transpose1d(x, w, b),
                                     [(3, 2, 4, 5), (4, 6, 3), (3, 6)], (0, None, 0)),
    "entries without N": (lambda x, w: _F.conv2d(x, w, padding=1),
                          [(3, 4, 5, 5), (3, 6, 4, 3, 3)], (0, 0)),
    "a shared input without N": (lambda x, w: _F.conv2d(x, w), [(4, 5, 5), (3, 6, 4, 3, 3)],
                                 (None, 0)),
    "transposed, entries without N": (lambda x, w, b: _F.conv_transpose2d(x, w, b),
                                      [(3, 4, 5, 5), (3, 4, 6, 3, 3), (3, 6)], (0, 0, 0)),
}


@pytest.mark.parametrize("name", list(_CONV_PER_ENTRY))
def test_convolutions_with_per_entry_weights_run_once(name):
    fn, shapes, dims = _CONV_PER_ENTRY[name]
    _once_like_a_loop(fn, [_f64(*s) for s in shapes], dims)


def test_as_strided_reads_each_entrys_storage_from_the_batch_stride():
    # Note [as_strided under vmap]: offsets count in the physical storage, entry i
    # shifted by i batch strides, as in the reference's rule
    x = cr.arange(24.).reshape(4, 6)
    got = cr.vmap(lambda t: t.as_strided((2, 2), (1, 2), 1))(x)
    assert got.tolist()[1] == [[7.0, 9.0], [8.0, 10.0]]
    across = cr.vmap(lambda t: t.as_strided((2,), (1,), 1), in_dims=1)(x)
    assert across.tolist()[:2] == [[1.0, 2.0], [2.0, 3.0]]
    of_view = cr.vmap(lambda t: t.as_strided((2,), (1,), 1))(x[:, 1:])
    assert of_view.tolist() == [[1.0, 2.0], [7.0, 8.0], [13.0, 14.0], [19.0, 20.0]]
    nested = cr.vmap(cr.vmap(lambda t: t.as_strided((2,), (2,))))(cr.arange(24.).reshape(2, 3, 4))
    assert nested[1, 2].tolist() == [20.0, 22.0]
    with pytest.raises(RuntimeError, match=r"as_strided\(\[3, 3\], \[3, 1\], 0\) can access "
                       r"memory outside of `tensor`. `result` can access some memory in "
                       r"range \[0, 9\], but `tensor` can only access some memory in range "
                       r"\[0, 6\]"):
        cr.vmap(lambda t: t.as_strided((3, 3), (3, 1)))(x)
    with pytest.raises(RuntimeError, match=r"range \[0, 2\], but .* range \[1, 6\]"):
        cr.vmap(lambda t: t[1:].as_strided((2,), (1,), 0))(x)
    written = x.clone()
    cr.vmap(lambda t: t.as_strided((2,), (2,), 1).mul_(0))(written)
    assert written[2].tolist() == [12.0, 0.0, 14.0, 0.0, 16.0, 17.0]


def _entries(shape, dim, make=None):
    """Three entries of ``shape`` along ``dim`` (None: one shared tensor): floats that
    require grad, or integers from ``make(shape)``."""
    shape = shape if dim is None else shape[:dim] + (3,) + shape[dim:]
    return _f64(*shape) if make is None else cr.tensor(make(shape))


def _zeros(shape):                 # the one position of a 0-d self
    return np.zeros(shape, np.int64)


def _positions(shape):
    return np.random.default_rng(0).integers(0, 2, shape)


# Note [gather and scatter on vectors], Note [0-d operands of the index ops]: (fn, the
# entries' shapes of self, index and src). The reference's backward refuses the
# gradient of a 0-d self's src of another shape than the index ("ScatterAddBackward0
# returned an invalid gradient"). Its vmap differs from its loop: index_select with a
# 0-d index on entries of rank 1 or more returns the whole entry; index_copy with a 0-d
# index raises "Expected index [3, 4, 2] to be no larger than self"; index_fill with a
# value per entry into a shared self fills every entry with the last entry's value; on
# a 0-d entry, index_select/index_add/index_copy with more indices than its one position
# return a value where the loop raises.
_0D_OPERANDS = {
    "scatter_add": (lambda x, i, s: x.scatter_add(0, i, s), (), (), ()),
    "scatter_add, src's corner": (lambda x, i, s: x.scatter_add(-1, i, s), (), (2,), (3,)),
    "scatter_add, 1-d self": (lambda x, i, s: x.scatter_add(0, i, s), (4,), (), ()),
    "scatter, src's first value": (lambda x, i, s: x.scatter(0, i, s), (), (), (1,)),
    "scatter of a number": (lambda x, i, s: x.scatter(0, i, 2.5) * s, (), (1,), ()),
    "scatter_reduce": (lambda x, i, s: x.scatter_reduce(0, i, s, "amax", include_self=False),
                       (), (2,), (2,)),
    "gather": (lambda x, i, s: x.gather(0, i) * s, (), (2,), ()),
    "gather, 1-d self": (lambda x, i, s: x.gather(0, i) * s, (4,), (), ()),
    "index_select": (lambda x, i, s: x.index_select(0, i) * s, (), (1,), ()),
    "index_select, 0-d index": (lambda x, i, s: x.index_select(-1, i) * s, (), (), ()),
    "index_select, 2-d self": (lambda x, i, s: x.index_select(1, i) * s, (4, 2), (), ()),
    "index_add": (lambda x, i, s: x.index_add(0, i, s, alpha=2.5), (), (1,), ()),
    "index_add, 2-d self": (lambda x, i, s: x.index_add(1, i, s, alpha=-1.5), (4, 2), (),
                            (4, 1)),
    "index_copy": (lambda x, i, s: x.index_copy(0, i, s), (), (), ()),
    "index_copy, 1-d self": (lambda x, i, s: x.index_copy(0, i, s), (4,), (), ()),
    "index_fill": (lambda x, i, s: x.index_fill(0, i, -2.0) * s, (), (), ()),
    "index_fill with a tensor": (lambda x, i, s: x.index_fill(0, i, s), (), (1,), ()),
    "index_fill with a tensor, 2-d self": (lambda x, i, s: x.index_fill(-1, i, s), (4, 2),
                                           (2,), ()),
}


@pytest.mark.parametrize("dims", [(0, 0, 0), (None, 0, 0), (0, None, None), (None, None, 0),
                                  (0, 0, None)])
@pytest.mark.parametrize("name", list(_0D_OPERANDS))
def test_0d_operands_of_gather_scatter_and_index_ops_run_once(name, dims):
    fn, self_shape, index_shape, src_shape = _0D_OPERANDS[name]
    index = _entries(index_shape, dims[1], _positions if self_shape else _zeros)
    _once_like_a_loop(fn, [_entries(self_shape, dims[0]), index, _entries(src_shape, dims[2])],
                      dims)


def test_index_fill_with_a_shared_value_tensor_fills_every_entry():
    # (the value was expanded to the batch, then broadcast against the entries' last dim)
    x, value = cr.randn(2, 4, 2, dtype=cr.float64), cr.tensor(7.0, dtype=cr.float64)
    fill = lambda xi: xi.index_fill(1, cr.tensor([1]), value)  # noqa: E731
    out, log = _once(lambda: cr.vmap(fill)(x))
    assert not log and cr.equal(out, cr.stack([fill(x[i]) for i in range(2)]))


@pytest.mark.parametrize("size", [1, 0])
def test_unfold_of_a_0d_entry_is_a_view_run_once(size):
    # (the reference's vmap(grad) of unfold(0, 0, 1) raises "output with shape [0]
    # doesn't match the broadcast shape [2, 0]")
    _once_like_a_loop(lambda x: x.unfold(0, size, 1) * 2, [_f64(3)], (0,))
    x = cr.tensor([1.0, 2.0, 3.0])
    windows = cr.vmap(lambda r: r.unfold(-1, size, 2))(x)
    assert windows.shape == (3, size) and windows._base is x
    windows.add_(10)
    assert x.tolist() == ([11.0, 12.0, 13.0] if size else [1.0, 2.0, 3.0])


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("dims", [(0, 0, 0), (0, None, 0), (None, None, 0), (0, 0, None)])
@pytest.mark.parametrize("entry", [(), (5,), (4, 5)])
def test_multi_margin_loss_of_0d_entries_or_a_weight_per_entry_runs_once(entry, dims,
                                                                         reduction):
    classes = entry[-1] if entry else 1
    target = _entries(entry[:-1], dims[1], lambda s: np.arange(math.prod(s)).reshape(s) % classes)
    weight = _entries((classes,), dims[2]).detach() + 2.0      # (it takes no gradient)
    _once_like_a_loop(lambda x, t, w: _F.multi_margin_loss(x, t, p=2, margin=0.7, weight=w,
                                                           reduction=reduction),
                      [_entries(entry, dims[0]), target, weight], dims)


@pytest.mark.parametrize("dims", [(0, 0), (0, None), (None, 0)])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_multilabel_margin_loss_of_0d_entries_runs_once(reduction, dims):
    target = _entries((), dims[1], lambda s: -(np.arange(math.prod(s)).reshape(s) % 2))
    _once_like_a_loop(lambda x, t: _F.multilabel_margin_loss(x, t, reduction=reduction),
                      [_entries((), dims[0]), target], dims)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"scale_grad_by_freq": True},
                                    {"include_last_offset": True}])
@pytest.mark.parametrize("dims", [(0, 0), (None, 0), (None, 1)])
@pytest.mark.parametrize("bags", ["offsets", "2-d input"])
def test_embedding_bag_with_per_sample_weights_per_entry_runs_once(bags, dims, kwargs):
    # _bags_side_by_side: one bag op over the entries' bags
    if bags == "offsets":
        indices, offsets = cr.tensor([1, 2, 4, 5, 4, 2]), cr.tensor([0, 2, 2, 5])
    else:
        indices, offsets = cr.tensor([[1, 2, 4], [5, 4, 2]]), None
        kwargs = {k: v for k, v in kwargs.items() if k != "include_last_offset"}
    _once_like_a_loop(lambda w, p: _F.embedding_bag(indices, w, offsets, mode="sum",
                                                    per_sample_weights=p, **kwargs),
                      [_entries((6, 2), dims[0]), _entries(tuple(indices.shape), dims[1])],
                      dims)
