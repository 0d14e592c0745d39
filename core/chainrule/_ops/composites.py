"""Functions the reference implements as single kernels, composed here from the
table's ops (so their gradients, double backward and forward mode come for free):
addcmul, addcdiv, cov, corrcoef; the bit shifts; and the dtype questions
result_type and can_cast.

The recorded graph has the composing ops' nodes (MulBackward0, AddBackward0, ...)
where the reference records one node (AddcmulBackward0); values and gradients agree.
"""
import warnings

import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ._common import (FUNCTIONS, _dims_and_zero, _py_scalar, as_tensor_arg, binary_operands,
                      commit_inplace, float_input, inplace_form, kernel_error, method,
                      not_implemented_for, public, wrapped_number)
from .operators import _operator, raw
from .reduction import _write_out

F = FUNCTIONS


@public
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2`` (broadcast).

    >>> import chainrule as cr
    >>> cr.addcmul(cr.ones(2), cr.tensor([1., 2.]), cr.tensor([3., 4.]), value=0.5).tolist()
    [2.5, 5.0]
    """
    if all(isinstance(t, Tensor) and t.dtype == _dtypes.bool_ for t in (input, tensor1, tensor2)):
        raise kernel_error("addcmul_cpu_out")(np.dtype(bool))
    product = F["mul"](tensor1, tensor2)
    result = F["add"](input, product if value == 1 else F["mul"](product, value))
    return result if out is None else _write_out(result, out, "addcmul")


@public
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2`` (broadcast; floating point only).

    >>> import chainrule as cr
    >>> cr.addcdiv(cr.ones(2), cr.tensor([1., 2.]), cr.tensor([4., 4.]), value=2).tolist()
    [1.5, 2.0]
    """
    integral = [t for t in (tensor1, tensor2) if isinstance(t, Tensor)
                and t._data.dtype.kind in "iub"]
    if len(integral) == 2:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
            "for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    quotient = F["div"](tensor1, tensor2)
    result = F["add"](input, quotient if value == 1 else F["mul"](quotient, value))
    return result if out is None else _write_out(result, out, "addcdiv")


@method("addcmul_")
def addcmul_(self, tensor1, tensor2, *, value=1):
    """In-place ``addcmul`` (an optimizer's ``v.addcmul_(g, g, value=1 - beta2)``).

    >>> import chainrule as cr
    >>> cr.ones(2).addcmul_(cr.tensor([1., 2.]), cr.tensor([2., 2.])).tolist()
    [3.0, 5.0]
    """
    return commit_inplace(self, addcmul(self, tensor1, tensor2, value=value))


@method("addcdiv_")
def addcdiv_(self, tensor1, tensor2, *, value=1):
    """In-place ``addcdiv`` (Adam's ``p.addcdiv_(m, denom, value=-lr)``).

    >>> import chainrule as cr
    >>> cr.ones(2).addcdiv_(cr.tensor([1., 2.]), cr.tensor([2., 2.])).tolist()
    [1.5, 2.0]
    """
    return commit_inplace(self, addcdiv(self, tensor1, tensor2, value=value))


# --- bit shifts ----------------------------------------------------------------------
def _shift(ufunc, name, kernel):
    def shift(input, other):
        a, b = binary_operands(wrapped_number(input, other), other)
        if a._data.dtype.kind not in "iu" or b._data.dtype.kind not in "iu":
            raise not_implemented_for(kernel, np.result_type(a._data, b._data), (input, other))
        return raw(lambda x, y: ufunc(x, y.astype(x.dtype, copy=False)), a, b)
    shift.__name__ = name
    shift.__doc__ = (f"Elementwise ``{ufunc.__name__.replace('_', ' ')}`` of integer tensors.\n\n"
                     f"    >>> import chainrule as cr\n"
                     f"    >>> cr.{name}(cr.tensor([8]), 2).dtype\n    chainrule.int64\n")
    return public(shift, name=name)


bitwise_left_shift = _shift(np.left_shift, "bitwise_left_shift", "lshift")
bitwise_right_shift = _shift(np.right_shift, "bitwise_right_shift", "rshift")
for _name, _fn in (("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift")):
    setattr(Tensor, f"__{_name}__", _operator(_fn))      # Note [operators and foreign operands]
    setattr(Tensor, f"__r{_name}__", _operator(_fn, True, lambda v, like: as_tensor_arg(v)))
for _name, _fn in (("bitwise_left_shift", bitwise_left_shift),
                   ("bitwise_right_shift", bitwise_right_shift)):
    _shift_ = inplace_form(_name, _fn)
    _shift_.__doc__ = (f"In-place ``{_name}``.\n\n    >>> import chainrule as cr\n"
                       f"    >>> cr.tensor([4]).{_name}_(1).dtype\n    chainrule.int64\n")
    setattr(Tensor, _name + "_", _shift_)
Tensor.__ilshift__ = Tensor.bitwise_left_shift_
Tensor.__irshift__ = Tensor.bitwise_right_shift_


# --- statistics ----------------------------------------------------------------------
@public
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in ``input``'s rows (observations in its
    columns; a 1-D input is one variable, giving a 0-d result), with optional integer
    frequency weights and float observation weights per column.

    >>> import chainrule as cr
    >>> cr.cov(cr.tensor([[0., 1., 2.], [2., 1., 0.5]], dtype=cr.float64)).tolist()
    [[1.0, -0.75], [-0.75, 0.5833333333333334]]
    """
    if input._data.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input if input.ndim == 2 else F["reshape"](input, (1, -1))
    x = float_input(x)                  # integers are covaried in the default dtype
    if input.ndim > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {input.ndim} dimensions")
    n = x.shape[1]
    weights = _cov_weights(fweights, aweights, n)
    if weights is None:
        total = n
        mean = F["mean"](x, 1, keepdim=True)
        norm = n - correction
    else:
        total = F["sum"](weights)
        mean = F["div"](F["sum"](F["mul"](x, weights), 1, keepdim=True), total)
        norm = total - correction * (F["sum"](F["mul"](weights, aweights)) / total
                                     if aweights is not None else 1)
    if float(norm) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", RuntimeWarning, stacklevel=2)
        norm = 0 * norm if isinstance(norm, Tensor) else 0
    centred = F["sub"](x, mean)
    left = centred if weights is None else F["mul"](centred, weights)
    c = F["div"](F["matmul"](left, F["conj"](F["transpose"](centred, 0, 1))), norm)
    return F["squeeze"](c)          # as the reference: one variable gives a 0-d result


def _cov_weights(fweights, aweights, n):
    for w, name in ((fweights, "fweights"), (aweights, "aweights")):
        if w is not None and (w.ndim > 1 or w.numel() != n):
            raise RuntimeError(f"cov(): expected {name} to have one dimension and the same "
                               f"number of elements as input, but got {name} with shape "
                               f"{list(w.shape)}")
    if fweights is not None and fweights._data.dtype.kind not in "iu":
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                           f"fweights with {fweights.dtype!r} dtype".replace("chainrule.",
                                                                            "torch."))
    if fweights is None:
        return aweights
    return fweights if aweights is None else F["mul"](fweights, aweights)


@public
def corrcoef(input):
    """Pearson correlation coefficients of the variables in ``input``'s rows, clipped to
    [-1, 1].

    >>> import chainrule as cr
    >>> [round(v, 4) for v in cr.corrcoef(cr.tensor([[0., 1., 2.], [2., 1., 0.5]]))[0].tolist()]
    [1.0, -0.982]
    """
    c = cov(input)
    if c.ndim == 0:
        return F["div"](c, c)
    std = F["sqrt"](F["real"](F["diagonal"](c)) if c.is_complex() else F["diagonal"](c))
    c = F["div"](F["div"](c, F["unsqueeze"](std, 1)), F["unsqueeze"](std, 0))
    return F["clamp"](c, -1, 1) if not c.is_complex() else c


# --- dtype questions -------------------------------------------------------------------
@public(method=False)
def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on the two operands (tensors or numbers) returns.

    >>> import chainrule as cr
    >>> cr.result_type(cr.tensor([1], dtype=cr.int32), 1.0)
    chainrule.float32
    """
    operands = (tensor1, tensor2)
    dims, zero = _dims_and_zero([t for t in operands if isinstance(t, Tensor)])
    scalars = [_py_scalar(s) for s in operands if not isinstance(s, Tensor)]
    return _dtypes.result_type(dims, zero, scalars)


@public(method=False)
def can_cast(from_, to):
    """Whether an op may write a ``from_`` result into a ``to`` tensor (no cast to a
    lower category: float to int, complex to float, number to bool).

    >>> import chainrule as cr
    >>> cr.can_cast(cr.float64, cr.float32), cr.can_cast(cr.float32, cr.int32)
    (True, False)
    """
    return _dtypes.can_cast(from_, to)
