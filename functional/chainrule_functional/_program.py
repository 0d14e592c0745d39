"""``chainrule.func``'s program-level helpers: ``linearize``, ``functionalize`` and
``debug_unwrap``."""
import functools

import chainrule as cr
from chainrule._batched import BatchedTensor, unwrap_all
from chainrule._vmap import structure_repr

from ._common import forward_ad

_REMOVE_OPTIONS = ("mutations", "mutations_and_views")


def linearize(func, *primals):
    """(``func(*primals)``, ``jvp_fn``): ``jvp_fn(*tangents)`` is the Jacobian-vector
    product of ``func`` at ``primals`` along ``tangents`` (the same structure, shapes
    and dtypes as ``primals``).

    ``jvp_fn`` evaluates the product in forward mode at the fixed primals each time it
    is called: the same values as the reference, which instead traces the linear
    program once (chainrule runs eagerly; it has no graph compiler to trace into).

    >>> import chainrule as cr
    >>> from chainrule.func import linearize
    >>> out, jvp_fn = linearize(cr.sin, cr.tensor([0.0, 1.0]))
    >>> [round(v, 4) for v in jvp_fn(cr.tensor([1.0, 1.0])).tolist()]
    [1.0, 0.5403]
    """
    from .func import _flatten, jvp
    fwAD = forward_ad()
    if fwAD is not None:
        fwAD.refuse_user_level()
    output = func(*primals)
    p_leaves, p_spec = _flatten(primals)

    def jvp_fn(*tangents):
        t_leaves, t_spec = _flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {structure_repr(tangents)} to have the "
                               f"same argspec as the primals {structure_repr(primals)}")
        for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
            _check_tangent(i, p, t)
        # the reference's linearize runs forward AD itself, not its jvp transform (a
        # custom Function is then not checked as Note [custom Functions under
        # transforms] says)
        return jvp.__wrapped__(func, primals, tangents)[1]

    return output, jvp_fn


def _check_tangent(i, primal, tangent):
    for what in ("shape", "dtype"):
        got, want = getattr(tangent, what), getattr(primal, what)
        if got != want:
            raise RuntimeError(f"tangent:{i} with {what} {got} in flattened pytree doesn't "
                               f"match the {what} {want} of the corresponding primal.")


def functionalize(func, *, remove="mutations"):
    """``func`` as a function without mutations or views (``remove``). Eager chainrule
    has no program to rewrite; the reference's functionalized function gives the
    same outputs and the same visible input mutations as ``func``, so that is what
    this returns, after checking ``remove``.

    >>> import chainrule as cr
    >>> from chainrule.func import functionalize
    >>> def f(x):
    ...     y = x.clone()
    ...     y.add_(1)
    ...     return y
    >>> functionalize(f)(cr.ones(2)).tolist()
    [2.0, 2.0]
    """
    if remove not in _REMOVE_OPTIONS:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n     remove='mutations': all inplace and "
            "out= operators will be removed from the program, and replaced with their "
            "out-of-place equivalents.\n     remove='mutations_and_views': In addition to "
            "the above, all aliasing operators {view} will be replaced with their "
            "non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)

    return functionalized


def debug_unwrap(tensor, *, recurse=True):
    """The physical tensor under a ``vmap`` wrapper (all levels, or the outermost one
    with ``recurse=False``); any other tensor is returned as is. For debugging.

    >>> import chainrule as cr
    >>> from chainrule.func import debug_unwrap, vmap
    >>> vmap(lambda t: debug_unwrap(t).shape, out_dims=None)(cr.ones(4, 3))
    (4, 3)
    """
    if not isinstance(tensor, BatchedTensor):
        return tensor
    return unwrap_all(tensor)[0] if recurse else tensor._value
