"""The listed ops that chainrule writes as composites of table ops (addmm, cross_entropy,
...), and the listed table ops whose public function checks dtypes before the op runs
(mm of a bfloat16 and a float32 matrix, linalg.inv of a bfloat16 one): wrapped where
they are published so that autocast casts their arguments first and runs them below
autocast (Note [autocast dispatch])."""
import functools
import types

from .. import _dtypes
from .._ops import FUNCTIONS
from .._tensor import Tensor
from ._policy import ACTIVE, BELOW, FP32, LOWER, PROMOTE, _cast_to, _target_dtype, is_eligible
from ._state import STATE

# (module under chainrule, names): the reference's CPU lists, for chainrule's composites
COMPOSITES = {
    LOWER: {"": ("mm", "bmm", "matmul", "einsum", "addmm", "baddbmm", "addbmm",
                 "chain_matmul"),
            "nn.functional": ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                              "conv_transpose3d", "prelu", "scaled_dot_product_attention"),
            "linalg": ("vecdot",),
            "_ops.nn": ("linear",)},               # (what F.linear and attention call)
    FP32: {"": ("cdist", "quantile", "nanquantile", "inverse", "cholesky_inverse",
                "cholesky_solve", "pinverse", "cholesky", "qr", "svd", "triangular_solve",
                "stft"),
           "nn.functional": ("cross_entropy", "l1_loss", "smooth_l1_loss", "huber_loss",
                             "binary_cross_entropy", "binary_cross_entropy_with_logits",
                             "kl_div", "cosine_embedding_loss", "margin_ranking_loss",
                             "soft_margin_loss", "poisson_nll_loss", "hinge_embedding_loss",
                             "triplet_margin_loss", "multi_margin_loss",
                             "multilabel_soft_margin_loss", "multilabel_margin_loss",
                             "ctc_loss", "max_pool3d", "adaptive_max_pool3d",
                             "adaptive_avg_pool3d", "avg_pool3d", "max_unpool2d",
                             "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d",
                             "grid_sample"),
           "linalg": ("inv", "solve", "lu_solve", "cholesky", "qr", "svd", "eigh", "eig", "lstsq", "svdvals", "eigvalsh", "eigvals", "cond", "matrix_rank", "tensorinv",
                      "tensorsolve", "householder_product", "cholesky_ex", "inv_ex")},
    PROMOTE: {"": ("index_copy",)},
    # Not listed, but written here with listed table ops (matmul) where the reference
    # has kernels of their own: they run below autocast, uncast.
    BELOW: {"nn.functional": ("adaptive_avg_pool1d", "adaptive_avg_pool2d", "interpolate",
                              "upsample", "upsample_bilinear", "bilinear")},
}


def _tensors_in(values):
    """The tensors among ``values`` and inside its lists and tuples, in order."""
    found = []
    for v in values:
        if isinstance(v, Tensor):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found += _tensors_in(v)
    return found


def _dtype_for(policy, tensors, device_type):
    if policy == PROMOTE:
        return _target_dtype(policy, tensors, device_type)
    return STATE.dtype[device_type] if policy == LOWER else _dtypes.float32


def _cast_value(value, device_type, dtype):
    """``value`` with its eligible tensors (also inside lists, tuples, dicts) cast."""
    if isinstance(value, Tensor):
        return _cast_to(value, dtype) if is_eligible(value, device_type) and \
            value.dtype is not dtype else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_value(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_value(v, device_type, dtype) for k, v in value.items()}
    return value


def _autocast_wrapper(fn, policy):
    # Everything the wrapper reads is a closure variable: it is rebuilt below with
    # ``fn``'s globals, so that it belongs to fn's module as fn did (its docstring
    # example stays where the docstring tests look for it).
    active, state, tensors_in, cast, dtype_for = (ACTIVE, STATE, _tensors_in, _cast_value,
                                                  _dtype_for)

    def autocast_composite(*args, **kwargs):
        if not active[0] or state.excluded:
            return fn(*args, **kwargs)
        tensors = tensors_in(args + tuple(kwargs.values()))
        device_type = tensors[0].device.type if tensors else None
        if device_type is None or not state.enabled.get(device_type):
            return fn(*args, **kwargs)
        if policy != "below":
            dtype = dtype_for(policy, tensors, device_type)
            args, kwargs = cast(args, device_type, dtype), cast(kwargs, device_type, dtype)
        state.excluded += 1
        try:
            return fn(*args, **kwargs)
        finally:
            state.excluded -= 1

    wrapper = types.FunctionType(autocast_composite.__code__, fn.__globals__, fn.__name__,
                                 None, autocast_composite.__closure__)
    wrapper = functools.update_wrapper(wrapper, fn)
    wrapper._autocast_policy = policy
    return wrapper


def _namespaces(module_name):
    """Where the names of ``module_name`` are published: the function table and
    Tensor's methods for top-level names; the top level for nn.functional's too (torch.
    conv1d, ...)."""
    import chainrule
    if module_name == "":
        return [vars(chainrule), FUNCTIONS, Tensor]
    if module_name == "nn.functional":
        return [vars(chainrule.nn.functional), vars(chainrule)]
    return [vars(functools.reduce(getattr, module_name.split("."), chainrule))]


def install():
    """Wrap every listed function wherever it is published, and in the module that
    defines it (each distinct function once: a NumPy-spelling wrapper and the function
    it wraps are both wrapped)."""
    wrappers = {}
    for policy, modules in COMPOSITES.items():
        for module_name, names in modules.items():
            for namespace in _namespaces(module_name):
                for name in names:
                    _wrap_in(namespace, name, policy, wrappers)


def _wrap_in(namespace, name, policy, wrappers):
    is_class = isinstance(namespace, type)
    original = vars(namespace).get(name) if is_class else namespace.get(name)
    if original is None or hasattr(original, "_autocast_policy"):
        return
    if id(original) not in wrappers:
        wrappers[id(original)] = _autocast_wrapper(original, policy)
        home = getattr(original, "__globals__", {})    # its module's own callers too
        if home.get(original.__name__) is original:
            home[original.__name__] = wrappers[id(original)]
    if is_class:
        setattr(namespace, name, wrappers[id(original)])
    else:
        namespace[name] = wrappers[id(original)]
