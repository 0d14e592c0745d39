"""Invertible (or at least computable) maps between constrained spaces with their
log-absolute-Jacobian determinants, as the reference's ``torch.distributions.transforms``:
the building blocks of TransformedDistribution and of ``biject_to``/``transform_to``.

Note [transform event dims]
    A transform acts on the rightmost ``domain.event_dim`` dimensions of its input as
    one event and gives events of ``codomain.event_dim`` dimensions; its
    log_abs_det_jacobian has the input's shape less those event dimensions. A
    composition keeps the largest event rank any part needs, so each part's log-det is
    summed over the dimensions the composition treats as event but the part does not.
"""
import math
import numbers
import weakref

import numpy as np

from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from .._tensor import Tensor
from . import constraints
from .utils import _sum_rightmost

F = FUNCTIONS

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform",
           "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
           "identity_transform"]


class Transform:
    """An invertible map ``y = t(x)`` with ``t.inv(y)`` and
    ``t.log_abs_det_jacobian(x, y)``; ``cache_size=1`` remembers the last pair so the
    inverse of a value it produced is exact.

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> t = cr.distributions.transforms.ExpTransform()
    >>> t(cr.tensor(0.0)), t.inv(cr.tensor(1.0)), t.log_abs_det_jacobian(cr.tensor(2.0), None)
    (tensor(1.), tensor(0.), tensor(2.))
    """
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (kept weakly, made anew when collected)."""
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        """+1 or -1: whether the map increases or decreases (bijective 1-d maps only)."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__ + "()"

    def forward_shape(self, shape):
        """The output shape for an input of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The input shape for an output of ``shape``."""
        return shape


class _Parameterless(Transform):
    """A transform without parameters: all instances of its class are equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = Transform.__hash__


class _InverseTransform(Transform):
    """The inverse of a transform (its ``inv``), sharing its cache."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    domain = constraints.dependent_property(lambda self: self._inv.codomain)
    codomain = constraints.dependent_property(lambda self: self._inv.domain)
    bijective = property(lambda self: self._inv.bijective)
    sign = property(lambda self: self._inv.sign)
    inv = property(lambda self: self._inv)

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = Transform.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """``parts`` applied in order (Note [transform event dims]).

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> from chainrule.distributions.transforms import AffineTransform, ExpTransform
    >>> t = ComposeTransform([AffineTransform(1.0, 2.0), ExpTransform()])
    >>> round(t(cr.tensor(0.0)).item(), 4), round(t.log_abs_det_jacobian(cr.tensor(0.0), t(cr.tensor(0.0))).item(), 4)
    (2.7183, 1.6931)
    """

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = Transform.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):          # widest event rank seen walking back
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim,
                            part.domain.event_dim)
        return _widen(self.parts[0].domain, event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim,
                            part.codomain.event_dim)
        return _widen(self.parts[-1].codomain, event_dim)

    bijective = property(lambda self: all(p.bijective for p in self.parts))

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _factories.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total, event_dim = 0, self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = part.log_abs_det_jacobian(a, b)
            total = total + _sum_rightmost(term, event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        body = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {body}\n)"


def _widen(constraint, event_dim):
    """``constraint`` reinterpreted over ``event_dim`` dimensions (it has at most that)."""
    if event_dim > constraint.event_dim:
        return constraints.independent(constraint, event_dim - constraint.event_dim)
    return constraint


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with its rightmost ``reinterpreted_batch_ndims`` batch
    dimensions treated as event dimensions (the log-det is summed over them).

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> t = IndependentTransform(ExpTransform(), 1)
    >>> t.log_abs_det_jacobian(cr.tensor([1.0, 2.0]), None)
    tensor(3.)
    """

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    domain = constraints.dependent_property(is_discrete=False)(
        lambda self: constraints.independent(self.base_transform.domain,
                                             self.reinterpreted_batch_ndims))
    codomain = constraints.dependent_property(is_discrete=False)(
        lambda self: constraints.independent(self.base_transform.codomain,
                                             self.reinterpreted_batch_ndims))
    bijective = property(lambda self: self.base_transform.bijective)
    sign = property(lambda self: self.base_transform.sign)

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dimensions to ``out_shape`` (log-det 0).

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> ReshapeTransform((4,), (2, 2))(cr.zeros(3, 4)).shape
    chainrule.Size([3, 2, 2])
    """
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    domain = constraints.dependent_property(
        lambda self: constraints.independent(constraints.real, len(self.in_shape)))
    codomain = constraints.dependent_property(
        lambda self: constraints.independent(constraints.real, len(self.out_shape)))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.new_zeros(batch)

    def forward_shape(self, shape):
        return _reshape_shape(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return _reshape_shape(shape, self.out_shape, self.in_shape)


def _reshape_shape(shape, src, dst):
    if len(shape) < len(src):
        raise ValueError("Too few dimensions on input")
    cut = len(shape) - len(src)
    if tuple(shape[cut:]) != tuple(src):
        raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {tuple(src)}")
    return Size(tuple(shape[:cut]) + tuple(dst))


class ExpTransform(_Parameterless):
    """``y = exp(x)``."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on positive numbers.

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> PowerTransform(cr.tensor(2.0))(cr.tensor(3.0))
    tensor(9.)
    """
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _broadcast(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    sign = property(lambda self: self.exponent.sign())

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return Size(F["broadcast_shapes"](tuple(shape), tuple(self.exponent.shape)))

    inverse_shape = forward_shape


def _broadcast(*values):
    from .distribution import broadcast_all
    return broadcast_all(*values)


def _finfo(dtype):
    return np.finfo(dtype.np if hasattr(dtype, "np") else np.float32)


def _clipped_sigmoid(x):
    """sigmoid kept inside (tiny, 1 - eps) of the dtype, so its inverse stays finite."""
    info = _finfo(x.dtype)
    return F["sigmoid"](x).clamp(min=float(info.tiny), max=1.0 - float(info.eps))


class SigmoidTransform(_Parameterless):
    """``y = sigmoid(x)`` onto the unit interval."""
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        info = _finfo(y.dtype)
        y = y.clamp(min=float(info.tiny), max=1.0 - float(info.eps))
        return y.log() - F["log1p"](-y)

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x) - _softplus(x)


def _softplus(x):
    from ..nn import functional
    return functional.softplus(x)


class SoftplusTransform(_Parameterless):
    """``y = log(1 + exp(x))`` onto the positive numbers."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        return (-F["expm1"](-y)).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x)


class TanhTransform(_Parameterless):
    """``y = tanh(x)`` onto (-1, 1); the log-det written stably for large ``|x|``."""
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return F["atanh"](y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class AbsTransform(_Parameterless):
    """``y = |x|`` (not bijective: the inverse gives the positive root)."""
    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x``, over events of ``event_dim`` dimensions.

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> t = AffineTransform(1.0, cr.tensor([2.0, -3.0]), event_dim=1)
    >>> t(cr.ones(2)), t.log_abs_det_jacobian(cr.ones(2), None)
    (tensor([ 3., -2.]), tensor(1.7918))
    """
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    event_dim = property(lambda self: self._event_dim)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return _widen(constraints.real, self._event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return _widen(constraints.real, self._event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        return _same(self.loc, other.loc) and _same(self.scale, other.scale)

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Real):
            result = _factories.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = result.reshape(tuple(result.shape[:result.ndim - self._event_dim]) + (-1,))
            result = result.sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return Size(F["broadcast_shapes"](tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                          tuple(getattr(self.scale, "shape", ()))))

    inverse_shape = forward_shape


def _same(a, b):
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    return bool((_as_tensor(a) == _as_tensor(b)).all())


def _as_tensor(v):
    return v if isinstance(v, Tensor) else _factories.tensor(v)


class SoftmaxTransform(_Parameterless):
    """Unconstrained vectors to the simplex by softmax (not bijective; the inverse is
    the log)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(_Parameterless):
    """Unconstrained vectors of length K to the simplex in K+1 dimensions by stick
    breaking (bijective, with a log-det).

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> StickBreakingTransform()(cr.zeros(2))
    tensor([0.3333, 0.3333, 0.3333])
    """
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    @staticmethod
    def _log_offset(k, like):
        """log(K+1-i) for i = 1..K: centres the breaks so x = 0 gives the uniform point."""
        return (k + 1 - _factories.arange(1, k + 1, dtype=like.dtype, device=like.device)).log()

    def _call(self, x):
        z = _clipped_sigmoid(x - self._log_offset(x.shape[-1], x))
        remaining = (1 - z).cumprod(-1)
        ones = x.new_ones(tuple(x.shape[:-1]) + (1,))
        return F["cat"]([z, ones], -1) * F["cat"]([ones, remaining], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        tiny = float(_finfo(y.dtype).tiny)
        left = (1 - y_crop.cumsum(-1)).clamp(min=tiny)
        offset = (y.shape[-1] - _factories.arange(1, y.shape[-1], dtype=y.dtype, device=y.device)).log()
        return y_crop.log() - left.log() + offset

    def log_abs_det_jacobian(self, x, y):
        from ..nn import functional
        x = x - self._log_offset(x.shape[-1], x)
        return (-x + functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(_Parameterless):
    """Unconstrained square matrices to lower-triangular ones with a positive diagonal
    (the strict lower part kept, the diagonal exponentiated)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_Parameterless):
    """Unconstrained square matrices to positive-definite ones (``L L^T`` of
    LowerCholeskyTransform's ``L``)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.mT

    def _inverse(self, y):
        from .. import linalg
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


class CorrCholeskyTransform(_Parameterless):
    """Unconstrained vectors of length D(D-1)/2 to Cholesky factors of D x D
    correlation matrices: tanh gives the partial correlations, which fill the strict
    lower triangle row by row, each row then scaled (stick breaking on squares) so it
    has unit norm.

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> L = CorrCholeskyTransform()(cr.tensor([0.3, -0.2, 0.5]))
    >>> L.shape, [round(v, 6) for v in (L @ L.mT).diagonal().tolist()]
    (chainrule.Size([3, 3]), [1.0, 1.0, 1.0])
    """
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        from .utils import vec_to_tril_matrix
        eps = float(_finfo(x.dtype).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        remaining = (1 - r.pow(2)).sqrt().cumprod(-1)    # sqrt of what each row has left
        ones = r.new_ones(tuple(r.shape[:-1]) + (1,))
        scale = F["cat"]([ones, remaining[..., :-1]], -1)
        return (r + _factories.eye(r.shape[-1], dtype=r.dtype, device=r.device)) * scale

    def _inverse(self, y):
        from .utils import tril_matrix_to_vec
        left = 1 - (y * y).cumsum(-1)
        ones = y.new_ones(tuple(y.shape[:-1]) + (1,))
        left_before = F["cat"]([ones, left[..., :-1]], -1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_before, diag=-1).sqrt()
        return (F["log1p"](t) - F["log1p"](-t)) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        from .utils import tril_matrix_to_vec
        left = 1 - (y * y).cumsum(-1)
        stick_breaking = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh = -2 * (x + _softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


class CatTransform(Transform):
    """``tseq[i]`` applied to the slice of length ``lengths[i]`` along ``dim``.

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> t = CatTransform([ExpTransform(), identity_transform], dim=0, lengths=[1, 1])
    >>> t(cr.tensor([0.0, 5.0]))
    tensor([1., 5.])
    """

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("lengths and transforms must have the same length")
        self.dim = dim

    event_dim = property(lambda self: max(t.event_dim for t in self.transforms))
    length = property(lambda self: sum(self.lengths))
    bijective = property(lambda self: all(t.bijective for t in self.transforms))
    domain = constraints.dependent_property(lambda self: constraints.cat(
        [t.domain for t in self.transforms], self.dim, self.lengths))
    codomain = constraints.dependent_property(lambda self: constraints.cat(
        [t.codomain for t in self.transforms], self.dim, self.lengths))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, x):
        if not -x.dim() <= self.dim < x.dim():
            raise ValueError(f"dim {self.dim} out of range for a {x.dim()}-d input")
        if x.size(self.dim) != self.length:
            raise ValueError(f"size {x.size(self.dim)} along dim {self.dim} does not match "
                             f"the total length {self.length}")
        starts = np.cumsum([0] + self.lengths[:-1])
        return [x.narrow(self.dim, int(s), n) for s, n in zip(starts, self.lengths)]

    def _call(self, x):
        return F["cat"]([t(v) for t, v in zip(self.transforms, self._pieces(x))], self.dim)

    def _inverse(self, y):
        return F["cat"]([t.inv(v) for t, v in zip(self.transforms, self._pieces(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        parts = []
        for t, xs, ys in zip(self.transforms, self._pieces(x), self._pieces(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            parts.append(term)
        dim = self.dim if self.dim < 0 else self.dim - x.dim()
        if dim + self.event_dim >= 0:      # dim is inside the event: the pieces add up
            return sum(parts[1:], parts[0])
        return F["cat"](parts, dim + self.event_dim)


class StackTransform(Transform):
    """``tseq[i]`` applied to the slice ``i`` along ``dim``.

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> t = StackTransform([ExpTransform(), identity_transform], dim=0)
    >>> t(cr.tensor([0.0, 5.0]))
    tensor([1., 5.])
    """

    def __init__(self, tseq, dim=0, cache_size=0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = list(tseq), dim

    bijective = property(lambda self: all(t.bijective for t in self.transforms))
    domain = constraints.dependent_property(lambda self: constraints.stack(
        [t.domain for t in self.transforms], self.dim))
    codomain = constraints.dependent_property(lambda self: constraints.stack(
        [t.codomain for t in self.transforms], self.dim))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        if z.size(self.dim) != len(self.transforms):
            raise ValueError(f"size {z.size(self.dim)} along dim {self.dim} does not match "
                             f"the number of transforms {len(self.transforms)}")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        return F["stack"]([t(v) for t, v in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return F["stack"]([t.inv(v) for t, v in zip(self.transforms, self._slices(y))],
                          self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [t.log_abs_det_jacobian(a, b) for t, a, b in
                 zip(self.transforms, self._slices(x), self._slices(y))]
        return F["stack"](terms, self.dim)


class CumulativeDistributionTransform(Transform):
    """A distribution's cdf as a transform onto the unit interval (its log-det is the
    log-density).

    >>> import chainrule as cr
    >>> from chainrule.distributions.transforms import *
    >>> t = CumulativeDistributionTransform(cr.distributions.Normal(0.0, 1.0))
    >>> t(cr.tensor(0.0))
    tensor(0.5000)
    """
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    domain = property(lambda self: self.distribution.support)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
