"""``biject_to`` and ``transform_to``: registries mapping a constraint to a transform
from unconstrained reals onto it (bijective for ``biject_to``, e.g. for HMC; merely
onto for ``transform_to``, e.g. for optimising constrained parameters), as the
reference's ``torch.distributions.constraint_registry``."""
import numbers

from . import constraints
from . import transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint types (or instances' types) to factories ``fn(constraint)`` of
    transforms.

    >>> import chainrule as cr
    >>> from chainrule.distributions import constraints, transform_to
    >>> transform_to(constraints.positive)(cr.tensor(0.0))
    tensor(1.)
    """

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Register ``factory`` for ``constraint`` (a Constraint subclass or instance);
        usable as a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(constraint):
    return transforms.identity_transform


def _independent_biject(constraint):
    base = biject_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


def _independent_transform(constraint):
    base = transform_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


def _greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    unit = (isinstance(lower, numbers.Number) and lower == 0 and
            isinstance(upper, numbers.Number) and upper == 1)
    if unit:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(lower, upper - lower)])


def _register_both(constraint_type, factory):
    biject_to.register(constraint_type, factory)
    transform_to.register(constraint_type, factory)


for _type in (constraints._Real,):
    _register_both(_type, _real)
biject_to.register(constraints._IndependentConstraint, _independent_biject)
transform_to.register(constraints._IndependentConstraint, _independent_transform)
for _type in (constraints._GreaterThan, constraints._GreaterThanEq):
    _register_both(_type, _greater_than)
_register_both(constraints._LessThan, _less_than)
for _type in (constraints._Interval, constraints._HalfOpenInterval):
    _register_both(_type, _interval)
biject_to.register(constraints._Simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda c: transforms.SoftmaxTransform())
transform_to.register(constraints._LowerCholesky, lambda c: transforms.LowerCholeskyTransform())
transform_to.register(constraints._PositiveDefinite,
                      lambda c: transforms.PositiveDefiniteTransform())
transform_to.register(constraints._PositiveSemidefinite,
                      lambda c: transforms.PositiveDefiniteTransform())
biject_to.register(constraints._Cat, lambda c: transforms.CatTransform(
    [biject_to(part) for part in c.cseq], c.dim, c.lengths))
transform_to.register(constraints._Cat, lambda c: transforms.CatTransform(
    [transform_to(part) for part in c.cseq], c.dim, c.lengths))
biject_to.register(constraints._Stack, lambda c: transforms.StackTransform(
    [biject_to(part) for part in c.cseq], c.dim))
transform_to.register(constraints._Stack, lambda c: transforms.StackTransform(
    [transform_to(part) for part in c.cseq], c.dim))
biject_to.register(constraints._CorrCholesky, lambda c: transforms.CorrCholeskyTransform())
transform_to.register(constraints._CorrCholesky, lambda c: transforms.CorrCholeskyTransform())
