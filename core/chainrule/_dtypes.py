"""dtypes: chainrule's names for NumPy dtypes, and torch's type-promotion rules.

NumPy's own promotion differs from torch's (0-d arrays are not "weak", bfloat16
and float16 do not promote to each other), so chainrule computes the result dtype
itself and casts inputs before calling NumPy.
"""
import builtins
import threading

import ml_dtypes
import numpy as np

# Promotion categories, ordered: a higher category wins regardless of size.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, e.g. ``chainrule.float32``.

    >>> import chainrule as cr
    >>> cr.float32.is_floating_point, cr.complex64.is_complex, cr.float64.itemsize
    (True, True, 8)
    """

    __slots__ = ("name", "np", "category", "is_floating_point", "is_complex",
                 "is_signed", "itemsize")

    def __init__(self, name, np_dtype, category, signed=True):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = signed
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return "chainrule." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        """The real counterpart of a complex dtype (itself otherwise)."""
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        """The complex counterpart of a floating dtype (itself otherwise)."""
        return {"float32": complex64, "float64": complex128,
                "float16": complex64, "bfloat16": complex64}.get(self.name, self)


float16 = dtype("float16", np.float16, _FLOAT)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT)
float64 = dtype("float64", np.float64, _FLOAT)
complex64 = dtype("complex64", np.complex64, _COMPLEX)
complex128 = dtype("complex128", np.complex128, _COMPLEX)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT)
int32 = dtype("int32", np.int32, _INT)
int64 = dtype("int64", np.int64, _INT)
uint8 = dtype("uint8", np.uint8, _INT, signed=False)
# the reference's "limited support" unsigned types: creation, conversion, comparison;
# no promotion with other integer types (promote_types raises)
uint16 = dtype("uint16", np.uint16, _INT, signed=False)
uint32 = dtype("uint32", np.uint32, _INT, signed=False)
uint64 = dtype("uint64", np.uint64, _INT, signed=False)
bool_ = dtype("bool", np.bool_, _BOOL, signed=False)
half, float, double = float16, float32, float64
cfloat, cdouble, long, int, short = complex64, complex128, int64, int32, int16

ALL_DTYPES = (float16, bfloat16, float32, float64, complex64, complex128,
              int8, int16, int32, int64, uint8, bool_, uint16, uint32, uint64)
_LIMITED_UNSIGNED = ("uint16", "uint32", "uint64")
_FROM_NP = {d.np: d for d in ALL_DTYPES}
_NAMES = {d.name: d for d in ALL_DTYPES}


def _by_name(name):
    return _NAMES[name]


def from_numpy_dtype(np_dtype):
    """The chainrule dtype of a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        pass
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported "
            "types are: float64, float32, float16, bfloat16, complex64, complex128, "
            "int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool.") from None


# torch's C++ scalar-type names, used in its error messages and ``type()`` strings
_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                      "bfloat16": "BFloat16", "complex64": "ComplexFloat",
                      "complex128": "ComplexDouble", "int64": "Long", "int32": "Int",
                      "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                      "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


def scalar_type_name(np_dtype):
    """The reference's name for a dtype in messages ("Long", "ComplexDouble")."""
    return _SCALAR_TYPE_NAMES[from_numpy_dtype(np_dtype).name]


_CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                   "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>",
                   "complex128": "c10::complex<double>", "int64": "long int", "int32": "int",
                   "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                   "bool": "bool"}


def cpp_type_name(np_dtype):
    """The C++ type name some of the reference's messages use for a dtype ("long int",
    "c10::Half").

    >>> import numpy as np
    >>> from chainrule._dtypes import cpp_type_name
    >>> cpp_type_name(np.dtype(np.int64)), cpp_type_name(np.dtype(np.float32))
    ('long int', 'float')
    """
    name = from_numpy_dtype(np_dtype).name
    return _CPP_TYPE_NAMES.get(name, name)


_PY_NUMBERS = (builtins.int, builtins.float)      # (this module's int and float are dtypes)
# the reference's checked conversion names C's fixed-width types ("int" for int32)
_CHECKED_TYPE_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int",
                       "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t",
                       "uint64": "uint64_t"}


def checked_integer(value, np_dtype, type_name=None):
    """Note [checked integer conversion]
        A Python number stored into an integer tensor (fill, full, masked_fill, clamp,
        item assignment, ``tensor(data, dtype=...)``) as the reference converts it:
        in range it is kept (an unsigned type also takes negatives down to -max,
        wrapping them as two's complement: ``uint8`` -1 is 255); beyond, its
        RuntimeError "value cannot be converted to type <name> without overflow"
        (``type_name``; by default C's name, "uint8_t"). A number meeting a tensor in
        arithmetic wraps instead (_common.wrapped_integer). An int beyond 64 bits is
        the reference's OverflowError. Other values and dtypes pass unchanged.

    >>> import numpy as np
    >>> from chainrule._dtypes import checked_integer
    >>> checked_integer(-1, np.dtype(np.uint8)), checked_integer(2.0, np.dtype(np.int8))
    (255, 2.0)
    """
    if np_dtype.kind not in "iu" or type(value) not in _PY_NUMBERS or value != value:
        return value
    if type(value) is builtins.int and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert")         # the reference's Scalar
    info = np.iinfo(np_dtype)
    low = -info.max if np_dtype.kind == "u" else info.min      # Python ints already
    if not low <= value <= info.max:
        name = type_name or _CHECKED_TYPE_NAMES[np_dtype.name]
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return value % (info.max + 1) if value < 0 and np_dtype.kind == "u" else value


def to_dtype(d):
    """Accept a chainrule dtype, a NumPy dtype/type or a Python type."""
    if type(d) is dtype:
        return d
    if d is builtins_float:
        return get_default_dtype()
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool_
    if d is builtins_complex:
        return get_default_dtype().to_complex()
    return from_numpy_dtype(d)


import builtins as _b  # noqa: E402  (after the module-level names that shadow them)
builtins_float, builtins_int, builtins_bool, builtins_complex = _b.float, _b.int, _b.bool, _b.complex

_state = threading.local()


def get_default_dtype():
    """The dtype of floating tensors made from Python floats (float32 unless changed).

    >>> import chainrule as cr
    >>> cr.get_default_dtype()
    chainrule.float32
    """
    return getattr(_state, "default", float32)


def set_default_dtype(d):
    """Set the default floating dtype: float16, bfloat16, float32 or float64.

    >>> import chainrule as cr
    >>> cr.set_default_dtype(cr.float64); cr.tensor([1.5]).dtype
    chainrule.float64
    >>> cr.set_default_dtype(cr.float32)
    """
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _state.default = d


def _promote_same_priority(a, b):
    """Torch's promotion between two dtypes of equal priority."""
    if a is b:
        return a
    if a.category != b.category:
        high, low = (a, b) if a.category > b.category else (b, a)
        if high.category == _COMPLEX and low.category == _FLOAT:
            # the complex type whose parts hold both: float64 with complex64 is complex128
            return _promote_same_priority(high.to_real(), low).to_complex()
        return high
    if a.category == _FLOAT:
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    if a.category == _COMPLEX:
        return a if a.itemsize >= b.itemsize else b
    if a.category == _INT:
        if a.name in _LIMITED_UNSIGNED or b.name in _LIMITED_UNSIGNED:
            raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                               f"attempted to promote {_SCALAR_TYPE_NAMES[a.name]} and "
                               f"{_SCALAR_TYPE_NAMES[b.name]}")
        if a.is_signed != b.is_signed:   # uint8 with a signed type
            signed = a if a.is_signed else b
            return signed if signed.itemsize > 1 else int16
        return a if a.itemsize >= b.itemsize else b
    return a


def can_cast(from_, to):
    """Whether an op may write a ``from_`` result into a ``to`` tensor: no cast to a
    lower category (complex to real, floating to integral, a number to bool); within a
    category any size goes, unlike NumPy's "same_kind" (uint8 += int8 is allowed).

    >>> import chainrule as cr
    >>> cr.can_cast(cr.int16, cr.uint8), cr.can_cast(cr.float32, cr.int64)
    (True, False)
    """
    return to_dtype(from_).category <= to_dtype(to).category


def promote_types(type1, type2):
    """``chainrule.promote_types``: the smallest dtype both promote to.

    >>> import chainrule as cr
    >>> cr.promote_types(cr.int32, cr.float16)
    chainrule.float16
    """
    return _promote_same_priority(to_dtype(type1), to_dtype(type2))


def scalar_category(value):
    if isinstance(value, _b.bool):
        return _BOOL
    if isinstance(value, _b.int):
        return _INT
    if isinstance(value, _b.float):
        return _FLOAT
    if isinstance(value, _b.complex):
        return _COMPLEX
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def default_for_category(category, like=None):
    if category == _FLOAT:
        return get_default_dtype()
    if category == _COMPLEX:
        if like is not None and like.category == _FLOAT:
            return like.to_complex()
        return get_default_dtype().to_complex()
    return int64 if category == _INT else bool_


def result_type(dims_dtypes, zero_dim_dtypes, scalars):
    """Torch's rule: tensors with dims outrank 0-d tensors, which outrank Python
    scalars; a lower-priority operand only counts when its category is higher.

    dims_dtypes / zero_dim_dtypes: dtypes of operands; scalars: Python numbers.
    """
    result = _promote_all(dims_dtypes)
    zero_dim = _promote_all(zero_dim_dtypes)
    if result is None or (zero_dim is not None and zero_dim.category > result.category):
        # a complex 0-d operand keeps the precision of floating tensors with dims, as
        # a complex Python number does (float32 tensor + complex128 0-d: complex64)
        complex_over_float = (result is not None and result.category == _FLOAT and
                              zero_dim.category == _COMPLEX)
        result = result.to_complex() if complex_over_float else zero_dim
    for s in scalars:
        cat = scalar_category(s)
        if result is None:
            result = default_for_category(cat)
        elif cat > result.category:
            result = default_for_category(cat, result)
    return result


def result_type_name(dims_dtypes, zero_dim_dtypes, scalars):
    """The reference's scalar type name of ``result_type``'s answer: ComplexHalf where
    a complex operand of lower priority meets float16, for which complex64 stands in
    (NumPy has no complex32; Note [ComplexHalf stands in as complex64]).

    >>> import chainrule as cr
    >>> from chainrule._dtypes import result_type_name
    >>> result_type_name([cr.float16], [], [1j]), result_type_name([cr.float16, cr.complex64], [], [])
    ('ComplexHalf', 'ComplexFloat')
    """
    result = result_type(dims_dtypes, zero_dim_dtypes, scalars)
    real_zero = [d for d in zero_dim_dtypes if not (dims_dtypes and d.is_complex)]
    real = result_type(dims_dtypes, real_zero,
                       [s for s in scalars if not isinstance(s, builtins_complex)])
    if result is complex64 and real is float16:
        return "ComplexHalf"
    return scalar_type_name(result.np)


def _promote_all(dtypes):
    result = None
    for d in dtypes:
        result = d if result is None else _promote_same_priority(result, d)
    return result
