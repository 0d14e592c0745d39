"""Views and in-place ops on them: shared memory and version counters, CopySlices
(Note [rebasing after in-place on a view]), re-pointed sibling views, multi-output
views, overlapping (expanded) views, saved views, and double backward through
CopySlices, with a torch-parity tier."""
import numpy as np
import pytest

import chainrule as cr


def _x(*shape, requires_grad=True):
    data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) / 10 + 0.5
    return cr.tensor(data, requires_grad=requires_grad)


def _weights(*shape):
    return cr.tensor(np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape))


# --- shared memory and versions -------------------------------------------------------------
def test_views_share_the_version_counter_of_their_base():
    y = _x(3, 4, requires_grad=False)
    a, b = y[0], y.t()
    assert a._version == b._version == y._version == 0
    a.mul_(2)
    assert a._version == b._version == y._version == 1
    y[1] = 0.0
    assert a._version == b._version == y._version == 2
    c = b[1:]                                 # a view of a view: same counter
    c.zero_()
    assert y._version == 3 and c._base is y


def test_detach_shares_memory_and_version():
    y = _x(3, requires_grad=False)
    d = y.detach()
    d.add_(1)
    assert y._version == 1
    np.testing.assert_array_equal(y.numpy(), d.numpy())


# --- CopySlices ---------------------------------------------------------------------------------
def test_inplace_on_a_selected_row():
    x = _x(3, 4)
    y = x.clone()
    v = y[0]
    v.mul_(2)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert y.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    assert v.grad_fn.name() == "AsStridedBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2] * 4, [1] * 4, [1] * 4])


@pytest.mark.parametrize("name,view,expected", [
    ("transposed", lambda y: y.t()[1], [[1, 3, 1, 1]] * 3),
    ("reshaped", lambda y: y.view(2, 6)[:, 1], [[1, 3, 1, 1], [1, 1, 1, 3], [1, 1, 1, 1]]),
    ("strided", lambda y: y[::2, 1::2], [[1, 3, 1, 3], [1, 1, 1, 1], [1, 3, 1, 3]]),
    ("diagonal", lambda y: y.diagonal(), [[3, 1, 1, 1], [1, 3, 1, 1], [1, 1, 3, 1]]),
    ("flattened", lambda y: y.view(-1)[5:7], [[1, 1, 1, 1], [1, 3, 3, 1], [1, 1, 1, 1]]),
])
def test_inplace_on_views_of_all_kinds(name, view, expected):
    x = _x(3, 4)
    y = x * 1
    view(y).mul_(3)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_inplace_with_a_tensor_argument_that_requires_grad():
    x, b = _x(3, 4), _x(4) * 1
    b.retain_grad()
    y = x * 1
    y[1].mul_(b)
    (y * _weights(3, 4)).sum().backward()
    w = _weights(3, 4).numpy()
    expected = np.ones((3, 4)) * w
    expected[1] *= b.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), expected)
    np.testing.assert_allclose(b.grad.numpy(), w[1] * x.detach().numpy()[1])


def test_setitem_on_a_non_leaf_sends_gradient_to_value_and_rest():
    x, v = _x(3, 4), _x(4)
    y = x.sin()
    y[2] = v * v
    y.sum().backward()
    expected = np.cos(x.detach().numpy())
    expected[2] = 0
    np.testing.assert_allclose(x.grad.numpy(), expected)
    np.testing.assert_allclose(v.grad.numpy(), 2 * v.detach().numpy())


def test_advanced_setitem_on_a_view():
    x, v = _x(3, 4), _x(2)
    y = x * 1
    y[1, [3, 0]] = v
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    (y * _weights(3, 4)).sum().backward()
    expected = _weights(3, 4).numpy().copy()
    expected[1, [3, 0]] = 0
    np.testing.assert_allclose(x.grad.numpy(), expected)
    np.testing.assert_allclose(v.grad.numpy(), _weights(3, 4).numpy()[1, [3, 0]])


def test_many_writes_into_one_buffer():
    x = _x(4, 3)
    out = cr.zeros(4, 3, dtype=cr.float64)
    for i in range(4):
        out[i] = x[i] * (i + 1)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.repeat([[1], [2], [3], [4]], 3, 1))


def test_stale_views_are_repointed_after_inplace_on_a_sibling_or_the_base():
    x = _x(3, 4)
    y = x * 1
    rows = y[0:2]                      # made before the writes below
    row1 = y[1]
    y[0].mul_(10)
    y.mul_(2)
    assert rows.grad_fn.name() == "AsStridedBackward0"
    (rows.sum() + row1.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[20] * 4, [4] * 4, [0] * 4])


def test_views_of_a_plain_tensor_start_requiring_grad_after_a_recorded_write():
    v = _x(4)
    y = cr.zeros(3, 4, dtype=cr.float64)
    top = y[0:2]
    assert not top.requires_grad
    y[1] = v
    assert top.requires_grad and top.grad_fn is not None
    (top * 2).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [2] * 4)


def test_inplace_on_a_view_of_a_leaf_that_requires_grad_is_an_error():
    x = _x(3)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation."):
        x[1:].mul_(2)
    with cr.no_grad():
        x[1:].mul_(2)
    assert x.is_leaf and x._version == 1


def test_saved_view_modified_through_its_base_is_detected():
    x = _x(3)
    y = x * 1
    v = y[1:]
    out = v.sin()                      # saves v
    y.add_(1)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient "
                                           "computation has been modified by an inplace "
                                           "operation"):
        out.sum().backward()


def test_copyslices_is_freed_after_backward():
    x = _x(3)
    y = x * 1
    y[1:].exp_()
    loss = y.sum()
    loss.backward(retain_graph=False)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def test_inplace_on_view_with_inputs_restricted_pass():
    x, b = _x(3), _x(3)
    y = x * 1
    y[1:].mul_(b[1:])
    (gb,) = cr.autograd.grad(y.sum(), b, retain_graph=True)
    np.testing.assert_allclose(gb.numpy(), [0, *x.detach().numpy()[1:]])
    (gx,) = cr.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(gx.numpy(), [1, *b.detach().numpy()[1:]])


def test_double_backward_through_copyslices():
    x = _x(3)
    y = x * 1
    y[1:].exp_()
    (g,) = cr.autograd.grad((y * y).sum(), x, create_graph=True)
    a = x.detach().numpy()
    np.testing.assert_allclose(g.detach().numpy(), [2 * a[0], *(2 * np.exp(2 * a[1:]))])
    (gg,) = cr.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [2, *(4 * np.exp(2 * a[1:]))])


# --- multi-output and overlapping views -----------------------------------------------------------
@pytest.mark.parametrize("name,make", [
    ("Split", lambda y: y.split(2)[1]), ("Unbind", lambda y: y.unbind()[1]),
    ("SplitWithSizes", lambda y: y.split([1, 3])[1]), ("Split", lambda y: y.chunk(2)[1]),
])
def test_outputs_of_multi_view_ops_refuse_recorded_inplace(name, make):
    y = _x(4) * 1
    piece = make(y)
    with pytest.raises(RuntimeError, match=f"Output 1 of {name} is a view and is being modified "
                                           "inplace. This view is the output of a function that "
                                           "returns multiple views."):
        piece.mul_(2)
    assert y._version == 0                     # refused before writing
    with cr.no_grad():
        piece.mul_(2)
    assert y._version == 1


def test_outputs_of_split_of_a_plain_tensor_may_be_written():
    y = _x(4, requires_grad=False)
    y.split(2)[1].zero_()
    np.testing.assert_array_equal(y.numpy()[2:], [0, 0])


def test_writing_into_an_expanded_view_is_an_error():
    y = _x(1, 3, requires_grad=False)
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element of the "
                                           "written-to tensor refers to a single memory "
                                           "location"):
        y.expand(2, 3).add_(1)


def test_gradient_of_expanded_stale_view_sums_overlaps():
    x = _x(1, 3)
    y = x * 1
    e = y.expand(4, 3)
    y.mul_(2)
    e.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[8, 8, 8]])


def test_is_view_like_the_reference():
    y = _x(3, 4) * 1
    views = [y[1:], y.t(), y.view(12), y.reshape(12), y.split(2)[0], y.unbind(0)[0],
             y.expand(2, 3, 4), y[0], y[1:][0]]
    copies = [y[[0]], y.t().reshape(12), y.contiguous(), y.detach(), y[1:].detach(), y * 1]
    assert [v._is_view() for v in views] == [True] * len(views)
    assert [c._is_view() for c in copies] == [False] * len(copies)
    with cr.no_grad():
        assert y[1:]._is_view()
    with cr.inference_mode():                # inference tensors keep no view links
        assert not cr.ones(2)[1:]._is_view()


# --- gradients laid out like the root (Note [gradients laid out like the root]) -------------
def test_inplace_on_a_view_whose_gradient_arrives_transposed():
    # issue 9, wrong today 2: CopySlices copied the transposed gradient in its own
    # layout and NumPy could not re-make view(-1) on it
    x = cr.ones(3, 3, dtype=cr.float64, requires_grad=True)
    y = (x * 1.0).clone()
    y.view(-1)[2:5].mul_(0.5)
    (cr.ones(3, 3, dtype=cr.float64) @ y.t()).sum().backward()
    assert x.grad.sum().item() == 22.5
    np.testing.assert_array_equal(x.grad.numpy(), [[3, 3, 1.5], [1.5, 1.5, 3], [3, 3, 3]])


def _transposed_root_program(M, x, step, inplace=True):
    """Writes through views of ``y``, a root laid out like ``x.t()`` (transposed): the
    views exist only on that layout. ``inplace=False``: the same values out of place."""
    y = x.t() * 1.0
    w = M.linspace(-1.0, 2.0, 12, dtype=M.float64).reshape(4, 3)
    flat = x.reshape(-1) * 1.0                   # y's elements in memory order
    if step == "copy_slices":
        if inplace:
            y.t().view(-1)[1:7].mul_(x.reshape(-1)[:6])
        else:
            y = M.cat([flat[:1], flat[1:7] * x.reshape(-1)[:6], flat[7:]]).reshape(3, 4).t()
        return (y * y * w).sum()
    if step == "stale_view":
        v = y.t().view(-1) if inplace else flat * 2.0
        if inplace:
            y.mul_(2.0)
        return (v.reshape(3, 4) * x * x).sum()
    source = y.t().view(-1) if inplace else flat * 2.0
    e = source[2:6].reshape(2, 2)[:, :1].expand(2, 5)    # overlapping elements
    if inplace:
        y.mul_(2.0)
    return (e ** 3 * M.arange(10, dtype=M.float64).reshape(2, 5)).sum()


@pytest.mark.parametrize("step", ["copy_slices", "stale_view", "expanded_stale_view"])
def test_views_of_a_transposed_root_give_the_gradients_of_the_out_of_place_program(step):
    results = []
    for inplace in (True, False):
        x = _x(3, 4)
        loss = _transposed_root_program(cr, x, step, inplace)
        g, = cr.autograd.grad(loss, x, create_graph=True)
        gg, = cr.autograd.grad((g * g).sum(), x)
        results.append((loss.detach().numpy(), g.detach().numpy(), gg.numpy()))
    assert not (_x(4, 3).t() * 1.0)._data.flags.c_contiguous      # the case under test
    for ours, ref in zip(*results):
        np.testing.assert_allclose(ours, ref, rtol=1e-12)


# --- parity with the reference ---------------------------------------------------------------------
def _program(M, x, b):
    y = x * 1
    keep = y[1:]
    y[0, ::2].mul_(b[:2])
    y.t()[3].copy_(b.exp())
    y[[2, 2], [0, 1]] = b[1:3] * 2
    y.diagonal().sin_()
    return (y * y).sum() + (keep ** 3).sum()


def test_torch_parity_of_a_program_with_many_writes_through_views(torch):
    xs, bs = np.random.default_rng(0).standard_normal((3, 4)), np.linspace(0.1, 0.9, 3)
    results = []
    for M in (cr, torch):
        x = M.tensor(xs, requires_grad=True)
        b = M.tensor(bs, requires_grad=True)
        loss = _program(M, x, b)
        gx, gb = M.autograd.grad(loss, (x, b), create_graph=True)
        ggx, ggb = M.autograd.grad((gx ** 2).sum() + (gb ** 2).sum(), (x, b))
        results.append([loss.detach().numpy(), gx.detach().numpy(), gb.detach().numpy(),
                        ggx.numpy(), ggb.numpy()])
    for ours, ref in zip(*results):
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("step", ["copy_slices", "stale_view", "expanded_stale_view"])
def test_torch_parity_of_views_of_a_transposed_root(torch, step):
    xs = np.arange(12, dtype=np.float64).reshape(3, 4) / 10 + 0.5
    grads = []
    for M in (cr, torch):
        x = M.tensor(xs, requires_grad=True)
        grads.append(M.autograd.grad(_transposed_root_program(M, x, step), x)[0])
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy(), rtol=1e-12)


@pytest.mark.parametrize("name,fn", [
    ("select", lambda x: x[1]), ("slice", lambda x: x[1:, ::2]), ("transpose", lambda x: x.transpose(0, 2)),
    ("permute", lambda x: x.permute(2, 0, 1)), ("unsqueeze", lambda x: x.unsqueeze(1)),
    ("expand", lambda x: x[:, :1].expand(3, 4, 5)), ("diagonal", lambda x: x.diagonal(0, 1, 2)),
    ("view", lambda x: x.view(12, 5)), ("narrow", lambda x: x.narrow(2, 1, 3)),
    ("unflatten", lambda x: x.unflatten(2, (5, 1))), ("split", lambda x: x.split(2, 1)[1]),
    ("unbind", lambda x: x.unbind(2)[3]), ("mT", lambda x: x.mT),
])
def test_torch_parity_of_strides_and_contiguity(torch, name, fn):
    data = np.zeros((3, 4, 5))
    ours, ref = fn(cr.tensor(data)), fn(torch.tensor(data))
    big = [d for d, n in enumerate(ref.shape) if n > 1]        # size-1 dims may differ
    assert [ours.stride()[d] for d in big] == [ref.stride()[d] for d in big]
    assert ours.is_contiguous() == ref.is_contiguous()
    assert ours.storage_offset() == ref.storage_offset()


def test_retain_grad_follows_the_tensor_through_inplace_ops():
    x = _x(3)
    a = x * 1
    a.retain_grad()
    a.mul_(3)
    (a * 2).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2, 2, 2])
    y = x * 1
    v = y[1:]
    v.retain_grad()
    y.mul_(5)
    (v * 2).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [2, 2])
    y = x * 1
    y.retain_grad()
    y[1:].mul_(5)
    (y * 2).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [2, 2, 2])


def test_plain_setitem_of_numbers_bumps_the_version_and_checks_bounds():
    y = _x(3, 4, requires_grad=False)
    y[1] = 0
    y[2:] = 7.5
    assert y._version == 2
    np.testing.assert_array_equal(y.numpy()[1:], [[0] * 4, [7.5] * 4])
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        y[3] = 1.0
    with pytest.raises(ValueError, match="step must be greater than zero"):
        y[::-1] = 1.0
    with cr.inference_mode():
        z = cr.zeros(2)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode is not allowed"):
        z[0] = 1.0


# --- views made in inference mode (Note [how a view was made]) -----------------------------
_INFERENCE_VIEWS = {"slice": lambda b: b[:2], "t": lambda b: b.t(),
                    "unsqueeze": lambda b: b[None], "split": lambda b: b.split(2)[0],
                    "unbind": lambda b: b.unbind(0)[0], "view of a view": lambda b: b[:3][1:]}


@pytest.mark.parametrize("requires_grad", [True, False], ids=["recorded", "plain"])
@pytest.mark.parametrize("name", list(_INFERENCE_VIEWS))
def test_a_view_made_in_inference_mode_of_a_normal_tensor_is_a_normal_view(name, requires_grad):
    x = cr.ones(4, requires_grad=requires_grad)
    b = x * 1
    with cr.inference_mode():
        v = _INFERENCE_VIEWS[name](b)
        assert (v * 2).is_inference()          # what it makes in the mode is
        assert [v.is_inference(), v._is_view(), v._base is b, v.grad_fn, v.is_leaf,
                v.requires_grad] == [False, True, True, None, True, requires_grad]
        v.add_(1)                               # written in the mode: versions shared
    assert b._version == v._version == 1 and b.sum().item() == 4 + v.numel()
    if requires_grad:                           # what flows to it goes nowhere
        (v * 2).sum().backward()
        assert x.grad is None and v.grad is None


_INFERENCE_WRITE = ("A view was created in inference mode and is being modified inplace in "
                    "normal mode. Given that this use case is ambiguous and error-prone, it is "
                    "forbidden. You can clarify your code by moving both the view and the "
                    "inplace either both inside the inference_mode block (if you don't want "
                    "the inplace to be tracked) or both outside (if you want the inplace to "
                    "be tracked).")


def test_writing_an_inference_mode_view_outside_the_mode_is_refused_while_recording():
    x = cr.ones(4, requires_grad=True)
    b, c = x * 1, cr.ones(4)
    with cr.inference_mode():
        xv, plain = x[:3], c[:2]
        parts = b.split(2)
    with cr.no_grad():
        later = xv[:2]                          # the inference mark is kept
    for view in (xv, parts[0], later):
        with pytest.raises(RuntimeError) as info:
            view.mul_(2)
        assert str(info.value) == _INFERENCE_WRITE
    w = xv[:2]                                  # a view of it, made with grad on
    assert type(w.grad_fn).__name__ == "SliceBackward0"
    with pytest.raises(RuntimeError, match="^Output 0 of Slice is a view of a view which was "
                                           "created in inference mode and is being modified "
                                           "inplace in normal mode. Given"):
        w.mul_(2)
    with cr.no_grad():
        xv.mul_(2)                              # not recorded: allowed
    assert x.tolist() == [2.0, 2.0, 2.0, 1.0] and plain.mul_(2).tolist() == [2.0, 2.0]


def test_a_view_made_in_inference_mode_of_a_no_grad_view_gets_the_inference_mark():
    b = cr.ones(4, requires_grad=True) * 1
    with cr.no_grad():
        nv = b[:3]
    with cr.inference_mode():
        iv = nv[:2]
    with pytest.raises(RuntimeError) as info:
        iv.mul_(2)
    assert str(info.value) == _INFERENCE_WRITE


# --- Note [view fast path] ----------------------------------------------------------------
_VIEW_OPS = {
    "view": lambda y: y.view(-1, 2), "reshape": lambda y: y.reshape(2, 6), "t": lambda y: y.t(),
    "transpose": lambda y: y.transpose(0, 1), "permute": lambda y: y.permute(1, 0),
    "unsqueeze": lambda y: y.unsqueeze(1), "squeeze": lambda y: y[:1].squeeze(0),
    "expand": lambda y: y[:1].expand(5, 4), "select": lambda y: y[1],
    "slices": lambda y: y[:, 1:3], "slice": lambda y: y[1:], "none": lambda y: y[None, 1:],
    "alias": lambda y: y[()], "view of a view": lambda y: y.t()[1:].unsqueeze(0),
}


def _view_facts(make, requires_grad, mode):
    """What a view op gives, in grad mode ``mode``: values, links, node, version,
    and the gradient after an in-place write through the view."""
    x = _x(3, 4, requires_grad=requires_grad)
    y = x * 1 if requires_grad else x
    with mode():
        v = make(y)
        facts = [v.tolist(), v._base is y, v._is_view(), type(v.grad_fn).__name__,
                 v.requires_grad, v.is_inference(), v.is_contiguous(), v.stride()]
    if not v.is_inference():
        try:                # refused for a view made under no_grad of a recorded tensor
            v.mul_(2) if v._data.flags.writeable else None
        except RuntimeError as e:
            facts.append(str(e))
        facts += [y._version, v._version, type(y.grad_fn).__name__]
    if requires_grad and mode is _grad_on:
        y.sum().backward()
        facts.append(x.grad.tolist())
    return facts


def _grad_on():
    return cr.enable_grad()


@pytest.mark.parametrize("mode", [_grad_on, cr.no_grad, cr.inference_mode],
                         ids=["grad", "no_grad", "inference"])
@pytest.mark.parametrize("requires_grad", [True, False], ids=["recorded", "plain"])
@pytest.mark.parametrize("name", list(_VIEW_OPS))
def test_view_fast_path_gives_what_apply_op_gives(name, requires_grad, mode):
    from chainrule._ops import _registry
    fast = _view_facts(_VIEW_OPS[name], requires_grad, mode)
    passing = lambda run, op, inputs, attrs, base: run(op, inputs, attrs, base)  # noqa: E731
    with _registry.add_dispatcher(passing):              # make_view's general path
        general = _view_facts(_VIEW_OPS[name], requires_grad, mode)
    assert fast == general


def test_view_shape_arguments_keep_their_errors():
    y = cr.ones(4, 4)
    assert y.view(True, 16).shape == (1, 16) and y.view([2, -1]).shape == (2, 8)
    for shape, message in [((-1, -1), "only one dimension can be inferred"),
                           ((-2, 8), "invalid shape dimension -2"),
                           ((3, -1), r"shape '\[3, -1\]' is invalid for input of size 16"),
                           ((0, -1), r"shape '\[0, -1\]' is invalid for input of size 16"),
                           ((5, 4), r"shape '\[5, 4\]' is invalid for input of size 16")]:
        with pytest.raises(RuntimeError, match=message):
            y.view(*shape)
    assert cr.ones(0, 3).view(-1, 3).shape == (0, 3)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1"):
        y[:, 4]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        y[0, :, 1]


def test_views_of_a_detached_view_have_it_as_their_base():
    # Note [views of a detached tensor]: an in-place write into such a view records a
    # CopySlices on the detached tensor, never on the tensor it was detached from
    memory = cr.zeros(3, 4, dtype=cr.float64)
    detached = memory[:, 1:3].detach()
    view = detached.t()
    assert view._base is detached and view._is_view() and not detached._is_view()
    assert detached._base is None
    assert (detached.storage_offset(), view.storage_offset(), view[1].storage_offset()) == (1, 1, 2)
    y = cr.ones(2, 3, dtype=cr.float64, requires_grad=True)
    view.copy_(y * 2)
    assert type(detached.grad_fn).__name__ == "CopySlices" and not memory.requires_grad
    (detached * cr.arange(6.0, dtype=cr.float64).reshape(3, 2)).sum().backward()
    assert y.grad.tolist() == [[0.0, 4.0, 8.0], [2.0, 6.0, 10.0]]
    assert memory.tolist() == [[0.0, 2.0, 2.0, 0.0]] * 3


# --- how a view was made (Note [how a view was made]) ----------------------------------------
NO_GRAD_ADVICE = ("Given that this use case is ambiguous and error-prone, it is forbidden. You "
                  "can clarify your code by moving both the view and the inplace either both "
                  "inside the no_grad block (if you don't want the inplace to be tracked) or "
                  "both outside (if you want the inplace to be tracked).")
MULTI_ADVICE = ("This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should "
                "replace the inplace operation by an out-of-place one.")
CUSTOM_ADVICE = ("This view was created inside a custom Function (or because an input was "
                 "returned as-is) and the autograd logic to handle view+inplace would override "
                 "the custom backward associated with the custom Function, leading to incorrect "
                 "gradients. This behavior is forbidden. You can fix this by cloning the output "
                 "of the custom Function.")


def _refused(message):
    import re
    return pytest.raises(RuntimeError, match="^" + re.escape(message) + "$")


def test_a_view_made_under_no_grad_requires_grad_but_gradients_reach_nothing():
    x = _x(4)
    with cr.no_grad():
        v = x[:2]
    assert (v.requires_grad, v.is_leaf, v._base is x, v.grad_fn) == (True, True, True, None)
    y = v * 2
    assert y.requires_grad and y.grad_fn.next_functions == ((None, 0), (None, 0))
    y.sum().backward()
    v.sum().backward()
    assert x.grad is None and v.grad is None
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 0 appears to "
                                           "not have been used in the graph"):
        cr.autograd.grad((v * 3).sum(), v)
    assert cr.autograd.grad((v * 3).sum(), v, allow_unused=True) == (None,)
    (v * 3).sum().backward(inputs=[v])
    assert v.grad is None
    w = v[1:]                               # a view of it made in grad mode
    assert w.requires_grad and not w.is_leaf and w.grad_fn.next_functions == ((None, 0),)


def test_a_view_made_under_no_grad_with_other_tensors_that_require_grad():
    x, b = _x(4), _x(2)
    y = x * 1
    with cr.no_grad():
        v = y[1:3]                         # of a non-leaf: the same
    assert v.requires_grad and v.is_leaf
    (v * b).sum().backward()               # b's gradient needs v's values: saved
    np.testing.assert_allclose(b.grad.numpy(), x.detach().numpy()[1:3])
    assert x.grad is None
    v.requires_grad_(False)                # it requires grad as its base does
    assert v.requires_grad


def test_inplace_into_a_view_made_under_no_grad_is_refused_while_grad_mode_records():
    x = _x(4)
    with cr.no_grad():
        v = x[:2]
    for write in (lambda: v.mul_(2), lambda: v.add_(1), lambda: v.copy_(cr.ones(2)),
                  lambda: v.zero_()):
        with _refused("A view was created in no_grad mode and is being modified inplace with "
                      "grad mode enabled. " + NO_GRAD_ADVICE):
            write()
    with _refused("Output 0 of Select is a view of a view which was created in no_grad mode "
                  "and is being modified inplace with grad mode enabled. " + NO_GRAD_ADVICE):
        v[0] = 5.0
    with _refused("Output 0 of Slice is a view of a view which was created in no_grad mode "
                  "and is being modified inplace with grad mode enabled. " + NO_GRAD_ADVICE):
        v[:1].mul_(2)
    assert x._version == 0                 # refused before writing
    with cr.no_grad():
        v.mul_(2)                          # both inside the no_grad block: allowed
    assert x._version == 1 and x.tolist()[:2] == [1.0, 1.2]


def test_a_view_made_under_no_grad_of_a_plain_tensor():
    y, b = _x(4, requires_grad=False), _x(2)
    with cr.no_grad():
        v = y[:2]
    assert not v.requires_grad
    v.mul_(2)                              # nothing records
    with _refused("A view was created in no_grad mode and is being modified inplace with "
                  "grad mode enabled. " + NO_GRAD_ADVICE):
        v.mul_(b)
    v.requires_grad_()                     # the user's choice: a leaf with an accumulator
    (v * 2).sum().backward()
    assert v.grad.tolist() == [2.0, 2.0] and y.grad is None


def test_views_of_multi_view_outputs_keep_the_mark():
    y = _x(4, 3) * 1
    with _refused("Output 0 of View is a view and is being modified inplace. " + MULTI_ADVICE):
        y.unbind(0)[0].view(1, 3).mul_(2)
    with cr.no_grad():
        row = y.unbind(0)[0]
    with _refused("A view was created in no_grad mode and is being modified inplace with "
                  "grad mode enabled. " + NO_GRAD_ADVICE):
        row.mul_(2)
    plain = _x(4, requires_grad=False).unbind(0)[0]
    with _refused("A view was created in no_grad mode and is being modified inplace with "
                  "grad mode enabled. " + MULTI_ADVICE):
        plain.mul_(_x(1)[0])
    plain.mul_(2)                          # nothing records


class _ViewOfInput(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x[:2]

    @staticmethod
    def backward(ctx, g):
        return cr.cat([g, g.new_zeros(2)])


class _Identity(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g


@pytest.mark.parametrize("fn", [_ViewOfInput, _Identity])
def test_views_a_custom_function_returns_refuse_recorded_inplace(fn):
    y = _x(4) * 1
    out = fn.apply(y)
    assert out._base is y and out._is_view() and out.grad_fn.name() == fn.__name__ + "Backward"
    name = fn.__name__
    with _refused(f"Output 0 of {name} is a view and is being modified inplace. " + CUSTOM_ADVICE):
        out.mul_(2)
    with _refused("Output 0 of Slice is a view and is being modified inplace. " + CUSTOM_ADVICE):
        out[:1].mul_(2)
    with cr.no_grad():
        out.mul_(2)
    out.sum().backward()                   # the Function's backward, as recorded
    assert y.grad_fn.name() == "MulBackward0"


def test_detach_in_place_refuses_every_view():
    for y in (_x(3), _x(3, requires_grad=False)):
        with pytest.raises(RuntimeError, match=r"^Can't detach views in-place. Use detach\(\) "
                                               "instead. If you are using DistributedDataParallel"):
            y[:2].detach_()


def _creation_program(M):
    """Views made under no_grad, of multi-view ops and by a custom Function, each
    written in place: what the reference allows, refuses and computes."""
    outcomes = []

    def attempt(step):
        try:
            outcomes.append(step())
        except RuntimeError as e:
            outcomes.append(str(e))

    x = M.tensor([0.5, 1.5, -2.0, 3.0], dtype=M.float64, requires_grad=True)
    b = M.tensor([2.0, -1.0], dtype=M.float64, requires_grad=True)
    with M.no_grad():
        v = x[1:3]
    attempt(lambda: [v.requires_grad, v.is_leaf, v.grad_fn is None, v._base is x])
    attempt(lambda: v.mul_(b))
    attempt(lambda: v.t().add_(1))
    attempt(lambda: v.unsqueeze(0).select(0, 0).sub_(1))
    (v * b * b).sum().backward()
    attempt(lambda: [x.grad, b.grad.tolist()])
    y = x * 2
    pieces = y.split([1, 3])
    attempt(lambda: pieces[1][1:].div_(2))
    with M.no_grad():
        columns = y.view(2, 2).unbind(1)
    attempt(lambda: columns[0].mul_(b))
    attempt(lambda: M.tensor([1.0, 2.0]).chunk(2)[1].mul_(b[0]))
    return outcomes


def test_torch_parity_of_views_by_how_they_were_made(torch):
    assert _creation_program(cr) == _creation_program(torch)
