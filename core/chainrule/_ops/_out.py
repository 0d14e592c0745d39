"""``out=`` for the public functions of the table (``cr.add(a, b, out=c)``,
``cr.sin(x, out=y)``, ``cr.sum(x, 0, out=s)``, ``cr.max(x, 1, out=(v, i))``).

Note [out= arguments]
    Like the reference, a function given ``out=`` computes its result as usual, then
    writes it into ``out`` and returns ``out`` (a tuple of them, in a named tuple,
    for several results):
    - nothing is recorded: with grad mode on, an argument (or ``out``) that requires
      grad raises "functions with out=... arguments don't support automatic
      differentiation", under no_grad the write is allowed;
    - ``out`` keeps its memory (and its views see the result) when its shape is the
      result's; otherwise it is resized, with the reference's deprecation warning
      when it held any element;
    - the result is cast to ``out``'s dtype when the reference allows that cast
      (``can_cast``: no float to integer, complex to real, number to bool), else
      "result type Float can't be cast to the desired output type Long"; the
      reductions with a ``dtype`` argument (sum, prod, mean, ...) compute in
      ``out``'s dtype instead, as the reference's do, and the products, sorts and
      index results want ``out`` of the result's dtype;
    - ``out`` is written in place: its version counter is bumped;
    - under vmap, a batched argument (or ``out``) raises the reference's "Batching rule
      not implemented for aten::add.out".
    Where the reference's public function is made of other ops, its out= form differs:
    - a composite that computes its result and copies it into ``out`` (special.ndtr,
      linalg.norm, ...: RECORDED_COPY) casts it to ``out``'s dtype as ``copy_`` does,
      and records that copy when an argument requires grad: ``out`` becomes the
      result's CopyBackwards, no refusal;
    - a function with no derivative (the Bessel functions, the orthogonal polynomials,
      linalg.matrix_rank: NOT_DIFFERENTIABLE) writes with no refusal: nothing it
      computes requires grad;
    - the refusal names the kernel the function calls (linalg.inv: linalg_inv_ex,
      special.gammainc: igamma: KERNEL_NAMES), and a function of several results
      refuses a single tensor for ``out`` before it (TUPLE_RESULTS).
    Only the module-level functions take ``out=`` (the reference's Tensor methods do
    not): their dispatching wrappers (Note [torch function slot]) have ``out`` as a
    keyword-only parameter and send a call that gives it to ``out_form``; a call
    without it costs one ``is not None`` more and reaches the function (or an
    accelerator's replacement of it, Note [method slot]) as before.
"""
import inspect
import os
import sys
import warnings

import numpy as np

from .. import _dtypes, _grad_mode, return_types
from .._batched import BatchedTensor
from .._tensor import Tensor
from ._common import check_inplace_cast

# the functions that take ``out=`` (the reference's elementwise, comparison, reduction
# and product functions; those that had ``out`` already keep their own)
OUT_FUNCTIONS = frozenset("""
abs absolute acos acosh add angle arccos arccosh arcsin arcsinh arctan arctan2 arctanh asin
asinh atan atan2 atanh bitwise_not ceil clamp clamp_max clamp_min clip copysign cos cosh
deg2rad digamma div divide erf erfc erfinv exp exp2 expm1 fix float_power floor floor_divide
fmax fmin fmod frac frexp gcd heaviside hypot lcm ldexp lerp lgamma log log10 log1p log2
logaddexp logaddexp2 logit maximum minimum mul multiply mvlgamma nan_to_num neg negative
nextafter polygamma pow rad2deg reciprocal remainder round rsqrt sgn sigmoid sign sin sinc
sinh sqrt square sub subtract tan tanh true_divide trunc where xlogy i0 igamma igammac
conj_physical renorm bitwise_and bitwise_or bitwise_xor bitwise_left_shift
bitwise_right_shift eq ne not_equal ge greater_equal gt greater le less_equal lt less
logical_and logical_not logical_or logical_xor isneginf isposinf signbit
all any amax amin aminmax argmax argmin cummax cummin cumprod cumsum histc kthvalue
log_softmax logcumsumexp logsumexp max mean median min mode msort nanmean nanmedian nansum
prod softmax sort std sum topk var
bmm dot ger matmul mm mv outer vdot masked_select take take_along_dim
""".split())

# functions whose ``out`` must have the result's dtype (products, sorts, indices)
_SAME_DTYPE = frozenset("""
mm bmm matmul mv take_along_dim argmax argmin sort msort max min kthvalue topk mode median
nanmedian softmax log_softmax
""".split())

# reductions that compute in ``out``'s dtype (any dtype; the means floating ones only)
_SUMS, _MEANS = frozenset(("sum", "prod", "nansum", "cumsum", "cumprod")), \
    frozenset(("mean", "nanmean"))


def out_form(fn, name):
    """What the dispatching wrapper of the public function ``name`` (``fn``) calls when
    given ``out=`` (Note [out= arguments]), or None where it takes no ``out``.

    >>> import chainrule as cr
    >>> y = cr.empty(2)
    >>> cr.add(cr.tensor([1., 2.]), 1, out=y) is y, y.tolist()
    (True, [2.0, 3.0])
    """
    if name not in OUT_FUNCTIONS or not _without_own_out(fn):
        return None
    return _given_out(fn, name)


# the functions of chainrule.special without ``out=`` (the reference's take none)
_SPECIAL_WITHOUT_OUT = frozenset(("softmax", "log_softmax"))


def special_out_form(fn, name):
    """``out_form`` for ``chainrule.special``, where every function but the softmaxes
    takes ``out=``, named in messages as the reference's kernel: a table op's own name
    for its alias (expit: sigmoid), ``special_<name>`` for the rest.

    >>> import chainrule as cr
    >>> y = cr.empty(0, dtype=cr.float64)
    >>> cr.special.expit(cr.tensor([0.0]), out=y) is y, y.tolist()
    (True, [0.5])
    """
    if name in _SPECIAL_WITHOUT_OUT or not _without_own_out(fn):
        return None
    return _given_out(fn, fn.__name__ if fn.__name__ in OUT_FUNCTIONS else f"special_{name}")


def _without_own_out(fn):
    return inspect.isfunction(fn) and "out" not in inspect.signature(fn).parameters


def _given_out(fn, name):
    def given_out(positional, star, kwonly, starstar, out):
        _check_dim_given(name, fn, tuple(positional) + tuple(star), {**kwonly, **starstar},
                         out)
        return _call_with_out(fn, name, out, tuple(positional) + tuple(star),
                              {**kwonly, **starstar})
    return given_out


def _logical_reduction_out(fn, name, out, args, kwargs):
    """all/any: ``out`` is bool or uint8 (whatever the input's dtype, the result is
    written in it), as the reference's kernels want."""
    if out._data.dtype.kind not in "bu" or out._data.dtype.itemsize != 1:
        raise RuntimeError(f"{name} only supports bool tensor for result, got: "
                           f"{_dtypes.scalar_type_name(out._data.dtype)}")
    return write_out(name, out, list(args) + list(kwargs.values()),
                     lambda: fn(*args, **kwargs).to(out.dtype))


# reductions whose reference overload without ``dim`` takes no ``out`` (the message the
# reference's argument parser gives, or None for its "missing dim" one). The
# reference's sum takes ``dim=None`` given explicitly with ``out``, which chainrule
# cannot tell from no dim given: both are refused, as the commoner spelling is
_DIM_REQUIRED = {"sum": "tuple of ints dim", "prod": "int dim", "median": None,
                 "nanmedian": None}


def _check_dim_given(name, fn, args, kwargs, out):
    """``cr.sum(x, out=s)``: refused as the reference refuses it (its ``out`` belongs
    to the overload with ``dim``). A ``dim=None`` given explicitly cannot be told apart
    from none given, and is refused too (with the message for none given)."""
    if name not in _DIM_REQUIRED:
        return
    params = list(inspect.signature(fn).parameters)
    given = dict(zip(params, args), **kwargs)
    if given.get("dim", given.get("axis")) is not None:
        return
    overload = _DIM_REQUIRED[name]
    if overload is None or given.get("keepdim") or given.get("dtype") is not None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                    f"out={type(out).__name__}), but expected one of:\n"
                    " * (Tensor input, *, torch.dtype dtype = None)\n"
                    f" * (Tensor input, {overload}, bool keepdim = False, *, "
                    "torch.dtype dtype = None, Tensor out = None)\n")


def _call_with_out(fn, name, out, args, kwargs):
    if name in ("all", "any") and isinstance(out, Tensor):
        return _logical_reduction_out(fn, name, out, args, kwargs)
    if isinstance(out, Tensor) and "dtype" in inspect.signature(fn).parameters and \
            kwargs.get("dtype") is None and (name in _SUMS or (
                name in _MEANS and out._data.dtype.kind in "fc")):
        kwargs = {**kwargs, "dtype": out.dtype}
    return write_out(name, out, list(args) + list(kwargs.values()),
                     lambda: fn(*args, **kwargs), name in _SAME_DTYPE)


# Note [out= arguments]: the composites and the functions without a derivative, and the
# kernels the refusal names, by the name write_out is given
RECORDED_COPY = frozenset(("special_ndtr", "linalg_cond", "linalg_matrix_norm", "linalg_norm",
                           "linalg_tensorinv", "linalg_tensorsolve", "linalg_matrix_rank"))
NOT_DIFFERENTIABLE = frozenset([f"special_{n}" for n in """
airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 modified_bessel_i1
modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0 scaled_modified_bessel_k1
spherical_bessel_j0 chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v
chebyshev_polynomial_w shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w hermite_polynomial_h
hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p""".split()])
KERNEL_NAMES = {"special_gammainc": "igamma", "special_gammaincc": "igammac",
                "linalg_cholesky": "linalg_cholesky_ex", "linalg_det": "_linalg_det",
                "linalg_eigvalsh": "_linalg_eigh", "linalg_inv": "linalg_inv_ex",
                "linalg_matmul": "matmul", "linalg_solve": "_linalg_solve_ex",
                "linalg_svdvals": "_linalg_svd", "linalg_multi_dot": "mm"}
TUPLE_RESULTS = frozenset(f"linalg_{n}" for n in """
cholesky_ex eig eigh inv_ex ldl_factor ldl_factor_ex lstsq lu lu_factor lu_factor_ex qr slogdet
solve_ex svd""".split())


def write_out(name, out, inputs, compute, same_dtype=False):
    """``compute()``'s result written into ``out`` (Note [out= arguments]): nothing is
    recorded (but by the composites); ``same_dtype``: no cast allowed."""
    outs = _outs(out, name)
    if name in TUPLE_RESULTS and isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not Tensor")
    tensors = _tensors(inputs)
    if name in RECORDED_COPY:                      # copy_ casts as it can
        if _records(tensors):
            return _copy_recorded(out, compute())
        same_dtype = False
    if name not in NOT_DIFFERENTIABLE:
        refuse_grad(KERNEL_NAMES.get(name, name), tensors + outs)
    with _grad_mode.no_grad():
        result = compute()
    if isinstance(result, tuple) == isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be "
                        f"{'tuple of Tensors' if isinstance(result, tuple) else 'Tensor'}, "
                        f"not {type(out).__name__}")
    return store(out, result, same_dtype, inputs)


def _tensors(inputs):
    """The tensors among a call's arguments, those in a list (multi_dot's) included."""
    found = []
    for value in inputs:
        if isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, Tensor))
        elif isinstance(value, Tensor):
            found.append(value)
    return found


def _records(tensors):
    return _grad_mode.STATE.grad_enabled and any(t._requires_grad for t in tensors)


def _copy_recorded(out, result):
    """A composite's out= form with an argument that requires grad (Note [out=
    arguments]): ``out`` resized to the result's shape if need be, then ``copy_``."""
    shape = result._data.shape
    if out._data.shape != shape:
        if out._data.size:
            warnings.warn(_resized(out._data.shape, shape), UserWarning,
                          stacklevel=_caller_outside())
        out._data = np.empty(shape, out._data.dtype)
    return out.copy_(result)


def _outs(out, name):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        return list(out)
    raise TypeError(f"{name}(): argument 'out' must be Tensor or tuple of Tensors, not "
                    f"{type(out).__name__}")


def refuse_grad(name, tensors):
    """Note [out= arguments]: no out= with an argument that requires grad (under grad
    mode), nor with a batched one (under vmap, where the reference has no out= rule)."""
    if any(type(t) is BatchedTensor for t in tensors):
        raise RuntimeError(f"Batching rule not implemented for aten::{name}.out; the fallback "
                           "path doesn't work on out= or view ops.")
    if _grad_mode.STATE.grad_enabled and any(isinstance(t, Tensor) and t._requires_grad
                                             for t in tensors):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")


def store(out, result, same_dtype=False, inputs=()):
    """Write ``result`` (a Tensor, or a named tuple of them, computed from ``inputs``)
    into ``out`` (Note [out= arguments]; ``same_dtype``: no cast allowed) and return
    ``out`` (for a tuple, the named tuple's ``_out`` type)."""
    if isinstance(out, Tensor):
        _store_one(out, result, same_dtype, inputs)
        return out
    if len(out) != len(result):
        raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
    for o, r in zip(out, result):
        _store_one(o, r, same_dtype)
    kind = type(result)
    return return_types.out_type(kind)(*out) if hasattr(kind, "_fields") else tuple(out)


def _store_one(out, result, same_dtype, inputs=()):
    source, target = result._data.dtype, out._data.dtype
    if same_dtype and source != target:
        raise RuntimeError(f"Expected out tensor to have dtype {_dtypes.cpp_type_name(source)}, "
                           f"but got {_dtypes.cpp_type_name(target)} instead")
    if source != target:
        check_inplace_cast(source, target, inputs)
    shape = result._data.shape
    if out._data.shape != shape:
        if out._data.size:
            warnings.warn(_resized(out._data.shape, shape), UserWarning,
                          stacklevel=_caller_outside())
        out._data = np.empty(shape, target)
    np.copyto(out._data, result._data, casting="unsafe")
    out._bump_version()


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _caller_outside():
    """The ``stacklevel`` (seen from the caller) of the first frame outside chainrule:
    the user's call. Frames the warnings module skips (Note [invisible wrapper
    frames]) are not counted."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        name = frame.f_code.co_filename if frame is not None else ""
        level += not ("importlib" in name and "_bootstrap" in name)
    return level


def _resized(had, wanted):
    return (f"An output with one or more elements was resized since it had shape {list(had)}, "
            f"which does not match the required output shape {list(wanted)}. This behavior "
            "is deprecated, and in a future PyTorch release outputs will not be resized "
            "unless they have zero elements. You can explicitly reuse an out tensor t by "
            "resizing it, inplace, to zero elements with t.resize_(0).")
