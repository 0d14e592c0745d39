"""Python operators for device-array types (Note [device arrays]): ``a + b`` is
``np.add(a, b)``, so the array's ``__array_ufunc__`` runs it, and ``a += b`` writes
through ``out=``. The meta array and chainrule-cuda's DeviceArray install the same
table, each with its own way of calling a binary ufunc."""
import numpy as np

ARITHMETIC = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
              ("truediv", np.true_divide), ("floordiv", np.floor_divide),
              ("mod", np.remainder), ("pow", np.power), ("matmul", np.matmul),
              ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor),
              ("lshift", np.left_shift), ("rshift", np.right_shift)]
COMPARISONS = [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
               ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]


def plain_binary_operator(ufunc, reflected=False):
    """``a op b`` as ``ufunc(a, b)`` (``ufunc(b, a)`` for the reflected form)."""
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


def _inplace_operator(ufunc):
    def op(self, other):
        ufunc(self, other, out=self)
        return self
    return op


def install_operators(cls, binary_operator=plain_binary_operator):
    """Give ``cls`` the arithmetic, bitwise and comparison operators, made by
    ``binary_operator(ufunc, reflected)``, and the in-place forms.

    >>> from chainrule._array_operators import install_operators
    >>> class Box:
    ...     def __init__(self, v): self.v = v
    ...     def __array_ufunc__(self, ufunc, method, *args, **kwargs):
    ...         return ufunc(*[a.v if isinstance(a, Box) else a for a in args]).item()
    >>> install_operators(Box)
    >>> Box(2) + 3, 3 - Box(2), Box(2) < 3
    (5, 1, True)
    """
    for name, ufunc in ARITHMETIC:
        setattr(cls, f"__{name}__", binary_operator(ufunc))
        setattr(cls, f"__r{name}__", binary_operator(ufunc, True))
        setattr(cls, f"__i{name}__", _inplace_operator(ufunc))
    for name, ufunc in COMPARISONS:
        setattr(cls, f"__{name}__", binary_operator(ufunc))
