"""The Distribution base class: batch and event shapes, argument and value validation,
lazily computed parameters, and the reference's repr and messages.

Note [distribution validation]
    As in the reference, parameters are checked against ``arg_constraints`` when a
    distribution is made and values against ``support`` in ``log_prob`` (and the
    like), unless ``validate_args=False`` or ``Distribution.set_default_validate_args(
    False)``. A failed check raises ValueError naming the parameter, its shape, the
    distribution and the constraint.
"""
from .. import _factories, _grad_mode
from .._size import Size
from .._tensor import Tensor
from . import constraints

_DEFAULT_VALIDATE = [True]


class lazy_property:
    """A property computed on first use and then stored on the instance (so the repr,
    which lists the parameters present, shows it from then on)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with _grad_mode.enable_grad():
            value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


def broadcast_all(*values):
    """Tensors and numbers broadcast to one shape (numbers as tensors of the default
    dtype, or of the tensors' dtype)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype, device = (tensors[0].dtype, tensors[0].device) if tensors else (None, None)
    values = [v if isinstance(v, Tensor) else _factories.tensor(float(v), dtype=dtype,
                                                                device=device)
              for v in values]
    from .._ops import FUNCTIONS
    shape = FUNCTIONS["broadcast_shapes"](*(tuple(v.shape) for v in values))
    # a tensor that has the shape already is returned as it is (no expand node)
    return [v if tuple(v.shape) == tuple(shape) else v.expand(tuple(shape)) for v in values]


class Distribution:
    """Base class of probability distributions (batch of independent ones, each over
    events of ``event_shape``).

    >>> import chainrule as cr
    >>> d = cr.distributions.Normal(cr.zeros(3), 1.0)
    >>> d.batch_shape, d.event_shape
    (chainrule.Size([3]), chainrule.Size([]))
    """
    has_rsample = False
    has_enumerate_support = False
    arg_constraints = {}
    support = None
    _expand_attrs = ()        # tensors besides the parameters that carry the batch shape

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument/value validation on or off for distributions made afterwards."""
        if value not in (True, False):
            raise ValueError
        _DEFAULT_VALIDATE[0] = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        self._validate_args = _DEFAULT_VALIDATE[0] if validate_args is None else validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self):
        for name, constraint in self.arg_constraints.items():
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None),
                                                        lazy_property):
                continue                             # not given, derived from another
            value = getattr(self, name)
            valid = constraint.check(value)
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter {name} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=Size()):
        """A sample without gradient (``rsample`` where the distribution has one)."""
        with _grad_mode.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError

    def sample_n(self, n):
        return self.sample(Size((n,)))

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim = len(self._event_shape)
        if tuple(value.shape[len(value.shape) - event_dim:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{tuple(value.shape)} vs {tuple(self._event_shape)}.")
        actual, expected = tuple(value.shape), tuple(self._batch_shape + self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{Size(actual)} vs {Size(expected)}.")
        support = self.support
        if support is not None and not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)})"
                f" to be within the support ({support!r}) of the distribution {self!r}, but "
                f"found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        """A new uninitialised instance for ``expand`` (``_instance`` when a subclass
        passes one); a subclass with its own ``__init__`` must define ``expand``."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                f"__init__ method must also define a custom .expand() method.")
        return object.__new__(type(self)) if _instance is None else _instance

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape``."""
        new = object.__new__(type(self))
        shape = Size(batch_shape)
        for name in (*self.arg_constraints, *self._expand_attrs):
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(
                    tuple(shape) + tuple(self.__dict__[name].shape[len(self._batch_shape):]))
        for key, value in self.__dict__.items():
            if isinstance(value, Distribution) and value.batch_shape == self._batch_shape:
                value = value.expand(shape)          # a component of the same batch
            new.__dict__.setdefault(key, value)
        new._batch_shape = shape
        return new

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(f"{k}: {_param_text(self.__dict__[k])}" for k in names)
        return f"{type(self).__name__}({shown})"


def _param_text(value):
    return f"{value}" if value.numel() == 1 else f"{value.size()}"


class ExponentialFamily(Distribution):
    """Marker base of exponential-family distributions (for KL's fallback message)."""
