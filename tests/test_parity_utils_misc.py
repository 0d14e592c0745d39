"""Parity tier (skips without torch) for ``utils.swap_tensors``, ``utils.hooks``,
``autograd.graph.increment_version`` and ``nn.utils.convert_conv{2,3}d_weight_memory_format``:
the same calls on both libraries give the same values, flags and errors."""
import gc
import warnings
import weakref

import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402


def _outcome(call, lib):
    try:
        return ("ok", call(lib))
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return (type(e).__name__, str(e).replace("chainrule", "torch"))


def _same(call):
    assert _outcome(call, cr) == _outcome(call, torch)


def test_swap_tensors_exchanges_everything():
    def call(lib):
        a = lib.nn.Parameter(lib.zeros(2))
        b = lib.nn.Parameter(lib.arange(3.0), requires_grad=False)
        a.note = "on a"
        (a * 2).sum().backward()
        lib.utils.swap_tensors(a, b)
        return [a.tolist(), a.requires_grad, a.grad, b.tolist(), b.grad.tolist(), b.note,
                hasattr(a, "note"), type(a).__name__]
    _same(call)


def test_swap_plain_tensors_keeps_graphs_usable_after():
    def call(lib):
        a, b = lib.ones(2, requires_grad=True), lib.full((2,), 3.0)
        lib.utils.swap_tensors(a, b)
        (b * a).sum().backward()
        return [b.grad.tolist(), a.requires_grad, a._version, b.is_leaf]
    _same(call)


def test_swap_poisons_a_recorded_accumulator():
    def call(lib):
        a, b = lib.ones(2, requires_grad=True), lib.zeros(2, requires_grad=True)
        loss = (a * 3).sum()
        lib.utils.swap_tensors(a, b)
        loss.backward()
    _same(call)


def test_swap_refuses_weakly_referenced_tensors():
    def call(lib):
        a, b = lib.ones(1), lib.ones(1)
        ref = weakref.ref(b)
        try:
            lib.utils.swap_tensors(a, b)
        finally:
            del ref
            gc.collect()
    _same(call)


def test_increment_version():
    def call(lib):
        x = lib.zeros(2)
        lib.autograd.graph.increment_version(x)
        lib.autograd.graph.increment_version([x, x[:1]])
        with lib.inference_mode():
            y = lib.zeros(1)
        lib.autograd.graph.increment_version(y)
        w = lib.ones(2, requires_grad=True)
        h = w * 1
        out = h * h
        lib.autograd.graph.increment_version(h)
        return [x._version, out.sum().backward()]
    _same(call)


@pytest.mark.parametrize("hook_marked", [True, False])
def test_warn_if_has_hooks(hook_marked):
    def call(lib):
        x = lib.ones(1, requires_grad=True)
        y = x * 2

        def hook(grad):
            return grad
        if hook_marked:
            lib.utils.hooks.unserializable_hook(hook)
        x.register_hook(hook)
        y.register_hook(hook)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.utils.hooks.warn_if_has_hooks(x)
            lib.utils.hooks.warn_if_has_hooks(y)
        return [str(w.message).split(" on tensor")[1] for w in caught]
    _same(call)


def test_removable_handle_is_the_module_hook_handle():
    def call(lib):
        m = lib.nn.Identity()
        handle = m.register_forward_hook(lambda mod, args, out: out + 1)
        first = m(lib.zeros(1)).item()
        handle.remove()
        return [isinstance(handle, lib.utils.hooks.RemovableHandle), first,
                m(lib.zeros(1)).item()]
    _same(call)


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d", "contiguous_format",
                                 "preserve_format"])
@pytest.mark.parametrize("dims", [2, 3])
def test_convert_conv_weight_memory_format(fmt, dims):
    def call(lib):
        conv = getattr(lib.nn, f"Conv{dims}d")(2, 3, 2)
        model = lib.nn.Sequential(lib.nn.Sequential(conv), lib.nn.Conv1d(1, 1, 1))
        before = conv.weight.detach().clone()
        convert = getattr(lib.nn.utils, f"convert_conv{dims}d_weight_memory_format")
        out = convert(model, getattr(lib, fmt))
        return [out is model, bool(lib.equal(conv.weight, before)),
                type(conv.weight).__name__, conv.weight.requires_grad]
    _same(call)


def test_convert_conv_weight_memory_format_type_error():
    _same(lambda lib: lib.nn.utils.convert_conv2d_weight_memory_format(
        lib.nn.Conv2d(1, 1, 1), "channels_last"))


def _backward_hook_story(lib, pre_hooks, hooks, args_of):
    """Drive utils.hooks.BackwardHook as nn.Module does; what the hooks saw and the
    gradients that arrived."""
    seen, a, b = [], lib.ones(2, requires_grad=True), lib.ones(3, requires_grad=True)
    hook = lib.utils.hooks.BackwardHook("m", [lambda *h: seen.append(f(*h)) or r(*h)
                                              for f, r in hooks],
                                        [lambda *h: seen.append(f(*h)) or r(*h)
                                         for f, r in pre_hooks])
    args = hook.setup_input_hook(args_of(a, b))
    out = hook.setup_output_hook((args[0] * 3 + a, args[-1], "x"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (out[0].sum() * 2 + (out[1].sum() if out[1] is not None else 0)).backward()
    return (seen, a.grad.tolist() if a.grad is not None else None,
            b.grad.tolist() if b.grad is not None else None,
            hook.input_tensors_index, hook.output_tensors_index, hook.n_inputs)


def _shapes(*gs):
    return [[None if g is None else list(g.shape) for g in group] if isinstance(group, tuple)
            else group for group in gs]


@pytest.mark.parametrize("story", ["plain", "replace", "no input grad"])
def test_backward_hook_class(story):
    keep = lambda *h: None                                       # noqa: E731
    hooks = {"plain": ([(_shapes, keep)], [(_shapes, keep)]),
             "replace": ([(_shapes, lambda m, go: (go[0] * 10, go[1], None))],
                         [(_shapes, lambda m, gi, go: (gi[0] + 1,) + gi[1:])]),
             "no input grad": ([], [(_shapes, keep)])}[story]
    args_of = (lambda a, b: (a.detach(), 1.0, b.detach())) if story == "no input grad" \
        else (lambda a, b: (a, "s", b))
    ours = _backward_hook_story(cr, *hooks, args_of)
    theirs = _backward_hook_story(torch, *hooks, args_of)
    assert ours == theirs
