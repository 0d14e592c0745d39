"""Accumulation into ``.grad``, following the reference's default gradient layouts.

- First gradient: a new array with the leaf's strides (``empty_like`` keeps them) when
  create_graph is off; when it is on, a copy made by ``copy_`` into an empty tensor
  with the leaf's strides, so ``.grad`` is its own tensor whose graph (a
  CopyBackwards node) leads back to the incoming gradient's, as the reference does.
  Note [stealing gradients]: when the incoming array is already laid out like the
  leaf and nothing else refers to it (a fresh result of a formula), it becomes
  ``.grad`` itself, saving an allocation and a copy per leaf per step. "Nothing else"
  is read off the reference count: the engine's buffer slot, this module's two
  frames and getrefcount's own argument (STEAL_REFCOUNT); any other holder (a tensor,
  a second edge, the user's gradient) makes it copy instead.
- Later gradients: added in place when create_graph is off (``.grad`` keeps its
  identity and any graph an earlier create_graph pass left on it, its version is
  bumped), out of place when it is on.
"""
import sys
import threading

import numpy as np
from .._tensor import Tensor

# Threads sharing a leaf accumulate one at a time (NumPy releases the GIL inside
# large in-place additions, so ``+=`` alone could lose updates).
_LOCK = threading.Lock()
STEAL_REFCOUNT = 4
STOLEN = [0]          # how many gradients were taken over (observed by tests)


def accumulate_into_grad(variable, grad, create_graph):
    if grad is None:
        return
    with _LOCK:
        _accumulate(variable, grad, create_graph)
    run_post_accumulate_hooks(variable)


def _accumulate(variable, grad, create_graph):
    old = variable._grad
    if create_graph:
        g = grad if isinstance(grad, Tensor) else Tensor._wrap(grad)
        variable._grad = _copy_in_layout(g, variable) if old is None else old + g
    elif old is None:
        if type(grad) is np.ndarray and sys.getrefcount(grad) <= STEAL_REFCOUNT and \
                _same_layout(grad, variable._data):
            STOLEN[0] += 1
            variable._grad = Tensor._wrap(grad)
            return
        arr = grad._data if isinstance(grad, Tensor) else grad
        new = np.empty_like(variable._data)
        np.copyto(new, arr, casting="unsafe")
        variable._grad = Tensor._wrap(new)
    else:
        arr = grad._data if isinstance(grad, Tensor) else grad
        old._data += arr
        old._bump_version()


def _copy_in_layout(grad, variable):
    """``grad`` copied (recorded, grad mode is on) into a new tensor laid out like
    ``variable``; a contiguous clone when ``variable`` has overlapping elements."""
    like = variable._data
    if any(s == 0 and n > 1 for s, n in zip(like.strides, like.shape)):
        return grad.clone()
    return variable.new_empty_strided(like.shape, variable.stride()).copy_(grad)


def _same_layout(arr, like):
    return (arr.flags.owndata and arr.flags.writeable and arr.dtype == like.dtype
            and arr.shape == like.shape and arr.strides == like.strides)


def run_post_accumulate_hooks(variable):
    extra = variable._extra
    if extra is not None and extra.post_acc_hooks:
        for hook in list(extra.post_acc_hooks.values()):
            hook(variable)
