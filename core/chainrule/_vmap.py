"""``chainrule.vmap``: map a function over a dimension of its inputs.

Each batch entry runs as its own call on slices (``select`` along the mapped dim,
differentiable, so gradients flow through vmap), and the outputs are stacked along
``out_dims``. The results equal a vectorised evaluation's; speed is one call per
entry. Inputs and outputs may be tensors or (nested) tuples, lists and dicts of them;
``in_dims`` / ``out_dims`` is an int or None for all, or a structure matching them.
"""
from ._tensor import Tensor


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorise ``func`` over dimension ``in_dims`` of its inputs.

    >>> import chainrule as cr
    >>> batched_dot = cr.vmap(cr.dot)
    >>> batched_dot(cr.tensor([[1., 2.], [3., 4.]]), cr.tensor([[1., 1.], [2., 0.]])).tolist()
    [3.0, 6.0]
    >>> cr.vmap(lambda x, w: x * w, in_dims=(0, None))(cr.ones(3, 2), cr.tensor([2., 3.])).shape
    chainrule.Size([3, 2])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapped(*args, **kwargs):
        dims = _broadcast_dims(in_dims if isinstance(in_dims, tuple) else
                               (in_dims,) * len(args), args, _name(func))
        size = _batch_size(args, dims, _name(func))
        results = [func(*_take(args, dims, i), **kwargs) for i in range(size)]
        return _stack_outputs(results, out_dims, _name(func))
    return wrapped


def _name(func):
    return getattr(func, "__name__", repr(func))


def _broadcast_dims(dims, values, name):
    """Expand ``dims`` to the structure of ``values`` (an int or None covers a subtree)."""
    if dims is None or isinstance(dims, int):
        return _map(lambda v: dims, values)
    if isinstance(values, (tuple, list)) and isinstance(dims, (tuple, list)) and \
            len(dims) == len(values):
        return type(values)(_broadcast_dims(d, v, name) for d, v in zip(dims, values))
    if isinstance(values, dict) and isinstance(dims, dict) and dims.keys() == values.keys():
        return {k: _broadcast_dims(dims[k], values[k], name) for k in values}
    raise ValueError(f"vmap({name}, in_dims={dims!r}, ...)(<inputs>): in_dims is not "
                     "compatible with the structure of `inputs`.")


def _map(fn, values):
    if isinstance(values, (tuple, list)):
        return type(values)(_map(fn, v) for v in values)
    if isinstance(values, dict):
        return {k: _map(fn, v) for k, v in values.items()}
    return fn(values)


def _leaves(values, dims):
    if isinstance(values, (tuple, list)):
        for v, d in zip(values, dims):
            yield from _leaves(v, d)
    elif isinstance(values, dict):
        for k in values:
            yield from _leaves(values[k], dims[k])
    else:
        yield values, dims


def _batch_size(args, dims, name):
    sizes = []
    for value, dim in _leaves(args, dims):
        if dim is None:
            continue
        if not isinstance(value, Tensor):
            raise ValueError(f"vmap({name}, ...): Got in_dim={dim} for an input but the input "
                             f"is of type {type(value).__name__}. We cannot vmap over non-Tensor "
                             "arguments, please use None as the respective in_dim")
        if not -value.ndim <= dim < max(value.ndim, 1) or value.ndim == 0:
            raise ValueError(f"vmap({name}, ...): Got in_dim={dim} for some input, but that "
                             f"input is a Tensor of dimensionality {value.ndim} so expected "
                             f"in_dim to satisfy -{value.ndim} <= in_dim < {value.ndim}.")
        sizes.append(value.shape[dim])
    if not sizes:
        raise ValueError(f"vmap({name}, ...)(<inputs>): at least one input must be mapped over "
                         "(got in_dims=None for every input)")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _take(args, dims, index):
    if isinstance(args, (tuple, list)):
        return type(args)(_take(a, d, index) for a, d in zip(args, dims))
    if isinstance(args, dict):
        return {k: _take(args[k], dims[k], index) for k in args}
    return args if dims is None else args.select(dims, index)


def _stack_outputs(results, out_dims, name):
    from ._ops import FUNCTIONS
    first = results[0]
    if isinstance(first, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
        if len(dims) != len(first):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims!r}): out_dims is not "
                             "compatible with the structure of `outputs`.")
        return type(first)(_stack_outputs([r[k] for r in results], d, name)
                           for k, d in enumerate(dims))
    if isinstance(first, dict):
        return {k: _stack_outputs([r[k] for r in results], out_dims, name) for k in first}
    if not isinstance(first, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(first).__name__}. Did you mean to set out_dims= to None for "
                         "output?")
    if out_dims is None:
        return first
    return FUNCTIONS["stack"](list(results), dim=out_dims)
