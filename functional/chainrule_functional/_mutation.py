"""The reference's refusal of in-place writes into captured tensors under grad, vjp,
jvp, jacrev and jacfwd.

Note [mutating captured tensors]
    Inside the reference's gradient transforms, a tensor the function did not receive
    nor create (a closed-over tensor, a global, a module's buffer: "captured") cannot
    be written in place, nor can any view of its memory: the write raises "During a
    grad (vjp, jvp, grad, etc) transform, the function provided attempted to call
    in-place operation (aten::add_.Tensor) that would mutate a captured Tensor."
    (under no_grad as well). Here a transform collects, when it starts, the memory of
    the tensors its function reaches (closure cells, defaults, bound ``self``, the
    parameters and buffers of modules, the globals a user function names, and the
    same for the functions and containers found there) less its inputs' memory, and
    guards the call with a mutation context (core's Note [saved-tensor hooks]: every
    in-place write asks the innermost context first; the guard passes the write on to
    the context it replaced). A tensor the function creates has memory of its own and
    is written freely. The op is named as the reference names it, from the in-place
    method the write came through.
"""
import contextlib
import types

import chainrule as cr
from chainrule._batched import BatchedTensor, unwrap_all
from chainrule._torch_function import inplace_method_on_stack
from chainrule.autograd import saved_hooks

MESSAGE = ("During a grad (vjp, jvp, grad, etc) transform, the function provided attempted "
           "to call in-place operation ({op}) that would mutate a captured Tensor. This is "
           "not supported; please rewrite the function being transformed to explicitly "
           "accept the mutated Tensor(s) as inputs.")
# the reference's overloads of the in-place ops it names
_OVERLOADS = {"add_": "add_.Tensor", "sub_": "sub_.Tensor", "mul_": "mul_.Tensor",
              "div_": "div_.Tensor", "fill_": "fill_.Scalar", "__setitem__": "copy_",
              "pow_": "pow_.Scalar", "remainder_": "remainder_.Scalar"}
_FOLLOWED_DEPTH = 3          # functions found in functions found in the function
_LARGEST_CONTAINER = 10000


@contextlib.contextmanager
def captured_guard(func, inputs):
    """Within: an in-place write into memory ``func`` captured raises (Note [mutating
    captured tensors]); ``inputs`` (the transform's arguments) are not captured."""
    roots = {id(root): root for root in map(_root, _reached_tensors(func))}
    for t in inputs:
        if isinstance(t, cr.Tensor):
            roots.pop(id(_root(t)), None)
    if not roots:
        yield
        return
    guard = _Guard(roots, saved_hooks.current_mutation_context())
    saved_hooks.STATE.mutation_contexts.append(guard)
    saved_hooks.ACTIVE[0] += 1
    try:
        yield
    finally:
        saved_hooks.STATE.mutation_contexts.remove(guard)
        saved_hooks.ACTIVE[0] -= 1


class _Guard:
    """A mutation context refusing writes into ``roots`` (memory owners by id)."""

    def __init__(self, roots, outer):
        self.roots, self.outer = roots, outer

    def before_mutation(self, tensor):
        if id(_root(tensor)) in self.roots:
            raise RuntimeError(MESSAGE.format(op=_inplace_op_name()))
        if self.outer is not None:
            self.outer.before_mutation(tensor)

    def register(self, saved):
        """A tensor saved for backward: the context this guard replaced keeps it."""
        if self.outer is not None:
            self.outer.register(saved)


def _root(t):
    """The object owning ``t``'s memory (a NumPy view's base is its owner; a batched
    tensor's is its physical tensor's)."""
    data = (unwrap_all(t)[0] if type(t) is BatchedTensor else t)._data
    return data if getattr(data, "base", None) is None else data.base


def _reached_tensors(func):
    """The tensors ``func`` reaches (Note [mutating captured tensors]), by a worklist."""
    found, seen, work = [], set(), [(func, 0)]
    while work:
        obj, depth = work.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, cr.Tensor):
            found.append(obj)
        elif isinstance(obj, cr.nn.Module):
            found.extend(obj.parameters())
            found.extend(obj.buffers())
        elif isinstance(obj, (list, tuple, set, frozenset, dict)):
            if len(obj) <= _LARGEST_CONTAINER:       # not a list of a million numbers
                work.extend((item, depth) for item in
                            (obj.values() if isinstance(obj, dict) else obj))
        elif depth < _FOLLOWED_DEPTH:
            work.extend((item, depth + 1) for item in _referenced(obj))
    return found


def _referenced(obj):
    """What a callable refers to: a function's closure, defaults and (for user code)
    the globals it names; a bound method's ``self``; a partial's parts."""
    if isinstance(obj, types.MethodType):
        return [obj.__self__, obj.__func__]
    if hasattr(obj, "func") and hasattr(obj, "keywords"):          # functools.partial
        return [obj.func, obj.args, obj.keywords]
    if not isinstance(obj, types.FunctionType):
        return []
    cells = [c.cell_contents for c in obj.__closure__ or () if _filled(c)]
    items = cells + list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
    if not (obj.__module__ or "").startswith("chainrule"):
        items += [obj.__globals__[name] for name in _names(obj.__code__)
                  if name in obj.__globals__]
    return items


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:                  # an empty cell
        return False
    return True


def _names(code):
    """The global names ``code`` and the code nested in it (lambdas, comprehensions)
    use."""
    names, work = set(), [code]
    while work:
        current = work.pop()
        names.update(current.co_names)
        work.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return names


def _inplace_op_name():
    """The reference's name of the in-place op being run (from its Tensor method)."""
    method = inplace_method_on_stack() or "copy_"
    return "aten::" + _OVERLOADS.get(method, method)
