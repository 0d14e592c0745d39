"""Tensor repr in the reference's style: ``tensor([1.0000, 2.7183], requires_grad=True)``.

Floating values print like the reference's formatter: integer-valued data as ``1.``,
otherwise four decimals, switching to scientific notation (``1.0000e-05``) when the
magnitudes span more than 1000x or leave the range [1e-4, 1e8]; every element padded
to one width so columns line up.

``set_printoptions`` changes the precision, the summarising threshold, the edge items,
the line width and the scientific-notation choice, as the reference's does.
"""
import numpy as np

from .autograd import tangent_slot

_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=np.inf, edgeitems=3, linewidth=80)}
PRINT_OPTIONS = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print: digits after the point (``precision``), the element
    count above which they are summarised (``threshold``) showing ``edgeitems`` at
    each end, the ``linewidth``, a ``profile`` ("default", "short", "full") setting all
    four, and ``sci_mode`` (True/False force scientific/fixed notation, None decides).

    >>> import chainrule as cr
    >>> cr.set_printoptions(precision=2)
    >>> cr.tensor([1.23456, 2.5])
    tensor([1.23, 2.50])
    >>> cr.set_printoptions(profile="default")
    """
    if profile is not None:
        PRINT_OPTIONS.update(_PROFILES[profile])
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                 linewidth=linewidth)
    PRINT_OPTIONS.update({k: v for k, v in given.items() if v is not None})
    PRINT_OPTIONS["sci_mode"] = sci_mode


def _float_format(arr):
    digits = PRINT_OPTIONS["precision"]
    fixed, sci = f"{{:.{digits}f}}", f"{{:.{digits}e}}"
    values = np.abs(arr[np.isfinite(arr)].astype(np.float64))
    nonzero = values[values != 0]
    integral = bool(np.all(np.ceil(values) == values))
    if PRINT_OPTIONS["sci_mode"] is not None:
        return sci if PRINT_OPTIONS["sci_mode"] else fixed
    if nonzero.size == 0:
        return "{:.0f}." if integral else fixed
    big, small = nonzero.max(), nonzero.min()
    if integral:
        return sci if big > 1e8 else "{:.0f}."
    if big / small > 1000.0 or big > 1e8 or small < 1e-4:
        return sci
    return fixed


def _element_formatter(arr):
    """One float array's formatter, as the reference makes it: the notation is chosen
    from the nonzero finite values and each element is right-justified to the widest
    of them (zeros, nan and inf never widen the columns)."""
    spec = _float_format(arr)

    def text(x):
        if not np.isfinite(x):
            return "nan" if np.isnan(x) else ("inf" if x > 0 else "-inf")
        return spec.format(x)
    flat = arr.reshape(-1)
    shown = flat[np.isfinite(flat) & (flat != 0)]
    width = max((len(text(x)) for x in shown), default=1)
    return lambda x: text(x).rjust(width)


def _complex_formatter(arr):
    """``1.5000-0.2500j``: the real parts formatted as a float array, the imaginary
    parts as another, unpadded, with the sign between them."""
    real, imag = _element_formatter(arr.real), _element_formatter(arr.imag)

    def text(z):
        imag_text = (imag(z.imag) + "j").lstrip()
        return real(z.real) + ("" if imag_text[0] in "+-" else "+") + imag_text
    return text


def _summarized(arr):
    """The elements a summarised print shows (``edgeitems`` at each end of each
    dimension): the reference chooses the notation from these alone."""
    if arr.size <= PRINT_OPTIONS["threshold"]:
        return arr
    edge = PRINT_OPTIONS["edgeitems"]
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            arr = np.take(arr, list(range(edge)) + list(range(n - edge, n)), axis=axis)
    return arr


def _fmt_array(arr, prefix="tensor("):
    if arr.dtype.kind not in "fciub":     # bfloat16 prints through float32
        arr = arr.astype(np.float32)
    formatter = None
    if arr.dtype.kind == "f" and arr.size:
        formatter = {"float_kind": _element_formatter(_summarized(arr))}
    elif arr.dtype.kind == "c" and arr.size:
        formatter = {"complex_kind": _complex_formatter(_summarized(arr))}
    elif arr.dtype.kind == "b" and arr.size:      # padded to the widest shown: True, True
        width = 5 if not _summarized(arr).all() else 4
        formatter = {"bool": lambda v: str(bool(v)).rjust(width)}
    if arr.ndim == 0:
        if formatter is None:
            return repr(arr.item())
        return next(iter(formatter.values()))(arr.item()).strip()
    text = np.array2string(arr, separator=", ", prefix=prefix,
                           threshold=PRINT_OPTIONS["threshold"],
                           edgeitems=PRINT_OPTIONS["edgeitems"],
                           max_line_width=PRINT_OPTIONS["linewidth"], formatter=formatter)
    return text.replace(", ..., ", ",  ..., ")      # the reference's summary spacing


def tensor_repr(t):
    from . import _dtypes
    arr = t._data
    if type(arr) is not np.ndarray and t.is_meta:
        return _meta_repr(t)
    if type(arr) is not np.ndarray:           # Note [device arrays]: print a host copy
        arr = arr.get()
    prefix = _prefix(t)
    body = _fmt_array(arr, prefix)
    extras = []
    default = _dtypes.get_default_dtype()
    dtype = t.dtype
    # the reference names every dtype but the default of an empty tensor ([] says none)
    implied = {default} if arr.size == 0 else \
        {default, _dtypes.int64, _dtypes.bool_, default.to_complex()}
    if t._data is not arr:
        extras.append(f"device='{t.device}'")
    if dtype not in implied:
        extras.append(f"dtype={dtype!r}")
    if arr.size == 0 and arr.ndim != 1:
        body = "[]"
        extras.insert(0, f"size={tuple(arr.shape)}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{_node_label(t.grad_fn)}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    tangent = None if tangent_slot.SLOT is None else tangent_slot.SLOT.tangent_of(t)
    if tangent is not None:                         # Note [tangent slot]
        extras.append(f"tangent={tensor_repr(tangent)}")
    return _with_suffixes(prefix + body, extras, len(prefix))


def _prefix(t):
    """``tensor(``, or a subclass's own name (a Parameter prints as a tensor)."""
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    cls = type(t)
    return "tensor(" if cls is Tensor or cls is Parameter else f"{cls.__name__}("


def _with_suffixes(text, suffixes, indent=len("tensor(")):
    """``text, suffix, ...)``: a suffix that would pass the line width starts a line of
    its own, indented under the first element (the reference's wrapping)."""
    parts = [text]
    line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line + len(suffix) + 2 > PRINT_OPTIONS["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line += len(suffix) + 2
    return "".join(parts) + ")"


def _meta_repr(t):
    """``tensor(..., device='meta', size=(2, 3))``: no values to show (Note [meta
    arrays]); the reference names every dtype but the default."""
    from . import _dtypes
    extras = ["...", "device='meta'", f"size={tuple(t._data.shape)}"]
    if t.dtype != _dtypes.get_default_dtype():
        extras.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{_node_label(t.grad_fn)}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return _with_suffixes("tensor(" + extras[0], extras[1:])


def _node_label(node):
    """A node's name as a tensor's repr shows it: the reference's C++ nodes without
    their namespace (``torch::autograd::Identity`` shows as ``Identity``)."""
    return node.name().rsplit("::", 1)[-1]
