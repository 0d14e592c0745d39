"""``chainrule._foreach_*``: the reference's list-at-a-time ops, as hand-written
optimizers and EMA updates call them (``torch._foreach_mul_(ema, 0.99)``). Each applies
the elementwise op (or its in-place method) to every tensor of the list, so dtypes,
errors and autograd are the op's own. Out-of-place forms return a tuple, in-place forms
the list they were given."""
from .._tensor import Tensor
from ._common import FUNCTIONS as F

FOREACH = {}

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow")
# a number meeting maximum/minimum is a clamp (the reference's scalar overloads)
_SCALAR_FORM = {"maximum": "clamp_min", "minimum": "clamp_max"}


def _tensors(self, *others):
    """The reference's checks: a non-empty list, and lists of one length."""
    if not self:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in others:
        if len(other) != len(self):
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                               f"{len(self)} and {len(other)}")
    return self


def _per_tensor(other, n):
    """``other`` (a number, a 0-d tensor, a list of numbers or of tensors) as one
    operand per tensor of the list."""
    if isinstance(other, (list, tuple)):
        if len(other) != n:
            if other and isinstance(other[0], Tensor):
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                                   f"{n} and {len(other)}")
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other)
    if isinstance(other, Tensor) and other.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                           f"dimensions and {other.numel()} elements.")
    if not isinstance(other, (Tensor, bool, int, float, complex)):
        raise TypeError(f"_foreach op received an invalid combination of arguments - got "
                        f"(list, {type(other).__name__})")
    return [other] * n


def _scalars(value, n):
    """addcmul/addcdiv's ``value``/``scalars``: a number, a list, or a 1-D tensor."""
    if isinstance(value, Tensor):
        value = value.tolist()
    return _per_tensor(value, n)


def _binary_call(name, t, o, kwargs):
    if name in _SCALAR_FORM and not isinstance(o, Tensor):
        return F[_SCALAR_FORM[name]](t, o)
    return F[name](t, o, **kwargs)


def _register(name, fn, example):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The reference's ``torch.{name}``: the op on every tensor of the list.\n\n"
                  f"    >>> import chainrule as cr\n"
                  f"    >>> xs = [cr.ones(2), cr.ones(3)]\n"
                  f"    >>> len(cr.{name}({example}))\n    2\n")
    FOREACH[name] = fn


def _unary(op):
    def out_of_place(self):
        return tuple(F[op](t) for t in _tensors(self))

    def inplace(self):
        for t in _tensors(self):
            getattr(t, op + "_")()
        return self
    _register(f"_foreach_{op}", out_of_place, "xs")
    _register(f"_foreach_{op}_", inplace, "xs")


def _binary(op):
    def out_of_place(self, other, **kwargs):
        others = _per_tensor(other, len(_tensors(self)))
        return tuple(_binary_call(op, t, o, kwargs) for t, o in zip(self, others))

    def inplace(self, other, **kwargs):
        others = _per_tensor(other, len(_tensors(self)))
        for t, o in zip(self, others):
            method = getattr(Tensor, op + "_", None)
            if method is None or (op in _SCALAR_FORM and not isinstance(o, Tensor)):
                t.copy_(_binary_call(op, t, o, kwargs))
            else:
                method(t, o, **kwargs)
        return self
    _register(f"_foreach_{op}", out_of_place, "xs, 2.0")
    _register(f"_foreach_{op}_", inplace, "xs, 2.0")


for _op in _UNARY:
    _unary(_op)
for _op in _BINARY:
    _binary(_op)
_scalar_base_pow = FOREACH["_foreach_pow"]


def _foreach_pow(self, exponent):
    if isinstance(self, (int, float, complex)):        # a number raised to each tensor
        return tuple(F["pow"](self, t) for t in _tensors(exponent))
    return _scalar_base_pow(self, exponent)


_register("_foreach_pow", _foreach_pow, "2.0, xs")


def _ternary(op):
    def out_of_place(self, tensor1, tensor2, value=1):
        _tensors(self, tensor1, tensor2)
        values = _scalars(value, len(self))
        return tuple(F[op](t, a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, values))

    def inplace(self, tensor1, tensor2, value=1):
        _tensors(self, tensor1, tensor2)
        for t, a, b, v in zip(self, tensor1, tensor2, _scalars(value, len(self))):
            getattr(t, op + "_")(a, b, value=v)
        return self
    _register(f"_foreach_{op}", out_of_place, "xs, xs, xs")
    _register(f"_foreach_{op}_", inplace, "xs, xs, xs")


_ternary("addcmul")
_ternary("addcdiv")


def _foreach_lerp(self, tensors1, weight):
    _tensors(self, tensors1)
    return tuple(F["lerp"](t, e, w) for t, e, w in zip(self, tensors1,
                                                        _per_tensor(weight, len(self))))


def _foreach_lerp_(self, tensors1, weight):
    _tensors(self, tensors1)
    for t, e, w in zip(self, tensors1, _per_tensor(weight, len(self))):
        t.lerp_(e, w)
    return self


def _foreach_norm(self, ord=2, dtype=None):
    from ..linalg import vector_norm
    return tuple(vector_norm(t, ord, dtype=dtype) for t in _tensors(self))


def _foreach_max(self):
    return tuple(t.max() for t in _tensors(self))


def _foreach_zero_(self):
    for t in _tensors(self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    for t, s in zip(_tensors(self, src), src):
        t.copy_(s)
    return self


def _foreach_clone(self):
    return tuple(t.clone() for t in _tensors(self))


for _fn, _example in ((_foreach_lerp, "xs, xs, 0.5"), (_foreach_lerp_, "xs, xs, 0.5"),
                      (_foreach_norm, "xs"), (_foreach_max, "xs"), (_foreach_zero_, "xs"),
                      (_foreach_copy_, "xs, xs"), (_foreach_clone, "xs")):
    _register(_fn.__name__, _fn, _example)
