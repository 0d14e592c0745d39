"""Activation checkpointing: run a function without keeping what its backward needs,
and run it again in backward to get it back (memory for compute).

Note [checkpoint recomputation]
    Both variants save only the function's inputs and recompute in backward with the
    random-number state of the first run (``preserve_rng_state``), so dropout masks
    and other random draws repeat exactly.
    - Reentrant (``use_reentrant=True``): one custom Function whose forward runs the
      function under no_grad and whose backward runs it again with grad and calls
      ``backward`` on the recomputed outputs, a backward inside a backward. It
      therefore cannot serve ``autograd.grad`` or ``backward(inputs=...)`` (the
      inner backward would accumulate into ``.grad``), and raises there as torch does.
    - Non-reentrant (``use_reentrant=False``): the call's tensor inputs are saved by
      a no-op Function (_SaveInputs) under the hooks around the call, so those hooks
      pack them, an in-place change of one is caught in backward, and the
      recomputation reads them back from there, as in the reference. Then the
      function runs with grad under saved-tensor hooks that pack every saved tensor
      as a bare index; the first
      unpack in backward recomputes the function, with hooks that collect the new
      saved tensors in the same order, and each unpack hands over its counterpart
      (dropped from the frame, so it lives only as long as its node needs it; a
      second backward with retain_graph recomputes again). The graph is the
      original one, so ``grad`` and ``inputs=`` work.
"""
import contextlib
import warnings

import numpy as np

from .. import _random
from .._grad_mode import enable_grad, is_grad_enabled, no_grad
from .._tensor import Tensor
from ..autograd.engine import needed_edges
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


class CheckpointError(RuntimeError):
    """The recomputation in backward did not match the original run."""


def _rng_state():
    return _random.get_rng_state()


@contextlib.contextmanager
def _replayed_rng(state, enabled):
    """Run the block with the generator at ``state``, then put it back as it was."""
    if not enabled:
        yield
        return
    current = _rng_state()
    _random.set_rng_state(state)
    try:
        yield
    finally:
        _random.set_rng_state(current)


def _is_checkpoint_valid(node):
    """Whether the running backward pass computes every gradient (not
    ``autograd.grad`` or ``backward(inputs=...)``), which reentrant checkpoint needs."""
    return needed_edges(node) is None


_REENTRANT_GRAD_MESSAGE = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
    "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
    "set use_reentrant=False, or call .backward() without passing the `inputs` argument.")


class CheckpointFunction(Function):
    """The reentrant checkpoint (Note [checkpoint recomputation])."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function, ctx.preserve_rng_state = run_function, preserve_rng_state
        ctx.rng_state = _rng_state() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not _is_checkpoint_valid(ctx):
            raise RuntimeError(_REENTRANT_GRAD_MESSAGE)
        inputs = list(ctx.inputs)
        for i, saved in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = saved.detach().requires_grad_(saved.requires_grad)
        with _replayed_rng(ctx.rng_state, ctx.preserve_rng_state), enable_grad():
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        from ..autograd import backward
        backward([o for o, _ in pairs], [g for _, g in pairs])
        input_grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in inputs)
        return (None, None) + input_grads


class _SaveInputs(Function):
    """Saves a non-reentrant checkpoint's tensor inputs (Note [checkpoint
    recomputation]); its output is a placeholder no gradient reaches."""

    @staticmethod
    def forward(ctx, placeholder, *tensors):
        ctx.save_for_backward(*tensors)
        return placeholder.detach()

    @staticmethod
    def backward(ctx, *grads):
        raise AssertionError("Did not expect to backward on this graph")


class _Frame:
    """One non-reentrant checkpointed call: what its recomputation needs, and the
    tensors the recomputation saved (Note [checkpoint recomputation])."""

    def __init__(self, function, args, kwargs, preserve_rng_state):
        self.function, self.kwargs = function, kwargs
        self.args = [None if isinstance(a, Tensor) else a for a in args]
        placeholder = Tensor._wrap(np.empty(0, np.float32)).requires_grad_()
        self.input_saver = _SaveInputs.apply(
            placeholder, *[a for a in args if isinstance(a, Tensor)]).grad_fn
        self.preserve_rng_state = preserve_rng_state
        self.rng_state = _rng_state() if preserve_rng_state else None
        self.count = 0
        self.recomputed = {}

    def pack(self, tensor):
        index = self.count
        self.count += 1
        return index

    def unpack(self, index):
        if index not in self.recomputed:
            self._recompute()        # first unpack, or again after one was consumed
        if index not in self.recomputed:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{self.count}\nNumber of tensors saved during recomputation: "
                f"{len(self.recomputed)}")
        # handed over, not kept: each recomputed tensor lives only until its node ran
        return self.recomputed.pop(index)

    def _recompute(self):
        saved = []

        def keep(tensor):
            saved.append(tensor.detach())
            return len(saved) - 1

        inputs = iter(self.input_saver.saved_tensors)
        args = [next(inputs) if a is None else a for a in self.args]
        with _replayed_rng(self.rng_state, self.preserve_rng_state), enable_grad(), \
                saved_tensors_hooks(keep, lambda i: saved[i]):
            self.function(*args, **self.kwargs)
        self.recomputed = dict(enumerate(saved))
        saved.clear()     # the recomputation's own graph may outlive this call (until gc)


def _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs):
    if not is_grad_enabled():        # nothing is saved: nothing to recompute
        return function(*args, **kwargs)
    frame = _Frame(function, args, kwargs, preserve_rng_state)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, context_fn=None,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """``function(*args, **kwargs)`` without keeping its intermediate results for
    backward: backward recomputes them (Note [checkpoint recomputation]).
    ``preserve_rng_state`` (default True) replays random draws; pass ``use_reentrant``
    explicitly (torch warns without it and defaults to True).

    >>> import chainrule as cr
    >>> from chainrule.utils.checkpoint import checkpoint
    >>> x = cr.tensor([0.5, 1.0], requires_grad=True)
    >>> y = checkpoint(lambda t: (t.sin() * t).exp(), x, use_reentrant=False)
    >>> y.sum().backward()
    >>> [round(v, 4) for v in x.grad.tolist()]
    [1.1669, 3.2054]
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not use_reentrant:
        return _checkpoint_without_reentrant(function, preserve, args, kwargs)
    if is_grad_enabled() and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)
    return CheckpointFunction.apply(function, preserve, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or list of modules) in ``segments`` chunks, each chunk but
    the last checkpointed.

    >>> import chainrule as cr
    >>> from chainrule.utils.checkpoint import checkpoint_sequential
    >>> net = cr.nn.Sequential(*[cr.nn.Linear(4, 4) for _ in range(4)])
    >>> checkpoint_sequential(net, 2, cr.randn(3, 4, requires_grad=True), use_reentrant=False).shape
    chainrule.Size([3, 4])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.5 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential
    functions = list(functions.children()) if isinstance(functions, Sequential) else list(functions)
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(_run_segment(functions, start, end), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return _run_segment(functions, end + 1, len(functions) - 1)(input)


def _run_segment(functions, start, end):
    def forward(input):
        for j in range(start, end + 1):
            input = functions[j](input)
        return input
    return forward
