"""``assert_close``: compare tensors, numbers and (nested) sequences and mappings of
them, with per-dtype default tolerances and the reference's failure messages."""
from collections.abc import Mapping, Sequence

import numpy as np

from .. import _dtypes
from .._tensor import Tensor

# (rtol, atol) when neither is given, by dtype (integers and bool compare exactly).
_DEFAULT_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
                       "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
                       "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` are close: ``|a - e| <= atol + rtol * |e|``
    elementwise, after checking shapes, dtypes (``check_dtype``), devices and, with
    ``check_stride``, strides. Sequences and mappings are compared item by item.

    >>> import chainrule as cr
    >>> cr.testing.assert_close(cr.tensor([1.0, 2.0]), cr.tensor([1.0, 2.0 + 1e-7]))
    >>> cr.testing.assert_close(cr.tensor([1.0]), cr.tensor([1.5]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 1 (100.0%)
    Greatest absolute difference: 0.5 at index (0,) (up to 1e-05 allowed)
    Greatest relative difference: 0.3333333432674408 at index (0,) (up to 1.3e-06 allowed)
    """
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {missing}.")
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                   check_dtype=check_dtype, check_stride=check_stride)
    stack = [(actual, expected, [])]
    while stack:                                   # no recursion over nested inputs
        a, e, path = stack.pop()
        try:
            children = _children(a, e)
            if children is None:
                _compare_leaves(a, e, **options)
            else:
                stack.extend((ca, ce, path + [key]) for key, ca, ce in reversed(children))
        except AssertionError as error:
            text = str(error) if msg is None else (msg(str(error)) if callable(msg) else msg)
            if path and msg is None:
                where = "".join(f"[{k!r}]" for k in path)
                text += f"\n\nThe failure occurred for item {where}"
            raise AssertionError(text) from None


def _children(a, e):
    """(key, actual item, expected item) of two sequences or mappings; None for leaves."""
    if isinstance(a, Mapping) and isinstance(e, Mapping):
        if set(a) != set(e):
            raise AssertionError(
                f"The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(set(e) - set(a))}\n"
                f"Additional keys in the actual mapping: {sorted(set(a) - set(e))}")
        return [(k, a[k], e[k]) for k in e]
    sequence = (lambda x: isinstance(x, Sequence) and not isinstance(x, str))
    if sequence(a) and sequence(e):
        if len(a) != len(e):
            raise AssertionError(f"The length of the sequences mismatch: {len(a)} != {len(e)}")
        return list(zip(range(len(a)), a, e))
    return None


def _compare_leaves(a, e, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    if isinstance(a, Tensor) and isinstance(e, Tensor):
        _compare_tensors(a, e, rtol, atol, equal_nan, check_device, check_dtype, check_stride)
    elif _is_number(a) and _is_number(e):
        _compare_numbers(a, e, rtol, atol, equal_nan, check_dtype)
    elif a is None and e is None:
        return
    else:
        public = (lambda x: repr(type(x)).replace("chainrule._tensor.Tensor", "chainrule.Tensor"))
        raise TypeError(f"No comparison pair was able to handle inputs of type {public(a)} and "
                        f"{public(e)}.")


def _is_number(x):
    return isinstance(x, (bool, int, float, complex, np.number))


def _compare_tensors(a, e, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    checks = [("shape", lambda t: t.shape)]
    if check_device:
        checks.append(("device", lambda t: t.device))
    if check_dtype:
        checks.append(("dtype", lambda t: t.dtype))
    if check_stride:
        checks.append(("stride()", lambda t: t.stride()))
    for name, get in checks:
        if get(a) != get(e):
            show = (lambda v: repr(v).replace("chainrule.", "torch."))
            raise AssertionError(f"The values for attribute '{name}' do not match: "
                                 f"{show(get(a))} != {show(get(e))}.")
    x, y = _host(a), _host(e)
    if not check_dtype and x.dtype != y.dtype:
        common = np.promote_types(x.dtype, y.dtype)
        x, y = x.astype(common), y.astype(common)
    rtol, atol = (rtol, atol) if rtol is not None else _tolerances(a.dtype, e.dtype)
    _report(x, y, rtol, atol, equal_nan, scalar=x.ndim == 0)


def _host(t):
    arr = t.detach()._data
    arr = arr if type(arr) is np.ndarray else arr.get()
    return arr.astype(np.float32) if arr.dtype.kind == "V" or arr.dtype.name == "bfloat16" \
        else arr


def _tolerances(*dtypes):
    pairs = [_DEFAULT_TOLERANCES.get(str(d).split(".")[-1], (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _compare_numbers(a, e, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(a) is not type(e):
        raise AssertionError(f"The (d)types do not match: {type(a)} != {type(e)}.")
    if rtol is None:
        exact = all(isinstance(v, (bool, int, np.integer)) for v in (a, e))
        rtol = atol = 0.0 if exact else 1e-7
    _report(np.asarray(a), np.asarray(e), rtol, atol, equal_nan, scalar=True)


def _report(x, y, rtol, atol, equal_nan, scalar):
    """Raise the reference's message when ``x`` and ``y`` are not close."""
    close = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan) if x.dtype.kind != "b" \
        else x == y
    if x.dtype.kind in "iub":
        close = close & (x == y) if rtol == atol == 0 else close
    if np.all(close):
        return
    exact = rtol == 0 and atol == 0
    kind = "Scalars" if scalar else "Tensor-likes"
    header = f"{kind} are not {'equal' if exact else 'close'}!\n\n"
    diff = _abs_diff(x, y)
    relative = _rel_diff(x, y, diff)
    allowed = (lambda tol: "" if exact else f" (up to {tol} allowed)")
    if scalar:
        raise AssertionError(
            header + f"Expected {y.item()} but got {x.item()}.\n"
            f"Absolute difference: {diff.item()}{allowed(atol)}\n"
            f"Relative difference: {relative.item()}{allowed(rtol)}")
    bad = ~close
    at = (lambda arr: tuple(int(i) for i in np.unravel_index(_argmax(arr, bad), arr.shape)))
    raise AssertionError(
        header + f"Mismatched elements: {int(bad.sum())} / {bad.size} "
        f"({bad.sum() / bad.size * 100:.1f}%)\n"
        f"Greatest absolute difference: {diff[at(diff)].item()} at index {at(diff)}"
        f"{allowed(atol)}\n"
        f"Greatest relative difference: {relative[at(relative)].item()} at index "
        f"{at(relative)}{allowed(rtol)}")


def _abs_diff(x, y):
    if x.dtype.kind == "b":
        return (x != y).astype(np.int64)
    return np.abs(x - y)


def _rel_diff(x, y, diff):
    kind = x.dtype.kind
    work = diff.astype(np.float32 if kind in "iub" else diff.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return work / np.abs(y).astype(work.dtype)


def _argmax(arr, mask):
    """The flat index of the largest value among ``mask`` (NaN counts as largest)."""
    values = np.where(mask, arr, -np.inf) if arr.dtype.kind == "f" else np.where(mask, arr, -1)
    nan = np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)
    return int(np.flatnonzero(nan.reshape(-1))[0]) if nan.any() else int(np.argmax(values))


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with uniform random values in ``[low, high)`` (by
    default [-9, 9] for numbers, {False, True} for bool), optionally non-contiguous or
    without zeros.

    >>> import chainrule as cr
    >>> t = cr.testing.make_tensor(2, 3, dtype=cr.float32, device="cpu", low=-1, high=1)
    >>> t.shape, bool((t.abs() <= 1).all())
    (chainrule.Size([2, 3]), True)
    """
    from .. import _factories, _random
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    d = _dtypes.to_dtype(dtype)
    rng = _random.numpy_rng(None)
    if d == _dtypes.bool_:
        values = rng.integers(0, 2, shape).astype(bool)
    else:
        lo, hi = (-9 if low is None else low), (9 if high is None else high)
        if lo > hi:
            raise ValueError(f"`low` must be less than or equal to `high`, but got {lo} > {hi}")
        values = rng.uniform(lo, hi, shape)
        if d.is_complex:
            values = values + 1j * rng.uniform(lo, hi, shape)
        elif not d.is_floating_point:
            values = np.floor(values)
        if exclude_zero:
            tiny = 1 if not (d.is_floating_point or d.is_complex) else 1e-3
            values = np.where(values == 0, tiny, values)
    arr = np.asarray(values).astype(d.np)
    if noncontiguous and arr.size > 1:
        wide = np.repeat(arr[..., None], 2, axis=-1)
        arr = wide[..., 0]
    t = _factories.tensor(arr, device=device) if not noncontiguous else \
        Tensor._wrap(arr)
    return t.requires_grad_(requires_grad) if requires_grad else t


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated: ``assert_close`` with ``check_dtype=False`` and NaNs equal.

    >>> import chainrule as cr
    >>> cr.testing.assert_allclose(cr.tensor([1.0]), [1.0])
    """
    if not isinstance(actual, Tensor):
        actual = Tensor._wrap(np.asarray(actual))
    if not isinstance(expected, Tensor):
        expected = Tensor._wrap(np.asarray(expected, dtype=actual._data.dtype))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, msg=msg or None)
