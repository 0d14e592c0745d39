"""``chainrule.func``: composable function transforms (grad, grad_and_value, vjp, jvp,
jacrev, jacfwd, hessian, vmap, linearize) and their module helpers (functional_call,
stack_module_state), with torch.func's names, arguments and errors.

Note [nested transforms]
    A transform differentiates with ``create_graph=True`` whenever an outer transform
    may differentiate its result: an input that requires grad (an outer grad/vjp/
    jacrev) or an active dual level (an outer jvp/jacfwd, whose tangents must flow
    through this backward: forward-over-reverse). Its inputs are then taken as
    differentiable aliases (``view_as``, which keeps their history and tangents)
    rather than detached copies. So ``vmap(grad(f))``, ``grad(grad(f))``,
    ``jacfwd(jacrev(f))`` compose. Only one dual level exists at a time (as in
    forward_ad): a jvp/jacfwd inside another one computes its result in reverse mode
    (the double-backward trick / jacrev), which gives the same values. A reverse
    transform nested only because of a dual level (a user's, a jvp's or a jacfwd's;
    inside vmap too), where nothing outside may differentiate (``_for_dual_level_only``,
    ``_only_for_dual_level``), returns its results without history but with their
    tangents, as the reference's unwrap their own level only.

Inputs and outputs may be Tensors or (nested) tuples, lists and dicts of them.
"""
import functools

import chainrule as cr
from chainrule._batched import FUNC_TRANSFORMS, unwrap_all
from chainrule._cpu_stream import one_draw_for
from chainrule._vmap import DrawPerBasis, differentiable_input, random_mode

from . import _forward_jacobian as _one_pass
from ._closure import keeps_history, transform_leaf
from ._common import forward_ad
from ._functional import _jacobian_batched
from ._module_state import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._mutation import captured_guard
from ._program import debug_unwrap, functionalize, linearize
from ._rearrange import rearrange

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state", "replace_all_batch_norm_modules_",
           "linearize", "functionalize", "debug_unwrap", "rearrange"]

vmap = cr.vmap


def _transform(batches_forward=False, func=None):
    """Run the decorated transform marked active (Note [custom Functions under
    transforms] in core's _vmap.py: custom Functions then get the reference's checks),
    refusing writes into what ``func`` (else its first argument) captured (Note
    [mutating captured tensors])."""
    def decorate(fn):
        @functools.wraps(fn)
        def transformed(*args, **kwargs):
            transformed_fn, inputs = (func, args) if func is not None else (args[0], args[1:])
            FUNC_TRANSFORMS.active += 1
            FUNC_TRANSFORMS.batching += batches_forward
            try:
                with captured_guard(transformed_fn, _flatten(list(inputs))[0]):
                    return fn(*args, **kwargs)
            finally:
                FUNC_TRANSFORMS.active -= 1
                FUNC_TRANSFORMS.batching -= batches_forward
        return transformed
    return decorate


# --- pytrees ------------------------------------------------------------------------
def _flatten(tree):
    """(leaves, spec): the leaves in order, and what ``_unflatten`` needs."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for item in tree:
            sub, spec = _flatten(item)
            leaves.extend(sub)
            specs.append((len(sub), spec))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, spec = _flatten(list(tree.values()))
        return leaves, (dict, (list(tree.keys()), spec))
    return [tree], None


def _unflatten(leaves, spec):
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if kind is dict:
        keys, inner = specs
        return dict(zip(keys, _unflatten(leaves, inner)))
    out, start = [], 0
    for n, sub in specs:
        out.append(_unflatten(leaves[start:start + n], sub))
        start += n
    return kind(out)


def _spec_skeleton(spec):
    """The structure ``spec`` describes, with ``None`` leaves."""
    if spec is None:
        return None
    kind, specs = spec
    inner = specs[1] if kind is dict else spec
    return _unflatten([None] * sum(n for n, _ in inner[1]), spec)


def _spec_repr(spec):
    """``spec`` as the reference's pytree prints a TreeSpec."""
    from chainrule._vmap import structure_repr
    return structure_repr(_spec_skeleton(spec))


def _spec_pprint(tree):
    """A structure as the reference's ``treespec_pprint`` writes it: ``(*, {'k': *})``."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_spec_pprint(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, (tuple, list)):
        body = ", ".join(_spec_pprint(v) for v in tree)
        if isinstance(tree, list):
            return f"[{body}]"
        return f"({body},)" if len(tree) == 1 else f"({body})"
    return "*"


# --- arguments --------------------------------------------------------------------------
def _positions(argnums, n_args):
    if isinstance(argnums, int):
        items = (argnums,)
    elif isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        items = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in items:
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
        out.append(a % n_args)
    return out


def _nested(leaves):
    """Note [nested transforms]: whether an outer transform may differentiate (an input
    that requires grad counts only with grad mode on: under no_grad, or in a custom
    Function's backward, nothing outside records)."""
    fwAD = forward_ad()
    if fwAD is not None and _level_active():
        return True
    return cr.is_grad_enabled() and any(x.requires_grad for x in leaves)


def _level_active():
    from chainrule_forward_ad._tangents import CURRENT
    return CURRENT[0] is not None


def _untracked_over_reverse(leaving):
    """``leaving`` (``_for_dual_level_only``), the forward_ad layer's Note [untracked
    forward-over-reverse] module, when a gradient can take that path, else None."""
    return leaving if leaving is not None and leaving.untracked_possible() else None


def _for_dual_level_only(spec):
    """The forward_ad layer's module whose ``detached_with_tangent`` takes the results
    out of a transform nested only because a dual level is active (a user's, or a
    jvp/jacfwd's; under vmap too), else None."""
    if not spec.nested or forward_ad() is None:
        return None
    from chainrule_forward_ad import _over_reverse
    return _over_reverse if _over_reverse.only_for_dual_level(spec.leaves) else None


def _fresh(leaf, nested):
    if not isinstance(leaf, cr.Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
    batched = differentiable_input(leaf, nested)      # Note [per-sample gradients]
    if batched is not None:
        physical = unwrap_all(batched)[0]
        if physical.grad_fn is None:
            transform_leaf(physical)
        return batched
    if not nested:
        return transform_leaf(leaf.detach().requires_grad_())
    alias = leaf.view_as(leaf)
    return alias if alias.requires_grad else transform_leaf(alias.requires_grad_())


def _check_differentiable_outputs(leaves):
    """The reference's vjp (and jacrev) refuse integer and bool outputs."""
    for leaf in leaves:
        if not (leaf.is_floating_point() or leaf.is_complex()):
            raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or "
                               f"complex Tensors, got Tensor with dtype {leaf.dtype}")


def _check_floating_primals(leaves):
    """The reference's jacfwd makes dual tensors of its inputs: make_dual's error."""
    for leaf in leaves:
        if not (leaf.is_floating_point() or leaf.is_complex()):
            raise ValueError(f"Expected primal to be floating point or complex, but got: "
                             f"{leaf.dtype}")


def _check_real(leaves, api):
    for i, leaf in enumerate(leaves):
        if leaf.is_complex():
            raise RuntimeError(f"{api}: Expected all inputs to be real but received complex "
                               f"tensor at flattened input idx: {i}")


class _Args:
    """The positional arguments with those at ``argnums`` replaced by fresh leaves."""

    def __init__(self, args, argnums):
        self.positions = _positions(argnums, len(args))
        self.single = isinstance(argnums, int)
        self.args = list(args)
        self.specs, self.leaves = [], []
        for p in self.positions:
            leaves, spec = _flatten(args[p])
            self.specs.append((len(leaves), spec))
            self.leaves.extend(leaves)
        for leaf in self.leaves:
            if not isinstance(leaf, cr.Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got "
                                 f"{type(leaf)}")
        self.nested = _nested(self.leaves)

    def freshen(self):
        self.leaves = [_fresh(x, self.nested) for x in self.leaves]
        self._place(self.leaves)

    def _place(self, leaves):
        start = 0
        for p, (n, spec) in zip(self.positions, self.specs):
            self.args[p] = _unflatten(leaves[start:start + n], spec)
            start += n

    def structure(self, per_leaf):
        """``per_leaf`` (one value per leaf) in the arguments' structure: one pytree for
        an int argnums, a tuple of them for a tuple."""
        trees, start = [], 0
        for n, spec in self.specs:
            trees.append(_unflatten(per_leaf[start:start + n], spec))
            start += n
        return trees[0] if self.single else tuple(trees)


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    for leaf in _flatten(output[1])[0]:
        if not isinstance(leaf, cr.Tensor):     # the reference unwraps every aux leaf
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return output


def _grads_or_zeros(outputs, inputs, grad_outputs, create_graph):
    diff = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not diff:
        return [cr.zeros_like(x) for x in inputs]
    grads = cr.autograd.grad([o for o, _ in diff], inputs, [g for _, g in diff],
                             retain_graph=True, create_graph=create_graph, allow_unused=True)
    return [cr.zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def _plain(tree, nested, over=None):
    """Results leave a transform without this level's history (unless nested); with
    ``over`` (nested only for a dual level, ``_for_dual_level_only``), without history
    but with their tangents."""
    if nested and over is None:
        return tree
    leaves, spec = _flatten(tree)
    if over is not None:
        return _unflatten([over.detached_with_tangent(x) if isinstance(x, cr.Tensor) else x
                           for x in leaves], spec)
    return _unflatten([x.detach() if isinstance(x, cr.Tensor) else x for x in leaves], spec)


def _only_for_dual_level(over, outside, out_leaves):
    """``over`` (``_for_dual_level_only`` of the inputs, before they were freshened)
    unless a captured tensor may be differentiated by an outer reverse pass (Note
    [captured tensors keep their history])."""
    return None if over is None or keeps_history(outside, out_leaves) else over


# --- grad ----------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the arguments at ``argnums``, and its value.

    >>> import chainrule as cr
    >>> from chainrule.func import grad_and_value
    >>> g, v = grad_and_value(lambda x: (x ** 2).sum())(cr.tensor([1.0, 2.0]))
    >>> g.tolist(), v.item()
    ([2.0, 4.0], 5.0)
    """
    api = "grad_and_value(f)(*args)"

    def call(spec, kwargs):
        output, aux = _split_aux(func(*spec.args, **kwargs), has_aux, api)
        if not isinstance(output, cr.Tensor):
            raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got "
                               f"{type(output)}")
        if output.dim() != 0:
            raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got "
                               f"tensor with {output.dim()} dims. Maybe you wanted to use "
                               "the vjp or jacrev APIs instead?")
        return output, aux

    @_transform(func=func)
    def wrapper(*args, **kwargs):
        spec = _Args(args, argnums)
        leaving = _for_dual_level_only(spec)
        over = _untracked_over_reverse(leaving)
        outside = cr.is_grad_enabled()
        with cr.enable_grad():
            if over is not None:        # Note [untracked forward-over-reverse]
                with over.tangents_untracked():
                    spec.freshen()
                    output, aux = call(spec, kwargs)
                grads = [cr.zeros_like(x) if g is None else g
                         for g, x in zip(over.gradient_with_tangents(output, spec.leaves),
                                         spec.leaves)]
            else:
                spec.freshen()
                output, aux = call(spec, kwargs)
                # Note [captured tensors keep their history]
                spec.nested = spec.nested or keeps_history(outside, [output])
                grads = _grads_or_zeros([output], spec.leaves, [None], spec.nested)
        leaving = _only_for_dual_level(leaving, outside, [output])
        # (the untracked path's gradients have no history already)
        grads = _plain(spec.structure(grads), spec.nested, leaving if over is None else None)
        value = _plain(output, spec.nested, leaving)
        return (grads, (value, _plain(aux, spec.nested, leaving))) if has_aux else \
            (grads, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function with respect to the arguments at ``argnums``.

    >>> import chainrule as cr
    >>> from chainrule.func import grad
    >>> grad(lambda x: x.sin().sum())(cr.tensor([0.0])).tolist()
    [1.0]
    >>> grad(grad(lambda x: x ** 3))(cr.tensor(2.0)).item()
    12.0
    """
    inner = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


# --- vjp ----------------------------------------------------------------------------
def _tensor_leaves(tree, api, what):
    leaves, spec = _flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, cr.Tensor):
            raise RuntimeError(f"{api}: expected {what} to return only tensors, got "
                               f"unsupported type {type(leaf)}")
    return leaves, spec


@_transform()
def vjp(func, *primals, has_aux=False):
    """``func(*primals)`` and a function computing vector-Jacobian products with it.

    >>> import chainrule as cr
    >>> from chainrule.func import vjp
    >>> out, vjp_fn = vjp(lambda x: x ** 2, cr.tensor([1.0, 3.0]))
    >>> vjp_fn(cr.ones(2))[0].tolist()
    [2.0, 6.0]
    """
    api = "vjp(f, *primals)"
    spec = _Args(primals, tuple(range(len(primals))) or 0) if primals else None
    if spec is None:
        raise RuntimeError(f"{api}: Expected primals to be a non-empty tuple of Tensors.")
    outside, over = cr.is_grad_enabled(), _for_dual_level_only(spec)
    with cr.enable_grad():
        spec.freshen()
        output, aux = _split_aux(func(*spec.args), has_aux, api)
        out_leaves, out_spec = _tensor_leaves(output, api, "f(*primals)")
        _check_differentiable_outputs(out_leaves)
    over = _only_for_dual_level(over, outside, out_leaves)
    # Note [captured tensors keep their history]
    spec.nested = spec.nested or keeps_history(outside, out_leaves)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        leaves, cot_spec = _flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. cotangents: "
                               f"{_spec_pprint(_spec_skeleton(cot_spec))}, primal output: "
                               f"{_spec_pprint(_spec_skeleton(out_spec))}")
        nested = spec.nested if create_graph is None else create_graph or spec.nested
        with cr.enable_grad():
            grads = _grads_or_zeros(out_leaves, spec.leaves, leaves, nested)
        grads = [_plain(g, nested, over) for g in grads]
        start, per_primal = 0, []
        for n, sub in spec.specs:
            per_primal.append(_unflatten(grads[start:start + n], sub))
            start += n
        return tuple(per_primal)

    output = _plain(output, spec.nested, over)
    return (output, vjp_fn, _plain(aux, spec.nested, over)) if has_aux else (output, vjp_fn)


# --- jvp ----------------------------------------------------------------------------
@_transform()
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``func(*primals)`` and its Jacobian-vector product with ``tangents`` (forward
    mode; Note [nested transforms] for a jvp inside another).

    >>> import chainrule as cr
    >>> from chainrule.func import jvp
    >>> out, t = jvp(lambda x: x.exp(), (cr.tensor([0.0]),), (cr.tensor([2.0]),))
    >>> t.tolist()
    [2.0]
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    p_leaves, p_spec = _flatten(primals)
    t_leaves, t_spec = _flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure "
                           f"{_spec_repr(p_spec)} and tangents with structure "
                           f"{_spec_repr(t_spec)}")
    for leaf in p_leaves + t_leaves:
        if not isinstance(leaf, cr.Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
    fwAD, outside = forward_ad(), cr.is_grad_enabled()
    if fwAD is not None:
        fwAD.refuse_user_level()
    if fwAD is None or _level_active():
        return _jvp_by_reverse(func, p_leaves, p_spec, t_leaves, strict, has_aux, api, outside)
    with fwAD.transform_dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        output, aux = _split_aux(func(*_unflatten(duals, p_spec)), has_aux, api)
        out_leaves, out_spec = _tensor_leaves(output, api, "f(*primals)")
        unpacked = [fwAD.unpack_transform_output(o) for o in out_leaves]
    outs, tans = [], []
    for u in unpacked:
        if u.tangent is None and strict:
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                               "independent of the inputs. This is not allowed with "
                               "strict=True.")
        outs.append(u.primal)
        tans.append(cr.zeros_like(u.primal) if u.tangent is None else u.tangent)
    if not any(x.requires_grad for x in p_leaves + t_leaves) and \
            not keeps_history(outside, outs + tans):
        # An inner grad recorded its backward for the tangents (Note [nested
        # transforms]); with no outer reverse transform nor captured tensor (Note
        # [captured tensors keep their history]) the results are plain tensors.
        outs, tans = [o.detach() for o in outs], [t.detach() for t in tans]
    result = (_unflatten(outs, out_spec), _unflatten(tans, out_spec))
    return result + (aux,) if has_aux else result


def _jvp_by_reverse(func, p_leaves, p_spec, t_leaves, strict, has_aux, api, outside):
    """J t by the double-backward trick (inside an active dual level)."""
    with cr.enable_grad():
        fresh = [_fresh(p, True) for p in p_leaves]
        output, aux = _split_aux(func(*_unflatten(fresh, p_spec)), has_aux, api)
        out_leaves, out_spec = _tensor_leaves(output, api, "f(*primals)")
        dummies = [cr.zeros_like(o, requires_grad=True) for o in out_leaves]
        grads = _grads_or_zeros(out_leaves, fresh, dummies, True)
        tangents = _grads_or_zeros(grads, dummies, t_leaves, True)
    if strict and not any(o.requires_grad for o in out_leaves):
        raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                           "independent of the inputs. This is not allowed with strict=True.")
    # else no graph leaves, like the forward-mode path (and Note [captured tensors keep
    # their history])
    nested = _nested(p_leaves) or keeps_history(outside, out_leaves)
    result = (_plain(_unflatten(out_leaves, out_spec), nested),
              _plain(_unflatten(tangents, out_spec), nested))
    return result + (_plain(aux, nested),) if has_aux else result


# --- jacobians ----------------------------------------------------------------------
def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian by reverse mode: for each output, a block of shape
    ``output.shape + input.shape`` per input at ``argnums``.

    >>> import chainrule as cr
    >>> from chainrule.func import jacrev
    >>> jacrev(lambda x: x ** 2)(cr.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if chunk_size is not None and not chunk_size > 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    api = "jacrev(f, argnums)(*args)"

    @_transform(func=func)
    def wrapper(*args, **kwargs):
        spec = _Args(args, argnums)
        _check_real(spec.leaves, "jacrev")
        given, outside = list(spec.leaves), cr.is_grad_enabled()
        over = _for_dual_level_only(spec)
        with cr.enable_grad():
            spec.freshen()
            output, aux = _split_aux(func(*spec.args, **kwargs), has_aux, api)
            out_leaves, out_spec = _tensor_leaves(output, api, "f(*args)")
            _check_differentiable_outputs(out_leaves)
            over = _only_for_dual_level(over, outside, out_leaves)
            # Note [captured tensors keep their history]
            spec.nested = spec.nested or keeps_history(outside, out_leaves)
            if not spec.nested and _one_pass.worth_it(out_leaves, given) and \
                    _one_pass.usable(given):
                fresh, spec.leaves = spec.leaves, given
                result = _jacobian_one_pass(func, spec, kwargs, has_aux, api, outside)
                if result is not None:
                    return result
                spec.leaves = fresh
            rows = _jacobian_batched(out_leaves, spec.leaves, spec.nested)
        jac = _unflatten([spec.structure(list(row)) for row in rows], out_spec)
        jac = _plain(jac, spec.nested, over)
        return (jac, _plain(aux, spec.nested, over)) if has_aux else jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode (one tangent per input element), same layout as
    ``jacrev`` (Note [nested transforms] for a jacfwd inside a dual level).

    >>> import chainrule as cr
    >>> from chainrule.func import jacfwd, jacrev
    >>> jacfwd(lambda x: x.sin())(cr.tensor([0.0, 0.0])).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> jacfwd(jacrev(lambda x: (x ** 3).sum()))(cr.tensor([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    api = "jacfwd(f, argnums)(*args)"

    @_transform(batches_forward=True, func=func)
    def wrapper(*args, **kwargs):
        given = _Args(args, argnums).leaves
        fwAD = forward_ad()
        if fwAD is not None:
            fwAD.refuse_user_level()
        _check_floating_primals(given)
        if fwAD is None or _level_active():
            _check_real(given, "jacfwd")
            # one evaluation: "different" draws as "same" (Note [randomness of jacfwd])
            with random_mode("same" if randomness == "different" else randomness):
                return jacrev(func, argnums, has_aux=has_aux)(*args, **kwargs)
        spec, outside = _Args(args, argnums), cr.is_grad_enabled()
        _check_real(spec.leaves, "jacfwd")
        with random_mode(randomness):
            if not spec.nested and _one_pass.usable(spec.leaves):
                try:
                    result = _jacobian_one_pass(func, spec, kwargs, has_aux, api, outside)
                except DrawPerBasis:        # Note [randomness of jacfwd]
                    spec._place(spec.leaves)
                    result = None
                if result is not None:
                    return result
            columns, outs, out_spec, aux = _forward_columns(fwAD, func, spec, kwargs, has_aux,
                                                            api, randomness)
        blocks = [spec.structure([_block(col, o, x) for col, x in zip(per_out, spec.leaves)])
                  for per_out, o in zip(columns, outs)]
        keep = spec.nested or keeps_history(outside, outs)
        jac = _plain(_unflatten(blocks, out_spec), keep)
        return (jac, _plain(aux, keep)) if has_aux else jac
    return wrapper


def _jacobian_one_pass(func, spec, kwargs, has_aux, api, outside=False):
    """Note [one-pass jacobians] (in _forward_jacobian.py), or None where it does not
    apply."""
    found = {}

    def call(*duals):
        spec._place(list(duals))
        output, aux = _split_aux(func(*spec.args, **kwargs), has_aux, api)
        leaves, found["spec"] = _tensor_leaves(output, api, "f(*args)")
        found["aux"] = aux
        return leaves
    try:
        outputs, blocks = _one_pass.forward_jacobian(call, spec.leaves)
        keep = keeps_history(outside, outputs)   # Note [captured tensors keep their history]
        if keep:
            outputs, blocks = _one_pass.forward_jacobian(call, spec.leaves, history=True)
    except NotImplementedError:
        spec._place(spec.leaves)
        return None
    jac = _plain(_unflatten([spec.structure(list(b)) for b in blocks], found["spec"]), keep)
    return (jac, _plain(found["aux"], keep)) if has_aux else jac


def _forward_columns(fwAD, func, spec, kwargs, has_aux, api, randomness):
    """columns[i][j]: output i's tangents, one per basis tangent of input leaf j; the
    outputs of the last evaluation (for the shapes) and the first one's aux (the
    reference's). Random draws are made once for every basis tangent (Note [randomness
    of jacfwd])."""
    leaves = spec.leaves
    columns, outs, first_aux = [[] for _ in leaves], None, []
    shared = randomness != "different"
    with fwAD.transform_dual_level(), random_mode("same"), \
            one_draw_for(sum(x.numel() for x in leaves), shared) as draws:
        for j, x in enumerate(leaves):
            eye = cr.eye(max(x.numel(), 1), dtype=x.dtype)
            for k in range(x.numel()):
                draws.start(sum(y.numel() for y in leaves[:j]) + k)
                args = list(leaves)
                args[j] = fwAD.make_dual(x, eye[k].reshape(x.shape))
                spec._place(args)
                output, aux = _split_aux(func(*spec.args, **kwargs), has_aux, api)
                first_aux = first_aux or [aux]
                outs, out_spec = _tensor_leaves(output, api, "f(*args)")
                columns[j].append([fwAD.unpack_dual(o).tangent for o in outs])
    if outs is None:                             # no input element at all: one plain call
        spec._place(leaves)
        output, aux = _split_aux(func(*spec.args, **kwargs), has_aux, api)
        outs, out_spec = _tensor_leaves(output, api, "f(*args)")
        first_aux = [aux]
    per_output = [[[col[i] for col in columns[j]] for j in range(len(leaves))]
                  for i in range(len(outs))]
    return per_output, outs, out_spec, first_aux[0]


def _block(tangents, out, x):
    """One output's tangents over x's basis -> the block out.shape + x.shape."""
    shape = tuple(out.shape) + tuple(x.shape)
    if not tangents:
        return cr.zeros(*shape, dtype=out.dtype)
    tangents = [cr.zeros_like(out) if t is None else t for t in tangents]
    return cr.stack(tangents, dim=-1).reshape(shape)


def hessian(func, argnums=0):
    """The Hessian, as ``jacfwd(jacrev(func, argnums), argnums)`` (forward-over-reverse).

    >>> import chainrule as cr
    >>> from chainrule.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(cr.tensor([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(func, argnums), argnums)
