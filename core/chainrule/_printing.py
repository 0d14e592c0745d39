"""Tensor repr, in the reference's style: ``tensor([1., 2.], requires_grad=True)``."""
import numpy as np


def _fmt_array(arr):
    a = arr
    if arr.dtype.kind not in "fciub":     # bfloat16 prints through float32
        a = arr.astype(np.float32)
    body = np.array2string(a, separator=", ", precision=4, suppress_small=False,
                           prefix="tensor(", floatmode="maxprec_equal", threshold=1000,
                           max_line_width=80)
    return body


def tensor_repr(t):
    from . import _dtypes
    arr = t._data
    body = _fmt_array(arr)
    extras = []
    default = _dtypes.get_default_dtype()
    dtype = t.dtype
    implicit = {default, _dtypes.int64, _dtypes.bool_, default.to_complex()}
    if dtype not in implicit or arr.size == 0:
        extras.append(f"dtype={dtype!r}")
    if arr.size == 0 and arr.ndim != 1:
        body = "[]"
        extras.insert(0, f"size={tuple(arr.shape)}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + extras) + ")"
