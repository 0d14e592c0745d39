"""``nn.utils.stateless``: calling a module with parameters and buffers it does not own.

Note [reparametrized call]
    ``functional_call(module, tensors, args)`` runs ``module(*args)`` with some of its
    parameters and buffers replaced, by name (``"layer.0.weight"``), by the given
    tensors, and puts the originals back afterwards, also when the call raises. The
    replacement goes straight into the owning module's ``_parameters`` / ``_buffers``
    (Note [module attributes]) so the forward reads it as usual and autograd records
    the given tensor, not the module's Parameter: that is what makes
    ``grad(lambda p: functional_call(model, p, x))`` and per-sample gradients with
    ``vmap`` work. A name the module does not have is set as a plain attribute for
    the call (and removed afterwards) unless ``strict=True``. Tied tensors (one
    Parameter reachable under two names) stay tied: giving one name replaces all of
    them (``tie_weights=True``).
"""
import contextlib
import warnings

from chainrule._tensor import Tensor


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Deprecated alias of ``chainrule.func.functional_call`` (as in the reference).

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     out = cr.nn.utils.stateless.functional_call(
    ...         cr.nn.Linear(2, 1), {"weight": cr.ones(1, 2), "bias": cr.zeros(1)},
    ...         (cr.tensor([[1.0, 2.0]]),))
    >>> out.tolist()
    [[3.0]]
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                  "2.0 and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the given parameters and buffers in place of
    its own (Note [reparametrized call]); ``chainrule.func.functional_call``."""
    tensors = _merged(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrized(module, tensors, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def _merged(dicts):
    """One name -> tensor dict from a dict or a tuple/list of dicts with distinct keys."""
    if isinstance(dicts, dict):
        return dicts
    if not isinstance(dicts, (tuple, list)) or not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(dicts)}")
    merged, repeated = {}, []
    for d in dicts:
        repeated += [k for k in d if k in merged]
        merged.update(d)
    if repeated:
        raise ValueError(f"{sorted(set(repeated))} appeared in multiple dictionaries; "
                         "behavior of functional call is ambiguous")
    return merged


def _named_tensors(module):
    """Every (name, tensor) of the module's parameters then buffers, tied ones under
    each of their names."""
    return (list(module.named_parameters(remove_duplicate=False))
            + list(module.named_buffers(remove_duplicate=False)))


def _untied(module, tensors):
    """``tensors`` plus, for each given name of a tied tensor, its other names."""
    names_of = {}
    for name, t in _named_tensors(module):
        names_of.setdefault(id(t), []).append(name)
    result = dict(tensors)
    for group in (g for g in names_of.values() if len(g) > 1):
        given = [n for n in group if n in tensors]
        if len({id(tensors[n]) for n in given}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, "
                             "which are tied. Consider using tie_weights=False")
        if given:
            result.update({n: tensors[given[0]] for n in group if n not in tensors})
    return result


def _check_keys(module, tensors):
    expected = {name for name, _ in _named_tensors(module)}
    unexpected = [k for k in tensors if k not in expected]
    missing = [k for k in expected if k not in tensors]
    lines = [f"\t{what} key(s): {', '.join(repr(k) for k in sorted(keys))}."
             for what, keys in (("Unexpected", unexpected), ("Missing", missing)) if keys]
    if lines:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n"
                           + "\n".join(lines))


@contextlib.contextmanager
def _reparametrized(module, tensors, tie_weights, strict):
    if tie_weights:
        tensors = _untied(module, tensors)
    if strict:
        _check_keys(module, tensors)
    undo = []
    try:
        for name, value in tensors.items():
            undo.append(_swap(module, name, value))
        yield
    finally:
        # Last in, first out: with tie_weights=False two names of one tensor both
        # swapped still end with the original (the reference restores first in,
        # first out and can leave the second value in the module).
        for restore in reversed(undo):
            restore()


def _swap(module, name, value):
    """Put ``value`` at ``name`` (dotted) and return the function that undoes it."""
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"functional_call: expected a Tensor for {name!r}, got "
                        f"{type(value).__name__}")
    owner_path, _, attr = name.rpartition(".")
    owner = module.get_submodule(owner_path) if owner_path else module
    for registry in (owner._parameters, owner._buffers):
        if attr in registry:
            old = registry[attr]
            registry[attr] = value
            return lambda: registry.__setitem__(attr, old)
    had, old = attr in owner.__dict__, owner.__dict__.get(attr)
    object.__setattr__(owner, attr, value)
    if had:
        return lambda: object.__setattr__(owner, attr, old)
    return lambda: object.__delattr__(owner, attr)
