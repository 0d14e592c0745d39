"""Helpers shared by the op families: argument coercion, dtype promotion, the
public-function registry (FUNCTIONS, which TENSOR_NS resolves names in) and
installation of methods on Tensor."""
import functools

import numpy as np

from .. import _dtypes, _torch_function
from .. import _tensor as _tensor_module
from .._grad_mode import STATE as _MODE
from .._batched import BatchedTensor, unwrap_all
from .._tensor import Tensor
from ..autograd import saved_hooks as _saved_hooks
from ..autograd import tangent_slot as _tangent_slot
from ..autograd.saved_guard import unlocked_for_inplace
from ._registry import apply_op
from .views import check_view_inplace, rebase_inplace, view_write_error

FUNCTIONS = {}     # public name -> function; also the formulas' TENSOR_NS
NOT_EXPORTED = {}  # name -> what FUNCTIONS holds only for TENSOR_NS (not chainrule.<name>)
EMPTY = {}

# Note [absent tensor input]
#     A table op's optional tensor input that was not given (a conv's bias, a loss's
#     weight) is passed as ABSENT, an empty constant that needs no gradient, so one
#     table entry serves both cases and its edge is None like the reference's. It
#     stands for the reference's undefined tensor: saved-tensor hooks never see it.
ABSENT = Tensor._wrap(np.zeros(0))


def public(fn=None, *, name=None, method=True, top_level=True):
    """Register a public function (``chainrule.<name>``, unless ``top_level`` is False:
    a Tensor method only, like the reference's ``Tensor.view``, which formulas still
    find in FUNCTIONS), optionally as a Tensor method (both accept NumPy's argument
    spellings, Note [NumPy spellings of arguments])."""
    def register(f):
        key = name or f.__name__
        FUNCTIONS[key] = g = numpy_spellings(f)
        if not top_level:
            NOT_EXPORTED[key] = g
        if method and not hasattr(Tensor, key):
            setattr(Tensor, key, g)
        return f
    return register(fn) if fn is not None else register


def formula_helper(fn):
    """Register a helper for formulas on the tensor path only (not public)."""
    FUNCTIONS[fn.__name__] = NOT_EXPORTED[fn.__name__] = fn
    return fn


def method(name):
    """Install a function as a Tensor method only (Note [NumPy spellings of arguments])."""
    def register(f):
        setattr(Tensor, name, numpy_spellings(f))
        return f
    return register


# Note [NumPy spellings of arguments]
#     Like the reference's argument parser, every public op and Tensor method with a
#     ``dim`` or ``keepdim`` parameter also takes NumPy's ``axis`` / ``keepdims``:
#     ``x.sum(axis=0, keepdims=True)``. Registration (``public``, ``method``) wraps
#     such functions once, in one place; the wrapper renames the keyword and calls the
#     function. Functions without those parameters are registered as they are, and
#     the module-level functions (what the ops call among themselves) stay unwrapped.
_NUMPY_SPELLINGS = (("axis", "dim"), ("keepdims", "keepdim"))


def numpy_spellings(f):
    """``f``, accepting ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``.

    >>> import chainrule as cr
    >>> cr.ones(2, 3).sum(axis=1, keepdims=True).shape
    chainrule.Size([2, 1])
    """
    code = getattr(f, "__code__", None)
    if code is None or getattr(f, "numpy_spellings", False):
        return f
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    renames = tuple((alias, name) for alias, name in _NUMPY_SPELLINGS
                    if name in params and alias not in params)
    if not renames:
        return f

    @functools.wraps(f)
    def accepting_numpy_spellings(*args, **kwargs):
        if kwargs:
            for alias, name in renames:
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{f.__name__}() got an unexpected keyword argument "
                                        f"'{alias}'")
                    kwargs[name] = kwargs.pop(alias)
        return f(*args, **kwargs)
    accepting_numpy_spellings.numpy_spellings = True
    return accepting_numpy_spellings


def as_tensor_arg(value, name="input"):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, complex, np.number)):
        return Tensor._wrap(np.asarray(value))
    if isinstance(value, np.ndarray):
        return Tensor._wrap(value)
    raise TypeError(f"{name} must be a Tensor, not {type(value).__name__}")


def wrapped_number(value, beside, name="input"):
    """``value`` for ``promote`` with the tensor ``beside``: a Python number stays one,
    as the reference promotes a number it wraps for a tensor argument (1.5 with an
    integer tensor is Float, not Double); anything else (or beside no tensor) becomes a
    tensor.

    >>> import chainrule as cr
    >>> from chainrule._ops._common import promote, wrapped_number
    >>> promote(wrapped_number(1.5, cr.tensor([1])), cr.tensor([1]))[0].dtype
    chainrule.float32
    """
    if isinstance(value, Tensor) or isinstance(value, _NUMBERS) and isinstance(beside, Tensor):
        return value
    return as_tensor_arg(value, name)


_NUMBERS = (bool, int, float, complex, np.number)


# Note [tensor-only arguments]
#     Where the reference's signature has a Tensor parameter with no Scalar overload
#     (atan2's and maximum's ``other``, heaviside's ``values``, masked_select's
#     ``mask``), its argument parser refuses a Python number before any kernel runs:
#     "atan2(): argument 'other' (position 2) must be Tensor, not float". The message
#     names the call as the user made it: ``x.atan2(2.0)`` counts positions after
#     self, ``x.atan2_(2.0)`` is "atan2_()" (read from the innermost dispatching
#     wrapper on the stack, on the error path only). An op that would wrap the number
#     checks its arguments first with ``require_tensors``.
def require_tensor(value, fn, name, position):
    """``value`` if it is a Tensor; else the reference's TypeError naming the argument
    (Note [tensor-only arguments]).

    >>> import chainrule as cr
    >>> cr.tensor([1.]).atan2(2.0)
    Traceback (most recent call last):
    TypeError: atan2(): argument 'other' (position 1) must be Tensor, not float
    """
    if isinstance(value, Tensor):
        return value
    called, is_method = _torch_function.call_on_stack()
    if called in (fn, fn + "_"):
        fn, position = called, position - is_method
    raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                    f"{type(value).__name__}")


def require_tensors(fn, names, *values):
    """Note [tensor-only arguments]: ``require_tensor`` for each of ``values``, the
    arguments named ``names`` in ``fn``'s signature, in order."""
    for position, value in enumerate(values, 1):
        if not isinstance(value, Tensor):
            require_tensor(value, fn, names[position - 1], position)


def check_same_dtype(a, b, message="expected scalar type {a} but found {b}"):
    """RuntimeError unless ``a`` and ``b`` share a dtype; ``message`` may name the two
    scalar-type names as {a} and {b} ("Float") or the C++ ones as {a_cpp} and {b_cpp}
    ("float", "long int")."""
    da, db = a._data.dtype, b._data.dtype
    if da != db:
        raise RuntimeError(message.format(
            a=_dtypes.scalar_type_name(da), b=_dtypes.scalar_type_name(db),
            a_cpp=_dtypes.cpp_type_name(da), b_cpp=_dtypes.cpp_type_name(db)))


def _dims_and_zero(tensors):
    dims, zero = [], []
    for t in tensors:
        (dims if t._data.ndim else zero).append(_dtypes.from_numpy_dtype(t._data.dtype))
    return dims, zero


def promote(*args):
    """Tensors (and Python scalars) cast to their common dtype by torch's rules.

    The cast of a tensor that requires grad is recorded (``ToCopyBackward0``)."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    scalars = [a for a in args if not isinstance(a, Tensor)]
    dims, zero = _dims_and_zero(tensors)
    scalars = [_py_scalar(s) for s in scalars]
    target = _dtypes.result_type(dims, zero, scalars)
    return [cast(a, target) if isinstance(a, Tensor) else
            Tensor._wrap(_scalar_array(a, target.np)) for a in
            (a if isinstance(a, Tensor) else _py_scalar(a) for a in args)]


def _scalar_array(value, np_dtype):
    try:
        return np.asarray(value, dtype=np_dtype)
    except OverflowError:
        return wrapped_integer(value, np_dtype)


def _py_scalar(s):
    if isinstance(s, np.ndarray):
        if s.size != 1:
            raise TypeError(f"unsupported operand type: an array of shape {list(s.shape)}")
        s = s.item()
    if isinstance(s, np.generic):
        return s.item()
    if isinstance(s, (bool, int, float, complex)):
        return s
    raise TypeError(f"unsupported operand type: {type(s).__name__}")


# Note [ComplexHalf stands in as complex64]
#     The reference promotes float16 with a complex operand of lower priority (a Python
#     complex, a complex 0-d tensor) to complex32, ComplexHalf, which NumPy lacks:
#     chainrule computes in complex64 instead, and where the reference names ComplexHalf
#     in an error (a kernel it lacks, a result that cannot be written back) the error
#     is reworded once raised, from the operands, so the paths that succeed pay nothing.
def complex_half_error(error, operands):
    """``error`` naming ComplexHalf, not its complex64 stand-in, where ``operands``
    (tensors and numbers) promote to it; else ``error`` itself (Note [ComplexHalf
    stands in as complex64])."""
    if "ComplexFloat" not in str(error):
        return error
    tensors = [a for a in operands if isinstance(a, Tensor)]
    numbers = [_py_scalar(a) for a in operands if isinstance(a, _NUMBERS)]
    dims, zero = _dims_and_zero(tensors)
    if not (dims or zero) or _dtypes.result_type_name(dims, zero, numbers) != "ComplexHalf":
        return error
    return type(error)(str(error).replace("ComplexFloat", "ComplexHalf"))


def binary_operands(a, b):
    """The fast paths of binary ops: same-dtype tensors pass straight through, and a
    Python float (int) with a floating (integer or floating) tensor takes its dtype."""
    if type(a) is Tensor:
        if type(b) is Tensor:
            if a._data.dtype == b._data.dtype:
                return a, b
        elif type(b) in _WEAK_KINDS and a._data.dtype.kind in _WEAK_KINDS[type(b)]:
            return a, scalar_tensor(b, a._data.dtype)
    return promote(a, b)


_SCALARS = {}


def scalar_tensor(value, np_dtype):
    """A 0-d constant for a Python number, cached: loops like ``y = y * 1.0001`` make
    the same constant over and over. Constants never require grad and chainrule never
    writes to them; the cache is bounded, and emptied when full (a loop whose numbers
    change every step, a learning rate's schedule, must not lock out the constants
    that repeat)."""
    key = (type(value), value, np_dtype)
    t = _SCALARS.get(key)
    if t is None:
        try:
            arr = np.array(value, np_dtype)
        except OverflowError:
            arr = wrapped_integer(value, np_dtype)
        arr.flags.writeable = False
        t = Tensor._wrap(arr)
        if len(_SCALARS) >= 1024:
            _SCALARS.clear()
        _SCALARS[key] = t
    return t


def hidden_from_saved_hooks(t):
    """Whether saved-tensor hooks skip ``t``, as the reference's skip its undefined
    tensors and "wrapped numbers": ABSENT (Note [absent tensor input]) and
    scalar_tensor's constant for a Python number."""
    if t is ABSENT:
        return True
    arr = t._data
    if type(arr) is not np.ndarray or arr.ndim or arr.flags.writeable:
        return False
    value = arr.item()
    return any(_SCALARS.get((kind, value, arr.dtype)) is t for kind in (float, int, bool, complex))


def wrapped_integer(value, np_dtype):
    """A Python int beyond an integer dtype's range as the reference casts a number
    meeting a tensor (a C cast, modulo 2**bits): ``uint8_tensor + (-1)`` adds 255.
    Beyond 64 bits, its OverflowError."""
    if type(value) is not int or np_dtype.kind not in "iu":
        return np.array(value, np_dtype)             # NumPy's own error
    if not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert")
    return np.array(value % 2 ** 64, np.uint64).astype(np_dtype)


# Python scalar type -> tensor dtype kinds that absorb it without promotion
# (bfloat16 is kind "V"; bool tensors promote with ints, so "b" is absent).
_WEAK_KINDS = {float: "fcV", int: "iufcV"}


def cast(t, dtype):
    if t._data.dtype == dtype.np:
        return t
    from .elementwise import to_dtype
    return to_dtype(t, dtype)


def float_input(t):
    """Integer and bool inputs of floating ops are cast to the default dtype."""
    if t._data.dtype.kind in "biu":
        return cast(t, _dtypes.get_default_dtype())
    return t


def not_implemented_for(kernel, np_dtype, operands=()):
    """The reference's error for a CPU kernel that lacks ``np_dtype``, which ``operands``
    promoted to (Note [ComplexHalf stands in as complex64])."""
    return complex_half_error(kernel_error(f"{kernel}_cpu")(np_dtype), operands)


# Note [kernels without a dtype]
#     Each of the reference's CPU kernels is compiled for a set of dtypes; called with
#     another it raises NotImplementedError '"<kernel>" not implemented for '<Type>''
#     (a few ops have a message of their own). NumPy's ufuncs accept more (abs and
#     floor of bool, round of complex, heaviside of integers as floats) or fail with
#     their own TypeError. The forward of such an op is wrapped by `refusing`, given
#     {kinds: error factory}, which looks the kind of its first array up in one dict
#     before any work: the Python path and the C fast methods (which run a forward and,
#     when it raises, the Python function) both give the reference's error, and a kind
#     the op has a kernel for costs one membership test.
#     tests/test_parity_dtypes.py compares each op with the reference for every dtype.
BOOL_KIND, INTEGER_KINDS, COMPLEX_KIND = "b", "iu", "c"     # NumPy dtype kinds


def kernel_error(kernel):
    """The factory of the reference's error for ``kernel``, named in full ("abs_cpu")."""
    return lambda np_dtype: NotImplementedError(
        f'"{kernel}" not implemented for \'{_dtypes.scalar_type_name(np.dtype(np_dtype))}\'')


def errors_by_kind(refusals):
    """``{kinds: error factory}`` spread to one entry a dtype kind character."""
    return {kind: error for kinds, error in refusals.items() for kind in kinds}


def refusing(forward, refusals):
    """``forward``, raising ``error(dtype)`` first when its first argument's dtype kind
    is among the ``kinds`` of ``refusals`` = ``{kinds: error}`` (Note [kernels without a
    dtype]).

    >>> import numpy as np
    >>> from chainrule._ops._common import raising, refusing
    >>> floor = refusing(np.floor, {"b": raising(TypeError, "no bool kernel")})
    >>> floor(np.array([1.5])).tolist()
    [1.0]
    >>> floor(np.array([True]))
    Traceback (most recent call last):
    TypeError: no bool kernel
    """
    by_kind = errors_by_kind(refusals)

    def checked(a, *args, **kwargs):
        if a.dtype.kind in by_kind:     # a miss, the common path, is this one lookup
            raise by_kind[a.dtype.kind](a.dtype)
        return forward(a, *args, **kwargs)
    checked.__name__ = getattr(forward, "__name__", "forward")
    return checked


def raising(exc_type, message):
    """An error factory for ``refusing`` whose message does not name the dtype."""
    return lambda np_dtype: exc_type(message)


def apply_real_binary(op, kernel, input, other):
    """``apply_binary`` for an op NumPy refuses on complex operands (floor division,
    remainder): the reference's NotImplementedError naming ``kernel``."""
    try:
        return apply_binary(op, input, other)
    except TypeError:
        dtype = promote(input, other)[0]._data.dtype     # a TypeError for a list, ...
        if dtype.kind != "c":
            raise
        raise not_implemented_for(kernel, dtype, (input, other)) from None


def broadcast_error(a_shape, b_shape):
    a, b = list(a_shape), list(b_shape)
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + a
    b = [1] * (n - len(b)) + b
    for i in range(n - 1, -1, -1):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            return RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor "
                                f"b ({b[i]}) at non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(a_shape)} and {list(b_shape)} cannot be broadcast")


def apply_binary(op, a, b, attrs=EMPTY):
    a, b = binary_operands(a, b)
    try:
        return apply_op(op, (a, b), attrs)
    except ValueError:
        if a._data.shape != b._data.shape:
            raise broadcast_error(a._data.shape, b._data.shape) from None
        raise


wrap_dim = _tensor_module._wrap_dim


def wrap_dims(dim, ndim):
    """Normalise a dim argument (int, tuple, list or None) to a sorted tuple or None."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (wrap_dim(dim, ndim),)
    dims = tuple(wrap_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        repeated = next(d for i, d in enumerate(dims) if d in dims[:i])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return tuple(sorted(dims))


def check_inplace(t):
    """The reference's rule: no in-place ops on leaves (or their views) that require
    grad while grad mode is on."""
    if not _MODE.grad_enabled:
        return
    extra = t._extra
    if t._requires_grad and extra is not None and extra.creation is not None:
        raise view_write_error(t)              # Note [how a view was made]
    if t.grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = t._base
    if base is not None and t._requires_grad and base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if t.is_inference() and not _MODE.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")


def check_inplace_cast(result_dtype, own_dtype, operands=()):
    """The reference's error when an in-place result (of ``operands``) cannot be written
    back (Note [ComplexHalf stands in as complex64])."""
    if not _dtypes.can_cast(result_dtype, own_dtype):
        raise complex_half_error(RuntimeError(
            f"result type {_dtypes.scalar_type_name(result_dtype)} can't be cast to the "
            f"desired output type {_dtypes.scalar_type_name(own_dtype)}"), operands)


# Note [the cast is checked first]: an in-place op whose kernel fails (a dtype it lacks,
# an integer division by zero) reports instead that its result cannot be written back
# when that is so: the reference checks the cast before its kernel runs, though after
# the op's own argument checks (bool subtraction). Its operands are the tensors and,
# for a binary op, the number (lerp's weight is not one); comparisons write bools.
_WRITES_BOOL = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"}


def cast_error_first(name, self, args, error):
    """Raise the cast error in place of ``error`` (Note [the cast is checked first])."""
    kernel_failure = isinstance(error, NotImplementedError) or str(error) == "ZeroDivisionError"
    if not kernel_failure or name in _WRITES_BOOL:
        return
    operands = _cast_operands(self, args)
    try:
        common = promote(*operands)[0]._data.dtype
    except Exception:            # noqa: BLE001 - no common dtype: the op's own error stands
        return
    check_inplace_cast(common, self._data.dtype, operands)


def _cast_operands(self, args):
    """What an in-place op's result is promoted from (Note [the cast is checked first])."""
    return [self] + [a for a in args if isinstance(a, Tensor) or
                     (len(args) == 1 and isinstance(a, (bool, int, float, complex)))]


def inplace_form(name, fn):
    """``name_``: ``fn(self, *args)`` written into ``self`` (Note [the cast is checked
    first])."""
    def inplace(self, *args):
        try:
            out = fn(self, *args)
        except (RuntimeError, NotImplementedError) as error:
            cast_error_first(name, self, args, error)
            raise
        return commit_inplace(self, out, args)
    inplace.__name__ = inplace.__qualname__ = name + "_"
    return inplace


def commit_inplace(t, result, args=()):
    """Write an out-of-place result (of ``t`` and the op's ``args``) into ``t`` and make
    ``t`` its output."""
    if type(t) is BatchedTensor or type(result) is BatchedTensor:
        return commit_batched(t, result)
    check_inplace(t)
    if _saved_hooks.ACTIVE[0]:
        from ..autograd.graph import _before_inplace_mutation
        _before_inplace_mutation(t)
    if result._data.shape != t._data.shape:
        raise RuntimeError(f"output with shape {list(t._data.shape)} doesn't match the "
                           f"broadcast shape {list(result._data.shape)}")
    if t._data.dtype != result._data.dtype:
        check_inplace_cast(result._data.dtype, t._data.dtype, _cast_operands(t, args))
    if t._base is not None or not t._data.flags.writeable:    # views, and a detached one
        check_view_inplace(t, result)
    if result.grad_fn is not None and getattr(result.grad_fn, "_saved", None):
        _keep_original_self(result.grad_fn, t)
    if t._data.flags.writeable:
        np.copyto(t._data, result._data, casting="unsafe")
    else:
        with unlocked_for_inplace(t):           # Note [read-only saved arrays]
            np.copyto(t._data, result._data, casting="unsafe")
    t._bump_version()
    if result.grad_fn is not None:
        rebase_inplace(t, result)
    if _tangent_slot.SLOT is not None:          # Note [tangent slot]
        _tangent_slot.SLOT.inplace(t, result)
    return t


def _keep_original_self(node, t):
    """The in-place op's node saved ``t`` itself (e.g. ``y.mul_(b)`` needs the old y
    for b's gradient): keep a copy of the values about to be overwritten, like the
    reference's ``original_self``."""
    for saved in node._saved.values():
        if saved.tensor is t:
            saved.detach_from_mutation()
            if saved.tensor is t:              # t has no history: a constant copy will do
                saved.tensor = Tensor._wrap(saved.data)
            if _tangent_slot.SLOT is not None:  # Note [tangent slot]
                _tangent_slot.SLOT.kept_original(t, saved.tensor)


# Note [in-place writes of batched values]
#     Writing batched values into a tensor not batched at their level is an error
#     worded by the reference's batching rule of the op: a broadcasting rule (add_,
#     atan2_, ...) compares the physical shapes; the rules written as "inplace
#     arithmetic" (sub_, mul_, copy_, masked_fill_, indexing writes, ...) and the
#     named ones (fill_, index_put_, ...) say so; the rest run its fallback, which
#     names the aten op and the vmap level. The op is the in-place method running.
_BROADCAST_RULES = frozenset(("add_", "atan2_", "copysign_", "bitwise_and_", "bitwise_or_",
                              "bitwise_xor_"))
_NAMED_RULES = frozenset(("fill_", "index_put_", "index_add_", "index_fill_"))
_FALLBACK_RULES = frozenset((
    "pow_", "fmod_", "remainder_", "hypot_", "floor_divide_", "xlogy_", "nextafter_",
    "ldexp_", "float_power_", "lt_", "le_", "gt_", "ge_", "eq_", "ne_", "addcdiv_",
    "addcmul_", "lerp_", "igamma_", "igammac_", "heaviside_", "subtract_", "clamp_",
    "scatter_", "scatter_add_", "masked_scatter_"))


def _unbatched_self_error(t, result, level):
    """Note [in-place writes of batched values]."""
    from .._batched import LEVELS
    from .._torch_function import inplace_method_on_stack
    name = inplace_method_on_stack()
    if name in _BROADCAST_RULES:
        shape = (unwrap_all(t)[0] if type(t) is BatchedTensor else t)._data.shape
        return RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast "
                            f"shape {list(unwrap_all(result)[0]._data.shape)}")
    where = "in a vmap"
    if name in _FALLBACK_RULES:
        name, where = f"aten::{name}", f"at level {LEVELS.stack.index(level) + 1}"
    elif name not in _NAMED_RULES:
        name = "inplace arithmetic"
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
        f"`other` in extra_args that has more elements than `self`. This happened due to "
        f"`other` being vmapped over but `self` not being vmapped over {where}. Please try "
        f"to use out-of-place operators instead of {name}. If said operator is being called "
        f"inside the PyTorch framework, please file a bug report instead.")


def commit_batched(t, result):
    """commit_inplace for batched tensors (Note [batched tensors]): the physical result
    is written into ``t``'s physical tensor; writing batched values into a tensor not
    batched at that level is the reference's error."""
    from .._batched import batched_at
    from ._batching_rules import _expand_batch
    level = result._level if type(result) is BatchedTensor else None
    if level is not None and (type(t) is not BatchedTensor or t._level.id < level.id):
        raise _unbatched_self_error(t, result, level)
    physical = result._value if batched_at(result, t._level) else \
        _expand_batch(result, t._level.size)
    commit_inplace(t._value, physical)
    return t
