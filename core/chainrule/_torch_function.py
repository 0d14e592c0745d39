"""The ``__torch_function__`` protocol: Tensor subclasses, tensor-like types and
function modes (the machinery behind ``chainrule.overrides``).

Note [torch function slot]
    The reference lets a Tensor subclass, a "tensor-like" class (any type with a
    ``__torch_function__``) or a ``TorchFunctionMode`` take over every public call:
    ``chainrule.*``, ``Tensor`` methods, properties and operators,
    ``nn.functional``, ``linalg``, ``fft``, ``special`` and ``autograd.backward/grad``.
    Each of those is built, once, as a *dispatching wrapper* around the function
    that does the work (``install`` walks the public namespaces after they are
    built). A wrapper costs one check per call: the module flag ``ON``, False until
    a subclass that does not disable the protocol is defined, a mode is entered or
    a tensor-like object is met. Exact Tensors and Parameters pay nothing more; the
    C++ fast methods take exact Tensors only and fall back to the wrapper (Note
    [method slot]). A tensor-like met while ``ON`` is False makes the call fail
    (chainrule cannot compute on it): the wrapper sees it on the exception path,
    turns ``ON`` on and dispatches (zero-cost exceptions: nothing on the fast path).
    With ``ON`` on, ``_dispatch`` collects the overloaded arguments (positional,
    keyword and one level into lists and tuples; subclasses before their
    superclasses), asks the innermost mode (popped while it runs), then each
    argument's ``__torch_function__``, like the reference's handle_torch_function.
    The default ``Tensor.__torch_function__`` runs the call with subclass dispatch
    disabled and converts Tensor results to the caller's subclass.
"""
import os
import sys
import threading
import types

ON = [False]     # Note [torch function slot]: read by every wrapper


class _State(threading.local):
    """Per thread, like the reference: the mode stack and the two disable flags."""

    def __init__(self):
        self.modes = []
        self.subclass_disabled = False
        self.all_disabled = False


STATE = _State()


def enable():
    """Turn dispatch on for good (Note [torch function slot])."""
    ON[0] = True


class _DisabledTorchFunctionImpl:
    """``torch._C._disabled_torch_function_impl``: a ``__torch_function__`` that runs
    the call with subclass dispatch off and returns its result unconverted. Not a
    descriptor (like the reference's builtin), so a class attribute stays this object."""

    def __call__(self, func, types, args=(), kwargs=None):
        with disabled_subclasses():
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"


DISABLED = _DisabledTorchFunctionImpl()


class disabled_subclasses:
    """``with``: subclass ``__torch_function__`` off (modes still see calls)."""

    def __enter__(self):
        self._old = STATE.subclass_disabled
        STATE.subclass_disabled = True
        return self

    def __exit__(self, *exc):
        STATE.subclass_disabled = self._old


class disabled_all:
    """``with``: every ``__torch_function__`` off, modes included."""

    def __enter__(self):
        self._old = STATE.subclass_disabled, STATE.all_disabled
        STATE.subclass_disabled = STATE.all_disabled = True
        return self

    def __exit__(self, *exc):
        STATE.subclass_disabled, STATE.all_disabled = self._old


# --- overloaded arguments ------------------------------------------------------------------
_OVERRIDES = {}       # type -> whether its __torch_function__ takes part (cached)
_PLAIN = frozenset((int, float, bool, complex, str, type(None), slice, type(Ellipsis)))


def _overrides(t, plain_tensor):
    """Whether an argument of type ``t`` takes part in dispatch: a type with a
    ``__torch_function__`` other than the disabled one; the exact Tensor only when
    ``plain_tensor`` (the reference's Python-level functions count it, its C
    functions do not)."""
    known = _OVERRIDES.get(t)
    if known is None:
        known = _OVERRIDES[t] = _kind(t)
    return plain_tensor if known is _EXACT else known


_EXACT = "the exact Tensor"


def _kind(t):
    from ._tensor import Tensor
    if t is Tensor:
        return _EXACT
    method = getattr(t, "__torch_function__", DISABLED)
    return method is not DISABLED and not _reference_default(method)


def _reference_default(method):
    """Whether ``method`` is the reference library's own Tensor.__torch_function__ (a
    torch tensor handed to a chainrule function, by dlpack or numpy interop): it only
    calls the function again, which would dispatch back to it without end."""
    fn = getattr(method, "__func__", method)
    return getattr(fn, "__qualname__", None) == "Tensor.__torch_function__" and \
        getattr(fn, "__module__", None) == "torch._tensor"


def _candidates(args, kwargs):
    for a in args:
        if type(a) in (list, tuple):
            yield from a
        else:
            yield a
    if kwargs:
        yield from kwargs.values()


def overloaded_args(values, plain_tensor=True):
    """The arguments whose ``__torch_function__`` is asked, one per type, in order
    of appearance except that a subclass comes before its superclass."""
    out, seen = [], set()
    for a in values:
        t = type(a)
        if t in _PLAIN or t in seen or not _overrides(t, plain_tensor):
            continue
        seen.add(t)
        index = next((i for i, o in enumerate(out) if issubclass(t, type(o))), len(out))
        out.insert(index, a)
    return out


def tensor_like_type(t):
    """Whether objects of type ``t`` are tensor-likes: no Tensor, a
    ``__torch_function__`` (other than the disabled one)."""
    from ._tensor import Tensor
    return t not in _PLAIN and _overrides(t, False) and not issubclass(t, Tensor)


def _tensor_like_met(args, kwargs):
    """Whether a call that failed was given a tensor-like object (not a Tensor)."""
    from ._tensor import Tensor
    return any(not isinstance(a, Tensor) and _overrides(type(a), False)
               for a in _candidates(args, kwargs) if type(a) not in _PLAIN)


# --- dispatch ------------------------------------------------------------------------------
class Site:
    """What a wrapper dispatches as: its public object (``func``), how the reference
    words its failure, whether exact Tensors count (Python-level functions) and
    whether only modes see it (factories)."""

    __slots__ = ("public", "method", "plain_tensor", "mode_only", "c_level", "module", "out")

    def __init__(self, public=None, method=None, plain_tensor=False, mode_only=False,
                 c_level=True, module=None, out=None):
        self.public, self.method, self.module = public, method, module
        self.plain_tensor, self.mode_only, self.c_level = plain_tensor, mode_only, c_level
        self.out = out        # Note [out= arguments]: the call given out=, or None

    def func(self):
        if self.method is not None:            # the method on Tensor now (Note [method slot])
            from ._tensor import Tensor
            return Tensor.__dict__.get(self.method, self.public)
        return self.public


def _needed(positional, star, kwonly, starstar):
    """Whether a call with dispatch on goes to ``dispatch``: a mode is active (in some
    thread) or an argument has an overriding type; else the wrapper calls ``impl``
    itself (Note [invisible wrapper frames])."""
    return MODES[0] or _any_overriding(positional, star, kwonly, starstar)


def dispatch(site, impl, positional, star, kwonly, starstar):
    """The slow path of a wrapper (Note [torch function slot]): ``handle`` with the
    arguments as the caller gave them, unless this thread's state says otherwise."""
    state = STATE
    if state.all_disabled or (not state.modes and (state.subclass_disabled or site.mode_only)):
        return impl(*positional, *star, **kwonly, **starstar)
    args, kwargs = _as_passed(impl, positional, star, kwonly, starstar)
    overloaded = () if state.subclass_disabled or site.mode_only else \
        overloaded_args(_candidates(args, kwargs), site.plain_tensor)
    if not overloaded and not state.modes:
        return impl(*args, **kwargs)
    return handle(site.func(), overloaded, args, kwargs, site.c_level, site.module)


MODES = [0]      # function modes active in all threads (TorchFunctionMode enter/exit)
_NEVER = set(_PLAIN)    # types known not to override (the exact Tensor among them)


def _any_overriding(positional, star, kwonly, starstar):
    """Whether an argument (or an item of a list or tuple argument) has a type that
    overrides ``__torch_function__`` (exact Tensors and Parameters do not)."""
    never = _NEVER
    for a in positional:
        t = type(a)
        if t not in never and _overriding(a, t):
            return True
    if star or kwonly or starstar:
        rest = [*star, *kwonly.values(), *starstar.values()]
        return any(type(a) not in never and _overriding(a, type(a)) for a in rest)
    return False


def _overriding(a, t):
    if t is list or t is tuple:
        return any(type(b) not in _NEVER and _overriding(b, type(b)) for b in a
                   if type(b) is not list and type(b) is not tuple)
    if _overrides(t, False):
        return True
    _NEVER.add(t)
    return False


def handle(func, overloaded, args, kwargs, c_level=False, module=None):
    """The innermost mode, then each overloaded argument's ``__torch_function__``;
    the reference's TypeError when all return NotImplemented."""
    types = tuple(type(a) for a in overloaded)
    modes = STATE.modes
    if modes and not STATE.all_disabled:
        mode = modes.pop()
        try:
            result = mode.__torch_function__(func, types, args, kwargs)
        finally:
            modes.append(mode)
        if result is not NotImplemented:
            return result
    if not STATE.subclass_disabled:
        for a in overloaded:
            result = type(a).__torch_function__(func, types, args, kwargs)
            if result is not NotImplemented:
                return result
    raise TypeError(_no_implementation(func, overloaded, c_level, module))


def _no_implementation(func, overloaded, c_level, module):
    module = module or getattr(func, "__module__", None) or "chainrule"
    name = f"{module}.{getattr(func, '__name__', func)}"
    if c_level:
        kinds = "".join(f"  - tensor subclass {type(a)}\n" for a in overloaded)
        mode = STATE.modes[-1] if STATE.modes else None
        kinds += f"  - mode object {mode}\n" if mode is not None else ""
        return (f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers "
                f"returned NotImplemented:\n\n{kinds}\nFor more information, try re-running "
                "with TORCH_LOGS=not_implemented")
    msg = (f"no implementation found for '{name}' on types that implement __torch_function__: "
           f"{[type(a) for a in overloaded]}")
    if STATE.modes:
        msg += f" nor in mode {STATE.modes[-1]}"
    return msg


# Note [exact-signature wrappers]
#     A wrapper taking ``*args, **kwargs`` costs about 150 ns a call (packing and
#     unpacking); one with ``impl``'s own parameters costs about 35 ns. So each wrapper
#     is made from a template with ``impl``'s signature (one compiled template per
#     signature shape, defaults copied from ``impl``). The slow path passes the call's
#     arguments on as given, less trailing arguments equal to their defaults.
_TEMPLATES = {}
_CODES = set()        # the wrappers' code objects
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


def _signature(impl):
    """(positional-only count, positional names, *name, keyword-only names, **name,
    defaulted positional count, defaulted keyword-only names) of ``impl``."""
    code = getattr(impl, "__code__", None)
    if code is None or not isinstance(impl, types.FunctionType):
        return 0, (), "args", (), "kwargs", 0, ()
    names = code.co_varnames
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    star = names[npos + nkw] if code.co_flags & _CO_VARARGS else None
    starstar = names[npos + nkw + (star is not None)] if code.co_flags & _CO_VARKEYWORDS else None
    kwonly = names[npos:npos + nkw]
    return (code.co_posonlyargcount, names[:npos], star, kwonly, starstar,
            len(impl.__defaults__ or ()), tuple(k for k in kwonly if k in (impl.__kwdefaults__ or {})))


def _template_source(sig):
    posonly, pos, star, kwonly, starstar, ndefaults, kwdefaults = sig
    params = [p + ("=None" if i >= len(pos) - ndefaults else "") for i, p in enumerate(pos)]
    if posonly:
        params.insert(posonly, "/")
    if star or kwonly:
        params.append("*" + (star or ""))
    params += [k + ("=None" if k in kwdefaults else "") for k in kwonly]
    params += ["**" + starstar] if starstar else []
    call = list(pos) + (["*" + star] if star else []) + [f"{k}={k}" for k in kwonly] + \
        (["**" + starstar] if starstar else [])
    given = (f"({', '.join(pos)}{',' if len(pos) == 1 else ''})", star or "()",
             "{" + ", ".join(f"{k!r}: {k}" for k in kwonly) + "}", starstar or "{}")
    passed = f"_tf_as_passed(_tf_impl, {', '.join(given)})"
    raw = ", ".join(given)
    return f"""
def _tf_make(_tf_on, _tf_site, _tf_impl, _tf_dispatch, _tf_met, _tf_as_passed, _tf_needed):
    def dispatching({', '.join(params)}):
        if _tf_on[0] and _tf_needed({raw}):
            return _tf_dispatch(_tf_site, _tf_impl, {raw})
        try:
            return _tf_impl({', '.join(call)})
        except Exception:
            if not _tf_met(*{passed}):
                raise
        _tf_on[0] = True
        return _tf_dispatch(_tf_site, _tf_impl, {raw})
    return dispatching
"""


# Note [invisible wrapper frames]
#     A wrapper is one more frame between a user's call and the function, which would
#     shift every ``warnings.warn(..., stacklevel=2)`` onto the wrapper and show it in
#     the profiler's stacks. Its code's file name lies in this package (the profiler
#     leaves chainrule's own frames out) and contains "importlib" and "_bootstrap",
#     the marks by which CPython's warnings skip interpreter-internal frames when
#     counting ``stacklevel``: warnings point at the user's line, as without wrappers.
_WRAPPER_FILENAME = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "<torch function wrapper, skipped like importlib._bootstrap>")


def _out_template_source(sig):
    """``_template_source``'s wrapper with a keyword-only ``out`` as well: a call given
    ``out`` goes to its Site's out form (Note [out= arguments] in _ops/_out.py), any
    other is the plain wrapper's, which calls ``impl`` without it (so an accelerator's
    replacement of ``impl``, Note [method slot], still takes the call)."""
    pos, star, kwonly, starstar = sig[1:5]
    source = _template_source(sig)
    start = source.index("    def dispatching(") + len("    def dispatching(")
    end = source.index("):\n", start)
    params = source[start:end].split(", ") if end > start else []
    keyword = ["out=None"] if star or kwonly else ["*", "out=None"]
    params[len(params) - bool(starstar):len(params) - bool(starstar)] = keyword
    given = (f"({', '.join(pos)}{',' if len(pos) == 1 else ''}), {star or '()'}, "
             "{" + ", ".join(f"{k!r}: {k}" for k in kwonly) + "}, " + (starstar or "{}"))
    return (source[:start] + ", ".join(params) + "):\n        if out is not None:\n"
            f"            return _tf_site.out({given}, out)\n" + source[end + 3:])


def _template(sig, out=False):
    """The code object of the wrapper for signature ``sig`` (compiled once per shape),
    taking ``out=`` too where ``out``."""
    code = _TEMPLATES.get((sig, out))
    if code is None:
        scope = {}
        source = _out_template_source(sig) if out else _template_source(sig)
        exec(compile(source, _WRAPPER_FILENAME, "exec"), scope)  # noqa: S102
        code = _TEMPLATES[(sig, out)] = scope["_tf_make"](*[None] * 7).__code__
    return code


# Note [shared wrapper cells]
#     Every wrapper's closure reads the same five objects (ON, dispatch, ...) and two
#     of its own (its Site, its impl). Over a thousand wrappers, a cell per object
#     each would be thousands of objects the garbage collector walks on every full
#     collection (and whose walk evicts the caches a program's next step needs); the
#     five cells are made once and shared.
_SHARED_CELLS = {}


def _closure(code, site, impl):
    if not _SHARED_CELLS:
        _SHARED_CELLS.update((name, types.CellType(value)) for name, value in (
            ("_tf_on", ON), ("_tf_dispatch", dispatch), ("_tf_met", _tensor_like_met),
            ("_tf_as_passed", _as_passed), ("_tf_needed", _needed)))
    own = {"_tf_site": site, "_tf_impl": impl}
    return tuple(_SHARED_CELLS[name] if name in _SHARED_CELLS else types.CellType(own[name])
                 for name in code.co_freevars)


def _as_passed(impl, positional, star, kwonly, starstar):
    """(args, kwargs) as the caller gave them, as far as can be told: trailing
    positional arguments and keyword-only ones that are their defaults dropped."""
    args = list(positional)
    defaults = getattr(impl, "__defaults__", None) or ()
    if not star:
        first_default = len(args) - len(defaults)
        while len(args) > first_default and args[-1] is defaults[len(args) - 1 - first_default]:
            args.pop()
    kwdefaults = getattr(impl, "__kwdefaults__", None) or {}
    kwargs = {k: v for k, v in kwonly.items() if not (k in kwdefaults and v is kwdefaults[k])}
    kwargs.update(starstar)
    return tuple(args) + tuple(star), kwargs


def wrap(impl, site, name=None):
    """``impl`` behind the one-check wrapper of Note [torch function slot] (Note
    [exact-signature wrappers]), named ``name``, with ``impl``'s docstring and
    globals (so that doctest finds it where ``impl`` lives); ``retarget`` may change
    what it calls (Note [method slot])."""
    template = _template(_signature(impl), site.out is not None)
    scope = getattr(impl, "__globals__", globals())
    name = name or getattr(impl, "__name__", "dispatching")
    # a code object of its own: the call to impl specializes for this impl alone
    code = template.replace(co_firstlineno=template.co_firstlineno)
    _CODES.add(code)
    wrapper = types.FunctionType(code, scope, name, getattr(impl, "__defaults__", None),
                                 _closure(code, site, impl))    # Note [shared wrapper cells]
    wrapper.__kwdefaults__ = getattr(impl, "__kwdefaults__", None)
    if site.out is not None:
        wrapper.__kwdefaults__ = {**(wrapper.__kwdefaults__ or {}), "out": None}
    wrapper.__wrapped__ = impl
    wrapper.__doc__ = getattr(impl, "__doc__", None)
    wrapper.__module__ = getattr(impl, "__module__", None)
    wrapper.__qualname__ = getattr(impl, "__qualname__", name)
    return wrapper


def is_wrapper(value):
    """Whether ``value`` is a dispatching wrapper made by ``wrap``."""
    return isinstance(value, types.FunctionType) and value.__code__ in _CODES


def site_of(wrapper):
    """The Site a wrapper dispatches as."""
    return wrapper.__closure__[wrapper.__code__.co_freevars.index("_tf_site")].cell_contents


def _sites_on_stack():
    """The Sites of the dispatching wrappers running on this thread's stack, innermost
    first (a slow walk: error paths only)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "dispatching":
            site = frame.f_locals.get("_tf_site")
            if site is not None:
                yield site
        frame = frame.f_back


def inplace_method_on_stack():
    """The name of the innermost in-place Tensor method (``add_``, ``__setitem__``)
    running on this thread's stack, read from its wrapper's Site; None when there is
    none. For error messages that name the reference's op."""
    for site in _sites_on_stack():
        method = site.method
        if method is not None and (method.endswith("_") or method == "__setitem__"):
            return method
    return None


def call_on_stack():
    """(name, whether a Tensor method) of the innermost public call running on this
    thread's stack (``("atan2_", True)`` inside ``x.atan2_(y)``), or (None, False)
    outside any: for messages that name the call as the user made it."""
    for site in _sites_on_stack():
        if site.method is not None:
            return site.method, True
        return getattr(site.public, "__name__", None), False
    return None, False


def retarget(wrapper, impl):
    """Make ``wrapper`` (a result of ``wrap``) call ``impl``."""
    cell = wrapper.__closure__[wrapper.__code__.co_freevars.index("_tf_impl")]
    cell.cell_contents = impl


# --- the default Tensor.__torch_function__ ---------------------------------------------------
def default_torch_function(cls, func, types, args=(), kwargs=None):
    """``Tensor.__torch_function__``: NotImplemented unless ``cls`` is a subclass of
    every type in ``types``; else the call with subclass dispatch off, its Tensor
    results converted to ``cls`` (except the reference's no-wrap getters)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with disabled_subclasses():
        ret = func(*args, **kwargs)
        if func in nowrap_functions():
            return ret
        return convert(ret, cls)


def convert(ret, cls):
    """Tensors in ``ret`` (also inside tuples, lists and named tuples) as ``cls``."""
    from ._tensor import Tensor
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor):
        return ret if isinstance(ret, cls) else ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [convert(r, cls) for r in ret]
        return type(ret)._make(items) if hasattr(type(ret), "_make") else type(ret)(items)
    return ret


def nowrap_functions():
    """The getters whose results the default ``__torch_function__`` leaves as they
    are (``Tensor.grad``, ``Tensor._base``, ``Tensor._grad``)."""
    from ._tensor import Tensor
    return {Tensor.grad.__get__, Tensor._base.__get__, Tensor._grad.__get__}


# --- installation: one wrapper per public function, method and property ---------------------
# Functions that take no tensors, or that the reference leaves to no one (its ignored
# functions); the factories are seen by modes only.
IGNORED = frozenset((
    "is_tensor", "is_storage", "set_default_dtype", "get_default_dtype", "manual_seed",
    "seed", "initial_seed", "get_rng_state", "set_rng_state", "set_printoptions",
    "is_grad_enabled", "is_inference_mode_enabled", "set_default_device",
    "get_default_device", "promote_types", "result_type", "can_cast", "compile", "load",
    "save", "typename", "broadcast_shapes", "vmap", "as_subclass", "from_numpy",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "set_num_threads", "get_num_threads",
    "set_num_interop_threads", "get_num_interop_threads", "set_flush_denormal",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "set_warn_always",
    "is_warn_always_enabled", "set_default_tensor_type", "set_anomaly_enabled",
    "get_deterministic_debug_mode", "set_deterministic_debug_mode",
    "is_deterministic_algorithms_warn_only_enabled", "fork", "wait", "export", "cond"))
FACTORIES = frozenset((
    "zeros", "ones", "empty", "full", "eye", "arange", "linspace", "logspace", "rand",
    "randn", "randint", "randperm", "tensor", "as_tensor", "asarray", "scalar_tensor",
    "empty_strided", "tril_indices", "triu_indices", "range", "bartlett_window",
    "blackman_window", "hamming_window", "hann_window", "kaiser_window"))
# The Tensor attributes that are not dispatched, as in the reference.
TENSOR_IGNORED = frozenset((
    "__init__", "__new__", "__init_subclass__", "__torch_function__", "__hash__",
    "__iter__", "__dir__", "__getattribute__", "__setattr__", "__delattr__",
    "__class_getitem__", "__reduce_ex__", "__deepcopy__", "__array_priority__",
    "as_subclass", "stride"))
# What the reference names the function an operator dispatches as.
OPERATOR_NAMES = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub",
    "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_",
    "__truediv__": "div", "__rtruediv__": "__rdiv__", "__itruediv__": "div_",
    "__matmul__": "matmul", "__pow__": "pow", "__ipow__": "pow_", "__neg__": "neg",
    "__abs__": "abs", "__mod__": "remainder", "__lt__": "lt", "__le__": "le",
    "__gt__": "gt", "__ge__": "ge", "__pos__": "positive"}

# The reference's Tensor methods written in Python (their dispatch counts exact Tensors
# in ``types``) and its nn.functional functions written in C (theirs does not).
PYTHON_METHODS = frozenset((
    "__array__", "__contains__", "__floordiv__", "__format__", "__ipow__", "__len__",
    "__rdiv__", "__repr__", "__reversed__", "__rfloordiv__", "__rlshift__", "__rmatmul__",
    "__rmod__", "__rpow__", "__rrshift__", "__rsub__", "__rtruediv__", "__setstate__",
    "backward", "norm", "register_hook", "register_post_accumulate_grad_hook",
    "share_memory_", "split", "stft", "istft", "storage", "unique", "unique_consecutive",
    "unflatten", "lu", "resize", "resize_as", "is_shared", "dim_order", "module_load"))
C_FUNCTIONAL = frozenset((
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_",
    "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "elu_", "gelu",
    "hardshrink", "hardtanh_", "leaky_relu_", "linear", "logsigmoid",
    "native_channel_shuffle", "one_hot", "pairwise_distance", "pdist", "pixel_shuffle",
    "pixel_unshuffle", "prelu", "relu_", "rrelu_", "scaled_dot_product_attention", "selu_",
    "softplus", "softshrink", "threshold_"))

METHODS = {}      # Tensor attribute name -> its dispatching wrapper (Note [method slot])
FUNCTIONS = []    # the function wrappers, for retarget


def _public_function(value):
    return isinstance(value, types.FunctionType) and \
        (getattr(value, "__module__", None) or "").startswith("chainrule")


def install_functions(module, plain_tensor=False, c_level=True, names=None, prefix="",
                      out_forms=None):
    """Replace ``module``'s public functions by dispatching wrappers (one per
    function object: aliases in a module stay one object), named ``prefix + name``
    like the reference's (``linalg_norm``); ``out_forms(fn, name)`` gives the out=
    form of the function ``name`` (None where it takes no ``out``)."""
    made = {}
    for name in names or list(vars(module)):
        value = vars(module).get(name)
        if name.startswith("_") or name in IGNORED or not _public_function(value) or \
                is_wrapper(value):
            continue
        wrapper = made.get(id(value))
        if wrapper is None:
            c_function = c_level or name in C_FUNCTIONAL
            site = Site(plain_tensor=plain_tensor and not c_function,
                        mode_only=name in FACTORIES, c_level=c_function,
                        module=module.__name__,
                        out=out_forms and out_forms(value, name))
            wrapper = site.public = made[id(value)] = wrap(value, site, prefix + name)
            FUNCTIONS.append(wrapper)
        setattr(module, name, wrapper)


def install_tensor(Tensor):
    """Wrap Tensor's public methods, operators and properties."""
    for name, value in list(vars(Tensor).items()):
        if name in TENSOR_IGNORED or (name.startswith("_") and not name.startswith("__")):
            continue
        if isinstance(value, property):
            setattr(Tensor, name, _dispatching_property(value))
        elif isinstance(value, types.FunctionType):
            alias = OPERATOR_NAMES.get(name, name)       # __add__ dispatches as Tensor.add
            python = name in PYTHON_METHODS
            site = Site(method=alias if alias in vars(Tensor) else name, plain_tensor=python,
                        c_level=not python)
            wrapper = site.public = METHODS[name] = wrap(value, site, alias)
            wrapper.__qualname__ = f"Tensor.{name}"
            setattr(Tensor, name, wrapper)


def _dispatching_property(prop):
    """``prop`` whose getter and setter dispatch as ``Tensor.<name>.__get__`` /
    ``__set__``, like the reference's getset descriptors."""
    get_site, set_site = Site(plain_tensor=True), Site(plain_tensor=True)
    fget = prop.fget and wrap(prop.fget, get_site, "__get__")
    fset = prop.fset and wrap(prop.fset, set_site, "__set__")
    new = property(fget, fset, prop.fdel, prop.__doc__)
    get_site.public, set_site.public = new.__get__, new.__set__
    return new
