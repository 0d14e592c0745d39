"""Autograd's stream semantics on the device (Note [backward streams] in
chainrule_cuda/_autograd.py), asserted on the host build's stream log (Note [stream
log]): the host build runs work when it is queued, so the log of which stream each
kernel, event record and wait went to is what shows the semantics. On a GPU, the
values test at the end is what can catch a missing wait."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import engine as engine_slot
from chainrule_cuda import _autograd

from runtime_support import (KERNEL, MiB, StreamLog, fake_device, hold,  # noqa: F401
                             host_build_only, needs_device)

pytestmark = needs_device


def leaf(values):
    return cr.tensor(values, device="cuda", requires_grad=True)


def handle(stream):
    return stream.cuda_stream


def waits_for(log, consumer, producer):
    """The indices of the log's waits of ``consumer`` on events of ``producer``."""
    return [i for i, c, p in log.waits() if c == handle(consumer) and p == handle(producer)]


def kernels_on(log, stream=None):
    """The indices of the kernel launches in the log (on ``stream`` when given)."""
    return [i for i, (k, s, _) in enumerate(log.entries)
            if k == KERNEL and (stream is None or s == handle(stream))]


def first_kernel_after(log, index, stream):
    return next(i for i in kernels_on(log, stream) if i > index)


@host_build_only
def test_backward_runs_on_the_forward_stream():
    s = cr.cuda.Stream()
    x = leaf([1.0, 2.0, 3.0])
    with cr.cuda.stream(s):
        y = (x * x).exp().sum()
        assert y.grad_fn.__dict__["_cuda_stream"] == s
        with StreamLog() as log:
            y.backward()
    # every kernel of the pass (the root gradient's fill included) ran on s
    assert set(log.streams(KERNEL)) == {handle(s)}
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * x.detach().cpu().numpy() *
                               np.exp(x.detach().cpu().numpy() ** 2), rtol=1e-6)


def test_nodes_made_outside_a_stream_carry_none():
    x = leaf([1.0, 2.0])
    y = x * 2
    assert "_cuda_stream" not in y.grad_fn.__dict__
    z = cr.ones(2, requires_grad=True) * 2          # a CPU op: never anything
    with cr.cuda.stream(cr.cuda.Stream()):
        w = cr.ones(2, requires_grad=True) * 2
    assert "_cuda_stream" not in z.grad_fn.__dict__ and "_cuda_stream" not in w.grad_fn.__dict__


@host_build_only
def test_gradient_crossing_streams_waits_for_its_producer():
    s1, s2 = cr.cuda.Stream(), cr.cuda.Stream()
    x = leaf([1.0, 2.0])
    with cr.cuda.stream(s1):
        a = x.exp()                  # ExpBackward0 on s1
    with cr.cuda.stream(s2):
        b = a * 3.0                  # MulBackward0 on s2
    loss = b.sum()                   # SumBackward0 on the default stream
    with StreamLog() as log:
        loss.backward()
    default = cr.cuda.default_stream()
    kernels = [s for k, s, _ in log.entries if k == KERNEL]
    assert handle(s2) in kernels and handle(s1) in kernels
    # s2 waits for the default stream's SumBackward0 before its first kernel, s1 for
    # s2's MulBackward0; .grad is written on the default stream after it waited for s1
    w2 = waits_for(log, s2, default)
    w1 = waits_for(log, s1, s2)
    w0 = waits_for(log, default, s1)
    assert w2 and w1 and w0
    assert w2[0] < first_kernel_after(log, -1, s2)
    assert w1[0] < first_kernel_after(log, -1, s1)
    assert w0[0] > kernels_on(log, s1)[-1]
    np.testing.assert_allclose(x.grad.cpu().numpy(), 3 * np.exp([1.0, 2.0]), rtol=1e-6)


@host_build_only
def test_grad_is_synchronized_with_the_callers_stream():
    s, k = cr.cuda.Stream(), cr.cuda.Stream()
    x = leaf([1.0, 2.0])
    with cr.cuda.stream(s):
        y = (x * x).sum()
    with cr.cuda.stream(k):
        y.backward(retain_graph=True)
        with StreamLog() as log:
            y.backward()                 # accumulates: .grad + the new gradient
        # after backward(), K's last wait is on s, recorded after s's last kernel
        last_s_kernel = kernels_on(log, s)[-1]
        waits = waits_for(log, k, s)
        assert waits and waits[-1] > last_s_kernel
        # the root gradient was made on K: s waited for K before its first kernel
        assert waits_for(log, s, k)[0] < first_kernel_after(log, -1, s)
        # the sum into .grad ran on K, after K waited for the gradient's stream
        last_kernel = kernels_on(log)[-1]
        assert log.entries[last_kernel][1] == handle(k) and waits[0] < last_kernel
        assert cr.cuda.current_stream() == k
        assert x.grad.tolist() == [4.0, 8.0]


@host_build_only
def test_grad_results_are_synchronized_with_the_callers_stream():
    s = cr.cuda.Stream()
    x = leaf([1.0, 2.0])
    with cr.cuda.stream(s):
        y = (x * 3.0).sum()
    with StreamLog() as log:
        (g,) = cr.autograd.grad(y, x)
    default = cr.cuda.default_stream()
    assert waits_for(log, default, s)[-1] > kernels_on(log, s)[-1]
    assert g.tolist() == [3.0, 3.0]


@host_build_only
def test_backward_inside_a_stream_runs_default_stream_nodes_on_the_default_stream():
    x = leaf([1.0, 2.0])
    y = (x.exp() * 2.0).sum()              # forward on the default stream
    k = cr.cuda.Stream()
    with cr.cuda.stream(k):
        with StreamLog() as log:
            y.backward()
    default = cr.cuda.default_stream()
    kernels = log.streams(KERNEL)
    assert kernels[0] == handle(k)                 # the root gradient, on the caller's K
    assert handle(default) in kernels[1:]          # the nodes: where their forward ran
    assert waits_for(log, default, k)              # which waited for the root gradient
    assert waits_for(log, k, default)              # and K for them at the end


@host_build_only
def test_summed_gradients_wait_for_both_producers():
    s1, s2 = cr.cuda.Stream(), cr.cuda.Stream()
    x = leaf([1.0, 2.0])
    with cr.cuda.stream(s1):
        a = x * 2.0
    with cr.cuda.stream(s2):
        b = x * 3.0
    with StreamLog() as log:
        (a + b).sum().backward()
    default = cr.cuda.default_stream()
    # the second producer waits for the first before summing their gradients, and the
    # accumulation into .grad (on the default stream) waits for both
    assert waits_for(log, s1, s2) or waits_for(log, s2, s1)
    assert waits_for(log, default, s1) and waits_for(log, default, s2)
    assert x.grad.tolist() == [5.0, 5.0]


@host_build_only
def test_create_graph_nodes_run_on_their_streams_again():
    s = cr.cuda.Stream()
    x = leaf([1.0, 2.0])
    with cr.cuda.stream(s):
        y = (x * x * x).sum()
    (g,) = cr.autograd.grad(y, x, create_graph=True)
    assert g.grad_fn.__dict__.get("_cuda_stream") == s
    with StreamLog() as log:
        g.sum().backward()
    kernels = log.streams(KERNEL)
    assert handle(s) in kernels
    assert x.grad.tolist() == [6.0, 12.0]


class Square(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


@host_build_only
def test_custom_function_backward_runs_on_its_forward_stream():
    s = cr.cuda.Stream()
    x = leaf([1.0, 2.0])
    with cr.cuda.stream(s):
        y = Square.apply(x)
    assert y.grad_fn.__dict__.get("_cuda_stream") == s
    loss = y.sum()
    with StreamLog() as log:
        loss.backward()
    assert len(kernels_on(log, s)) >= 2              # 2 * x * grad, on s
    assert x.grad.tolist() == [2.0, 4.0]


@host_build_only
@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_recomputes_and_differentiates_on_the_forward_stream(use_reentrant):
    from chainrule.utils.checkpoint import checkpoint
    s = cr.cuda.Stream()
    x = leaf([1.0, 2.0])
    with cr.cuda.stream(s):
        y = checkpoint(lambda t: (t * t).exp(), x, use_reentrant=use_reentrant).sum()
    with StreamLog() as log:
        y.backward()
    kernels = log.streams(KERNEL)
    assert kernels[0] == 0 and set(kernels[1:-1]) == {handle(s)}   # fill, ..., .grad
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * np.array([1.0, 2.0]) *
                               np.exp(np.array([1.0, 4.0])), rtol=1e-6)


@host_build_only
def test_record_stream_delays_reuse(fake_device):
    fake_device(64 * MiB)             # a fresh allocator: no other free blocks
    s = cr.cuda.Stream()
    x = cr.empty(1000, device="cuda")
    ptr = x.data_ptr()
    x.record_stream(s)
    hold(s)                           # s's work "still runs"
    try:
        del x
        y = cr.empty(1000, device="cuda")
        assert y.data_ptr() != ptr    # not reused while s may still read it
    finally:
        hold(s, False)
    del y
    z = cr.empty(1000, device="cuda")
    w = cr.empty(1000, device="cuda")
    assert ptr in (z.data_ptr(), w.data_ptr())   # once s is done, it is reused


def test_record_stream_takes_a_stream():
    with pytest.raises(TypeError, match="argument 'stream' .* must be Stream"):
        cr.ones(2, device="cuda").record_stream(3)


@host_build_only
def test_backward_records_the_stream_of_saved_arrays(fake_device):
    fake_device(64 * MiB)
    s = cr.cuda.Stream()
    x = cr.empty(1000, device="cuda").fill_(1.0)   # allocated on the default stream
    ptr = x.data_ptr()
    w = leaf(np.ones(1000, np.float32))
    with cr.cuda.stream(s):
        y = (x * w).sum()               # MulBackward0 saves x; runs on s
    hold(s)
    try:
        y.backward()
        del x, y                        # the graph (and its saved x) is gone
        others = [cr.empty(1000, device="cuda") for _ in range(2)]
        assert ptr not in [o.data_ptr() for o in others]
    finally:
        hold(s, False)


def test_cpu_passes_go_straight_through():
    with cr.cuda.stream(cr.cuda.Stream()):       # the wrapped engine is in place
        pass
    assert isinstance(engine_slot.get_engine(), _autograd.StreamEngine)
    assert not _autograd._NON_DEFAULT[0]
    x = cr.ones(2, requires_grad=True)
    y = (x * 2).sum()
    _autograd._STREAM_NODES.clear()
    y.backward()
    assert engine_slot._node_observer is None and x.grad.tolist() == [2.0, 2.0]


def test_gradients_over_several_streams_match_the_cpu():
    """On a GPU the streams really run concurrently: a missing wait shows as wrong
    values here (the host build runs work in order and always gets them right)."""
    rng = np.random.default_rng(0)
    w1, w2, inp = (rng.standard_normal(shape) for shape in [(64, 64), (64, 64), (32, 64)])

    def run(device, streams):
        a, b, x = (cr.tensor(v, device=device, requires_grad=True) for v in (w1, w2, inp))
        with cr.cuda.stream(streams[0]):
            h1 = (x @ a).tanh()
        with cr.cuda.stream(streams[1]):
            h2 = (x @ b).sigmoid()
        loss = (h1 * h2).sum() + (h1 ** 2).mean()
        loss.backward()
        return [t.grad.cpu().numpy() for t in (a, b, x)]

    expected = run("cpu", [None, None])
    got = run("cuda", [cr.cuda.Stream(), cr.cuda.Stream()])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
