"""``chainrule.vmap``: map a function over a dimension of its inputs in one evaluation.

The mapped inputs become batched tensors (Note [batched tensors] in _batched.py) and
``func`` runs ONCE on them: every table op runs its batching rule (Note [batching
rules by family] in _ops/_batching_rules.py) on the whole batch. Inputs and outputs may
be tensors or (nested) tuples, lists and dicts of them; ``in_dims`` / ``out_dims`` is
an int or None for all, or a structure matching them.
"""
import contextlib
import threading

import numpy as np

from . import _batched
from ._batched import FUNC_TRANSFORMS, LEVELS, BatchedTensor, Level, batched_at, wrap
from ._ops import _registry
from ._tensor import Tensor
from .autograd import tangent_slot


# --- the dispatcher (Note [dispatch slot]), registered while a level is active ----------
def _dispatch(run, op, inputs, attrs, view_base):
    """A table op whose inputs include batched tensors: the rule of its family at the
    highest level present, on that level's physical tensors; ``call`` handles the
    lower levels the same way before the op runs (Note [batched tensors])."""
    level = None
    for t in inputs:
        if type(t) is BatchedTensor and (level is None or t._level.id > level.id):
            level = t._level
    if level is None:
        return run(op, inputs, attrs, view_base)
    from ._ops._batching_rules import rule_for
    batched = [batched_at(t, level) for t in inputs]
    args = [t._value if b else t for t, b in zip(inputs, batched)]
    base = view_base._value if batched_at(view_base, level) else view_base
    # a rule passes view=True where another op stands in for a view op (t: transpose)
    if tangent_slot.SLOT is not None:           # Note [tangents under vmap]
        def call(op_, args_, attrs_, view=False):
            return _registry.apply_op(op_, tuple(args_), attrs_,
                                      base if op_ is op or view else None)
    else:
        def call(op_, args_, attrs_, view=False):
            return _dispatch(run, op_, tuple(args_), attrs_, base if op_ is op or view else None)
    out = rule_for(op)(call, op, args, batched, attrs)
    if isinstance(out, tuple):
        return tuple(wrap(o, level) for o in out)
    return wrap(out, level)


_ACTIVE = {"count": 0, "handle": None}
_REGISTRATION = threading.Lock()


@contextlib.contextmanager
def batch_level(size, randomness="error"):
    """Enter a new vmap level of batch size ``size`` (registers the dispatcher while
    any level is active, in any thread)."""
    with _REGISTRATION:
        if _ACTIVE["count"] == 0:
            _ACTIVE["handle"] = _registry.add_dispatcher(_dispatch)
        _ACTIVE["count"] += 1
    LEVELS.counter += 1
    level = Level(LEVELS.counter, size, randomness)
    LEVELS.stack.append(level)
    try:
        yield level
    finally:
        LEVELS.stack.pop()
        with _REGISTRATION:
            _ACTIVE["count"] -= 1
            if _ACTIVE["count"] == 0:
                _ACTIVE["handle"].remove()
                _ACTIVE["handle"] = None


class _DrawPerEntry(Exception):
    """A random op ran under ``randomness="different"``: the call is redone per entry."""


# Note [tangents under vmap]
#     While a dual level is active (the tangent slot is filled) the physical ops a
#     batching rule runs go through apply_op, i.e. through every dispatcher whatever
#     order they were registered in, so the forward_ad layer sees each physical op
#     (vmap of jvp and jvp of vmap alike) and computes its tangent once for the whole
#     batch. That layer keeps the tangents of batched tensors on their physical
#     tensors (Note [tangents of batched tensors] there), never on the wrappers, so
#     the logical op on the wrappers carries no tangent of its own.


# What makes ``_call`` evaluate the function once per entry instead (the rare paths
# that have no one-pass form: random draws per entry, code outside the table that
# computes on values, e.g. the indices of max(dim) or a loss's targets).
_PER_ENTRY = (_DrawPerEntry, _batched.ValuesOutsideTable)


# Note [randomness of jacfwd]
#     The reference's jacfwd is a vmap of jvp over the basis tangents, so its
#     ``randomness`` works as vmap's: "error" makes a random draw raise vmap's error,
#     "same" draws once for every basis tangent, "different" draws (basis, *shape) and
#     gives each basis tangent its slice. jacfwd runs with its mode pushed on
#     FUNC_TRANSFORMS.randomness (``random_mode``): its one-pass evaluation (one draw)
#     is "same" as it is; under "different" a draw raises DrawPerBasis and jacfwd
#     evaluates once per basis tangent, replaying one draw for all of them (Note [one
#     draw for a batch]). A draw checks every active level, vmap's and jacfwd's: one in
#     "error" mode raises, as each of the reference's levels sees the random op.
class DrawPerBasis(Exception):
    """A random op ran in a jacfwd with randomness="different" (Note [randomness of
    jacfwd]): the jacobian is computed one basis tangent at a time."""


@contextlib.contextmanager
def random_mode(randomness):
    """Within: random draws follow a jacfwd's ``randomness`` (Note [randomness of
    jacfwd])."""
    FUNC_TRANSFORMS.randomness.append(randomness)
    try:
        yield
    finally:
        FUNC_TRANSFORMS.randomness.pop()


def check_random():
    """Called by every random draw (``_random.numpy_rng``) while a vmap level or a
    jacfwd is active (Note [randomness of jacfwd])."""
    modes = FUNC_TRANSFORMS.randomness
    if "error" in modes or any(level.randomness == "error" for level in LEVELS.stack):
        raise RuntimeError("vmap: called random operation while in randomness error mode. "
                           "Please either use the 'same' or 'different' randomness flags on "
                           "vmap or perform the randomness operation out of vmap")
    if any(level.randomness == "different" for level in LEVELS.stack):
        raise _DrawPerEntry()         # the levels inside it draw from its entries' slices
    if modes and modes[-1] == "different":
        raise DrawPerBasis()


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorise ``func`` over dimension ``in_dims`` of its inputs: one evaluation on
    the whole batch (Note [batched tensors]).

    ``randomness``: "error" (random ops raise), "same" (one draw shared by the batch)
    or "different" (independent draws per entry; the call then runs per entry).
    ``chunk_size``: evaluate that many entries at a time (less memory).

    >>> import chainrule as cr
    >>> batched_dot = cr.vmap(cr.dot)
    >>> batched_dot(cr.tensor([[1., 2.], [3., 4.]]), cr.tensor([[1., 1.], [2., 0.]])).tolist()
    [3.0, 6.0]
    >>> cr.vmap(lambda x, w: x * w, in_dims=(0, None))(cr.ones(3, 2), cr.tensor([2., 3.])).shape
    chainrule.Size([3, 2])
    >>> cr.vmap(cr.vmap(lambda a, b: a * b), in_dims=(0, None))(cr.ones(4, 3), cr.ones(3)).shape
    chainrule.Size([4, 3])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapped(*args, **kwargs):
        name = _name(func)
        _check_in_dims_type(in_dims, name)
        _check_out_dims_type(out_dims, name)
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                             "inputs, or you are trying to vmap over a function with no "
                             "inputs. The latter is unsupported.")
        dims = _broadcast_dims(in_dims if isinstance(in_dims, tuple) else
                               (in_dims,) * len(args), args, name, in_dims)
        size = _batch_size(args, dims, f"{name}, in_dims={in_dims!r}")
        if chunk_size is None or chunk_size >= size:
            return _call(func, args, kwargs, dims, size, out_dims, randomness, name)
        chunks = [_call(func, _narrow(args, dims, start, min(chunk_size, size - start)),
                        kwargs, dims, min(chunk_size, size - start), out_dims, randomness, name)
                  for start in range(0, size, chunk_size)]
        return _concat_outputs(chunks, _matched_out_dims(chunks[0], out_dims, name))
    return wrapped


def _call(func, args, kwargs, dims, size, out_dims, randomness, name):
    try:
        with batch_level(size, randomness) as level:
            inputs = _zip_map(lambda v, d: v if d is None else wrap(_to_front(v, d), level),
                              args, dims)
            out = func(*inputs, **kwargs)
            return _unwrap_outputs(out, _matched_out_dims(out, out_dims, name), level, name)
    except _PER_ENTRY as reason:
        from ._ops import _batching_rules
        if _batching_rules.LOOP_LOG is not None:
            _batching_rules.LOOP_LOG.add(type(reason).__name__)
        results = _per_entry(func, args, kwargs, dims, size, randomness)
        return _stack_outputs(results, _matched_out_dims(results[0], out_dims, name), name)


def _per_entry(func, args, kwargs, dims, size, randomness):
    """``func`` on each entry; under randomness="different" the random draws are made
    once for the batch (Note [one draw for a batch] in _cpu_stream.py)."""
    if randomness != "different":
        return [func(*_take(args, dims, i), **kwargs) for i in range(size)]
    from ._cpu_stream import one_draw_for
    results = []
    with one_draw_for(size) as draws:
        for i in range(size):
            draws.start(i)
            results.append(func(*_take(args, dims, i), **kwargs))
    return results


def _to_front(value, dim):
    from ._ops import FUNCTIONS
    return value if dim % value.ndim == 0 else FUNCTIONS["movedim"](value, dim, 0)


def _rebuilt(sequence, items):
    """``items`` in a sequence like ``sequence``: a named tuple or list of that type, any
    other tuple (a Size) a plain tuple, as the reference's pytrees rebuild them."""
    if hasattr(sequence, "_fields"):
        return type(sequence)(*items)
    return list(items) if isinstance(sequence, list) else tuple(items)


def _unwrap_outputs(out, out_dims, level, name):
    if isinstance(out, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(out)
        if len(dims) != len(out):
            raise _out_dims_error(name, out_dims, out)
        return _rebuilt(out, [_unwrap_outputs(o, d, level, name) for o, d in zip(out, dims)])
    if isinstance(out, dict):
        return {k: _unwrap_outputs(v, _at(out_dims, k), level, name) for k, v in out.items()}
    if not isinstance(out, Tensor):
        if out_dims is None:
            return out
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(out)}. Did you mean to set out_dims= to None for "
                         "output?")
    from ._ops import FUNCTIONS
    if not batched_at(out, level):
        if out_dims is None:
            return out
        from ._ops._batching_rules import _expand_batch
        physical = _expand_batch(out, level.size)
    elif out_dims is None:
        raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                         "out_dim is None")
    else:
        physical = out._value
    return physical if out_dims == 0 else FUNCTIONS["movedim"](physical, 0, out_dims)


def _narrow(args, dims, start, length):
    from ._ops import FUNCTIONS
    return _zip_map(lambda v, d: v if d is None else FUNCTIONS["narrow"](v, d, start, length),
                    args, dims)


def _concat_outputs(chunks, out_dims):
    from ._ops import FUNCTIONS
    first = chunks[0]
    if isinstance(first, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
        return type(first)(_concat_outputs([c[k] for c in chunks], d)
                           for k, d in enumerate(dims))
    if isinstance(first, dict):
        return {k: _concat_outputs([c[k] for c in chunks], _at(out_dims, k)) for k in first}
    if out_dims is None:
        return first
    return FUNCTIONS["cat"](list(chunks), dim=out_dims)


def _zip_map(fn, values, dims):
    if isinstance(values, (tuple, list)):
        return type(values)(_zip_map(fn, v, d) for v, d in zip(values, dims))
    if isinstance(values, dict):
        return {k: _zip_map(fn, values[k], dims[k]) for k in values}
    return fn(values, dims)
class VmapInfo:
    """What a custom Function's ``vmap`` staticmethod is told about the vmap."""

    __slots__ = ("batch_size", "randomness")

    def __init__(self, batch_size, randomness):
        self.batch_size, self.randomness = batch_size, randomness


_EXTENDING_FUNC = ("For more details, please see "
                   "https://pytorch.org/docs/main/notes/extending.func.html")
_NEEDS_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
    "jacrev, ...), it must override the setup_context staticmethod. " + _EXTENDING_FUNC)


def check_transformable(cls):
    """Note [custom Functions under transforms]
        The reference runs ``Function.apply`` inside any function transform (vmap,
        grad, vjp, jvp, jacrev, jacfwd, hessian) through its transform stack, which
        needs a Function written in the setup_context style (``forward`` without ctx)
        and, under the transforms that batch the forward (vmap, jacfwd, hessian), a
        vmap rule, batched arguments or not. chainrule computes most transforms
        without batching, so it raises these errors itself, in the reference's order,
        while a transform is active. As there, the Function's own forward and vmap
        rule run below the transforms (``lowered``): Functions they call are not
        checked. ``autograd.functional`` and plain autograd accept any Function.
        Returns whether a transform is active.
    """
    state = FUNC_TRANSFORMS
    vmapping = any(level.id not in state.lowered for level in LEVELS.stack)
    if not (vmapping or state.active):
        return False
    from .autograd.function import Function
    if cls.setup_context is Function.setup_context:
        raise RuntimeError(_NEEDS_SETUP_CONTEXT)
    if (vmapping or state.batching) and cls.vmap is Function.vmap and \
            not cls.generate_vmap_rule:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                           "support. Please override and implement the vmap staticmethod or "
                           f"set generate_vmap_rule=True. {_EXTENDING_FUNC}")
    return True


@contextlib.contextmanager
def lowered(levels):
    """Run a custom Function below the func transforms and the vmap ``levels`` (Note
    [custom Functions under transforms])."""
    state = FUNC_TRANSFORMS
    saved = state.active, state.batching, state.lowered
    state.active, state.batching = 0, 0
    state.lowered = saved[2].union(level.id for level in levels)
    try:
        yield
    finally:
        state.active, state.batching, state.lowered = saved


def apply_function_batched(cls, args, kwargs):
    """Note [custom Functions under vmap]
        ``Function.apply`` with batched arguments: the class's ``vmap`` staticmethod,
        called once with the physical arguments (batch dimension 0, or None) and
        returning ``(outputs, out_dims)``; with ``generate_vmap_rule=True`` and no
        ``vmap``, ``apply`` once per entry (a generated rule), the results stacked
        (check_transformable gave the reference's errors for other classes first).
        NotImplemented when no argument is batched.
    """
    levels = [a._level for a in args if type(a) is BatchedTensor]
    if not levels:
        return NotImplemented
    level = max(levels, key=lambda lv: lv.id)
    from .autograd.function import Function
    physical = [a._value if batched_at(a, level) else a for a in args]
    in_dims = tuple(0 if batched_at(a, level) else None for a in args)
    with lowered(LEVELS.stack[LEVELS.stack.index(level):]):
        if cls.vmap is not Function.vmap:
            outputs, out_dims = cls.vmap(VmapInfo(level.size, level.randomness), in_dims,
                                         *physical, **kwargs)
            return _rewrap_outputs(outputs, out_dims, level)
        rows = [cls.apply(*_take(physical, in_dims, i), **kwargs) for i in range(level.size)]
    return _rewrap_outputs(_stack_outputs(rows, 0, cls.__name__), 0, level)


def _rewrap_outputs(outputs, out_dims, level):
    from ._ops import FUNCTIONS
    if isinstance(outputs, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(outputs)
        return type(outputs)(_rewrap_outputs(o, d, level) for o, d in zip(outputs, dims))
    if out_dims is None or not isinstance(outputs, Tensor):
        return outputs
    return wrap(outputs if out_dims == 0 else FUNCTIONS["movedim"](outputs, out_dims, 0), level)


def differentiable_input(leaf, nested):
    """Note [per-sample gradients]
        A transform that differentiates (chainrule.func's grad, vjp, jacrev) inside vmap
        takes each input batched at every active level: an input shared by the batch
        (a weight) becomes a broadcast copy per entry. Every entry then has its own
        input, so one backward pass over the physical tensors gives each entry its own
        gradient (per-sample gradients), with no loop. Outside vmap: None.
    """
    if not LEVELS.stack:
        return None
    from ._batched import rewrap, unwrap_all
    from ._ops import FUNCTIONS
    physical, levels = unwrap_all(leaf)
    ids = {lv.id for lv in levels}
    entry, sizes = list(physical.shape)[len(levels):], iter(physical.shape)
    present = [next(sizes) if lv.id in ids else 1 for lv in LEVELS.stack] + entry
    full = [lv.size for lv in LEVELS.stack] + entry
    if not nested:          # a fresh leaf: the shared values broadcast, no copy
        arr = np.broadcast_to(physical.detach()._data.reshape(present), full)
        fresh = Tensor._wrap(arr).requires_grad_()
    else:                   # keeps the history an outer transform differentiates
        fresh = FUNCTIONS["expand"](FUNCTIONS["reshape"](physical, present), tuple(full))
        fresh = fresh if fresh.requires_grad else fresh.requires_grad_()
    return rewrap(fresh, list(LEVELS.stack))


def _name(func):
    return getattr(func, "__name__", repr(func))


def structure_repr(tree, indent=0):
    """The nesting of ``tree`` (tuples, lists, dicts; anything else a leaf ``*``) as the
    reference's pytree prints it, for messages."""
    if isinstance(tree, dict):
        context, children = list(tree.keys()), list(tree.values())
    elif isinstance(tree, (tuple, list)):
        context, children = None, list(tree)
    else:
        return "*"
    kind = "tuple" if isinstance(tree, tuple) else type(tree).__name__
    parts = [structure_repr(child, indent + 2) for child in children]
    body = parts[0] + "," if len(parts) > 1 else "".join(parts)
    body += ",".join("\n" + " " * (indent + 2) + part for part in parts[1:])
    return f"TreeSpec({kind}, {context}, [{body}])"


def _check_in_dims_type(in_dims, name):
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): expected "
                         "`in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")


def _broadcast_dims(dims, values, name, in_dims):
    """Expand ``dims`` to the structure of ``values`` (an int or None covers a subtree)."""
    if dims is None or isinstance(dims, int):
        return _map(lambda v: dims, values)
    if isinstance(values, (tuple, list)) and isinstance(dims, (tuple, list)) and \
            len(dims) == len(values):
        return type(values)(_broadcast_dims(d, v, name, in_dims) for d, v in zip(dims, values))
    if isinstance(values, dict) and isinstance(dims, dict) and dims.keys() == values.keys():
        return {k: _broadcast_dims(dims[k], values[k], name, in_dims) for k in values}
    raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not "
                     "compatible with the structure of `inputs`. in_dims has structure "
                     f"{structure_repr(dims)} but inputs has structure "
                     f"{structure_repr(values)}.")


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
            raise ValueError(f"vmap({name}, ...)(<inputs>): Got in_dim={dim} for an input but the input "
                             f"is of type {type(value)}. We cannot vmap over non-Tensor "
                             "arguments, please use None as the respective in_dim")
        if not -value.ndim <= dim < max(value.ndim, 1) or value.ndim == 0:
            raise ValueError(f"vmap({name}, ...)(<inputs>): Got in_dim={dim} for some input, but that "
                             f"input is a Tensor of dimensionality {value.ndim} so expected "
                             f"in_dim to satisfy -{value.ndim} <= in_dim < {value.ndim}.")
        sizes.append(value.shape[dim])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _take(args, dims, index):
    if isinstance(args, (tuple, list)):
        return type(args)(_take(a, d, index) for a, d in zip(args, dims))
    if isinstance(args, dict):
        return {k: _take(args[k], dims[k], index) for k in args}
    # a copy: a row that is a view into the batch would give as_strided another storage
    return args if dims is None else args.select(dims, index).clone()


class _Incompatible(Exception):
    """out_dims whose structure does not fit the outputs'."""


def _at(dims, key):
    return dims[key] if isinstance(dims, dict) else dims


def _check_out_dims_type(out_dims, name):
    leaves = [out_dims]
    while leaves:
        dims = leaves.pop()
        if isinstance(dims, (tuple, list, dict)):
            leaves.extend(dims.values() if isinstance(dims, dict) else dims)
        elif dims is not None and (not isinstance(dims, int) or isinstance(dims, bool)):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an "
                             "int, None or a python collection of ints representing where in "
                             "the outputs the vmapped dimension should appear.")


def _matched_out_dims(out, out_dims, name):
    """``out_dims`` spread over the structure of ``out`` (an int or None stands for a
    whole subtree, as a prefix of the reference's pytree), or the reference's error."""
    if isinstance(out, Tensor) and isinstance(out_dims, tuple) and len(out_dims) == 1:
        return out_dims[0]          # the reference accepts (d,) for a single Tensor
    try:
        return _spread(out, out_dims)
    except _Incompatible:
        raise _out_dims_error(name, out_dims, out) from None


def _spread(out, dims):
    if dims is None or isinstance(dims, int):
        return dims
    if isinstance(out, dict) and isinstance(dims, dict) and list(dims) == list(out):
        return {k: _spread(out[k], dims[k]) for k in out}
    if isinstance(out, (tuple, list)) and isinstance(dims, (tuple, list)) and \
            isinstance(out, list) == isinstance(dims, list) and len(out) == len(dims):
        return tuple(_spread(o, d) for o, d in zip(out, dims))
    raise _Incompatible


def _out_dims_error(name, out_dims, outputs):
    return ValueError(f"vmap({name}, ..., out_dims={out_dims!r})(<inputs>): out_dims is not "
                      "compatible with the structure of `outputs`. out_dims has structure "
                      f"{structure_repr(out_dims)} but outputs has structure "
                      f"{structure_repr(outputs)}.")


def _stack_outputs(results, out_dims, name):
    from ._ops import FUNCTIONS
    first = results[0]
    if isinstance(first, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
        if len(dims) != len(first):
            raise _out_dims_error(name, out_dims, first)
        return _rebuilt(first, [_stack_outputs([r[k] for r in results], d, name)
                                for k, d in enumerate(dims)])
    if isinstance(first, dict):
        return {k: _stack_outputs([r[k] for r in results], _at(out_dims, k), name)
                for k in first}
    if not isinstance(first, Tensor):
        if out_dims is None:
            return first
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(first)}. Did you mean to set out_dims= to None for "
                         "output?")
    if out_dims is None:
        return first
    return FUNCTIONS["stack"](list(results), dim=out_dims)
