"""``nn.utils.prune``: pruning a module's tensor by a mask.

Note [pruning reparametrization]: pruning ``module.<name>`` moves the parameter to
``<name>_orig``, registers the mask as buffer ``<name>_mask`` and keeps ``<name>`` as a
plain attribute equal to ``mask * <name>_orig``, recomputed by the pruning method, which
is registered as a forward pre-hook. Pruning the same tensor again wraps the methods in
a ``PruningContainer``: the new method sees only the entries (or channels) the earlier
masks kept, and its mask is written back onto those. ``remove`` makes the pruned values
the parameter again.
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import numpy as np

from ... import _factories
from ..._ops import FUNCTIONS
from .convert_parameters import parameters_to_vector
from ._torch_select import topk_index_set

_F = FUNCTIONS

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask",
           "identity", "random_unstructured", "l1_unstructured", "random_structured",
           "ln_structured", "global_unstructured", "custom_from_mask", "remove",
           "is_pruned"]


class BasePruningMethod(ABC):
    """Base of the pruning methods: a subclass defines ``PRUNING_TYPE`` and
    ``compute_mask(t, default_mask)`` (Note [pruning reparametrization]).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> class KeepFirst(prune.BasePruningMethod):
    ...     PRUNING_TYPE = "unstructured"
    ...     def compute_mask(self, t, default_mask):
    ...         mask = default_mask.clone(); mask.view(-1)[1:] = 0; return mask
    >>> KeepFirst().prune(cr.tensor([3., 4., 5.])).tolist()
    [3.0, 0.0, 0.0]
    """

    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for ``t``, combined with ``default_mask`` (the earlier mask)."""

    def apply_mask(self, module):
        """``<name>_mask * <name>_orig`` of ``module``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` by ``cls(*args, **kwargs)`` (after any earlier
        pruning of it); the mask is computed from ``importance_scores`` (default: the
        tensor itself). Returns the method registered as the forward pre-hook."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(
                f"importance_scores should have the same shape as parameter {name} of "
                f"{module}, got {importance_scores.shape} vs {orig.shape}")
        first_time = not isinstance(method, PruningContainer)
        if first_time:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _factories.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            _install(module, name, method, method.compute_mask(importance_scores,
                                                               default_mask=default_mask))
        except Exception:
            if first_time:
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask this method computes from ``importance_scores``
        (default ``t``) and ``default_mask`` (default all ones)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError("importance_scores should have the same shape as tensor "
                                 f"t, got {importance_scores.shape} vs {t.shape}")
        if default_mask is None:
            default_mask = _factories.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``<name>`` becomes the parameter again, holding
        the pruned values; ``<name>_orig`` and ``<name>_mask`` go away."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _install(module, name, method, mask):
    module.register_buffer(name + "_mask", mask)
    setattr(module, name, method.apply_mask(module))
    module.register_forward_pre_hook(method)


def _composite_method(cls, module, name, *args, **kwargs):
    """The new method, or the container of the earlier pruning of ``name`` with it
    appended; the earlier hook is taken off the module."""
    earlier = [(key, hook) for key, hook in module._forward_pre_hooks.items()
               if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(earlier) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    for key, _ in earlier:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if not earlier:
        return method
    old = earlier[0][1]
    container = old if isinstance(old, PruningContainer) else PruningContainer(old)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods applied to one tensor in turn: the last one acts on
    what the earlier masks kept (Note [pruning reparametrization]).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> m = cr.nn.Linear(4, 1)
    >>> _ = prune.identity(m, "weight"); _ = prune.l1_unstructured(m, "weight", amount=1)
    >>> hook = next(iter(m._forward_pre_hooks.values()))
    >>> [type(p).__name__ for p in hook]
    ['Identity', 'L1Unstructured']
    """

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Append ``method`` (a BasePruningMethod acting on the same tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the last method's mask written over the part of ``t``
        it still keeps."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        where = _still_kept(method, t, default_mask)
        partial = method.compute_mask(t[where], default_mask=default_mask[where])
        new_mask[where] = partial.to(dtype=new_mask.dtype)
        return new_mask


def _still_kept(method, t, mask):
    """The index of what ``method`` acts on: the unpruned entries (unstructured), the
    channels along ``method.dim`` with an unpruned entry (structured), or all (global)."""
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        return mask == 1
    if kind == "global":
        return (slice(None),) * len(t.shape)
    if kind != "structured":
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
    if not hasattr(method, "dim"):
        raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have '
                             "the attribute `dim` defined.")
    n_dims = t.dim()
    dim = method.dim + n_dims if method.dim < 0 else method.dim
    if dim < 0:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
    keep = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
    return tuple(keep if d == dim else slice(None) for d in range(n_dims))


class Identity(BasePruningMethod):
    """Prunes nothing: the reparametrization with a mask of ones.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> prune.Identity().prune(cr.tensor([1., 2.])).tolist()
    [1.0, 2.0]
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _ByScore(BasePruningMethod):
    """Unstructured pruning of the ``amount`` entries whose ``_scores`` come first
    (largest when ``_PRUNE_LARGEST``)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        count = _checked_count(self.amount, t.nelement())
        mask = default_mask.clone()
        if count != 0:
            scores = self._scores(t).view(-1)
            mask.view(-1)[_topk_indices(scores, count, largest=self._PRUNE_LARGEST)] = 0
        return mask


class RandomUnstructured(_ByScore):
    """Prunes ``amount`` (a count, or a fraction of the entries) entries at random.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> (prune.RandomUnstructured(amount=2).prune(cr.ones(5)) == 0).sum().item()
    2
    """

    _PRUNE_LARGEST = True

    def _scores(self, t):
        return _factories.rand_like(t)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_ByScore):
    """Prunes the ``amount`` (a count, or a fraction) entries of smallest magnitude;
    ties are broken as the reference's ``topk`` does (Note [topk ties in pruning]).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> prune.L1Unstructured(amount=0.5).prune(cr.tensor([3., -1., 2., 0.5])).tolist()
    [3.0, -0.0, 2.0, 0.0]
    """

    _PRUNE_LARGEST = False

    def _scores(self, t):
        return t.abs()

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount,
                             importance_scores=importance_scores)


class _Structured(BasePruningMethod):
    """Pruning of ``amount`` whole channels along ``self.dim``: a subclass says which
    channels it keeps (``_kept_channels``, an index along ``dim``)."""

    PRUNING_TYPE = "structured"

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        channels = t.shape[self.dim]
        count = _checked_count(self.amount, channels)
        if count == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, self._kept_channels(t, channels, count))
        mask *= default_mask.to(dtype=mask.dtype)
        return mask


class RandomStructured(_Structured):
    """Prunes ``amount`` (a count, or a fraction) whole channels along ``dim`` at
    random.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> out = prune.RandomStructured(amount=1, dim=0).prune(cr.ones(3, 2))
    >>> (out.sum(1) == 0).sum().item()
    1
    """

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def _kept_channels(self, t, channels, count):
        scores = _factories.rand(channels)
        return scores > _F["kthvalue"](scores, count).values

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """Prunes the ``amount`` (a count, or a fraction) channels along ``dim`` of
    smallest ``n``-norm (ties as the reference's ``topk``: Note [topk ties in pruning]).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> w = cr.tensor([[1., 2.], [3., 4.], [0., 1.]])
    >>> prune.LnStructured(amount=1, n=2, dim=0).prune(w).tolist()
    [[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]]
    """

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def _kept_channels(self, t, channels, count):
        norm = _compute_norm(t, self.n, self.dim)
        return _topk_indices(norm, channels - count, largest=True)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes by a given ``mask`` (same shape as the tensor).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> prune.CustomFromMask(cr.tensor([1., 0.])).prune(cr.tensor([5., 6.])).tolist()
    [5.0, 0.0]
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def _topk_indices(values, k, largest):
    chosen = topk_index_set(values.detach().numpy(), k, largest)
    return _factories.tensor(chosen, dtype=np.int64)


def _channel_mask(t, dim, keep):
    mask = _factories.zeros_like(t)
    mask[tuple(keep if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


def identity(module, name):
    """Reparametrize ``module.<name>`` with a mask of ones (Note [pruning
    reparametrization]); returns ``module``.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> m = prune.identity(cr.nn.Linear(2, 3), "bias")
    >>> m.bias_mask.tolist()
    [1.0, 1.0, 1.0]
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` (a count, or a fraction) random entries of ``module.<name>``.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> m = prune.random_unstructured(cr.nn.Linear(2, 3), "weight", amount=0.5)
    >>> int((m.weight_mask == 0).sum())
    3
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` (a count, or a fraction) entries of ``module.<name>`` of
    smallest magnitude (of ``importance_scores`` when given).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> m = cr.nn.Linear(2, 2, bias=False)
    >>> with cr.no_grad(): _ = m.weight.copy_(cr.tensor([[1., -4.], [2., 0.5]]))
    >>> prune.l1_unstructured(m, "weight", amount=2).weight.tolist()
    [[0.0, -4.0], [2.0, 0.0]]
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` (a count, or a fraction) random channels of ``module.<name>``
    along ``dim``.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> m = prune.random_structured(cr.nn.Linear(2, 4), "weight", amount=1, dim=0)
    >>> int((m.weight_mask.sum(1) == 0).sum())
    1
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` (a count, or a fraction) channels of ``module.<name>`` along
    ``dim`` of smallest ``n``-norm (of ``importance_scores`` when given).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> m = cr.nn.Linear(2, 3, bias=False)
    >>> with cr.no_grad(): _ = m.weight.copy_(cr.tensor([[1., 1.], [0., 3.], [2., 0.]]))
    >>> prune.ln_structured(m, "weight", amount=1, n=1, dim=0).weight.tolist()  # a tie
    [[1.0, 1.0], [0.0, 3.0], [0.0, 0.0]]
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the (module, name) pairs of ``parameters`` together: ``pruning_method``
    (an unstructured method class, built with ``kwargs``) sees all their entries as one
    vector; each tensor then gets its slice of the mask.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> a, b = cr.nn.Linear(2, 1, bias=False), cr.nn.Linear(2, 1, bias=False)
    >>> with cr.no_grad(): _ = a.weight.copy_(cr.tensor([[1., 2.]])); _ = b.weight.copy_(cr.tensor([[3., 0.5]]))
    >>> prune.global_unstructured([(a, "weight"), (b, "weight")],
    ...                           pruning_method=prune.L1Unstructured, amount=2)
    >>> a.weight.tolist(), b.weight.tolist()
    ([[0.0, 2.0]], [[3.0, 0.0]])
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = parameters if isinstance(parameters, tuple) else tuple(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for m, n in parameters])
    default_mask = parameters_to_vector([
        getattr(m, n + "_mask", _factories.ones_like(getattr(m, n))) for m, n in parameters])
    final_mask = _global_mask(pruning_method, kwargs, scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name,
                         mask=final_mask[start:start + param.numel()].view_as(param))
        start += param.numel()


def _global_mask(pruning_method, kwargs, scores, default_mask):
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the '
                        f"`pruning_method`. Found method {pruning_method} of type "
                        f"{method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    return container.compute_mask(scores, default_mask)


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` by ``mask`` (zeros where pruned).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> m = prune.custom_from_mask(cr.nn.Linear(2, 2), "bias", mask=cr.tensor([0., 1.]))
    >>> m.bias_mask.tolist(), (m.bias[0] == 0).item()
    ([0.0, 1.0], True)
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent: it becomes a parameter holding
    the pruned values; ``<name>_orig``, ``<name>_mask`` and the hook go away.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> m = prune.custom_from_mask(cr.nn.Linear(2, 2), "bias", mask=cr.tensor([0., 1.]))
    >>> m = prune.remove(m, "bias")
    >>> [n for n, _ in m.named_parameters()], (m.bias[0] == 0).item()
    (['weight', 'bias'], True)
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before "
                     "pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or a submodule has a pruning hook.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import prune
    >>> m = cr.nn.Sequential(cr.nn.Linear(2, 2))
    >>> prune.is_pruned(m), prune.is_pruned(prune.identity(m[0], "weight") and m)
    (False, True)
    """
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral)
            and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or "
                         "a non-negative integer")


def _checked_count(amount, tensor_size):
    """How many of ``tensor_size`` units ``amount`` prunes (a fraction is rounded)."""
    count = amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)
    if isinstance(count, numbers.Integral) and count > tensor_size:
        raise ValueError(f"amount={count} should be smaller than the number of parameters "
                         f"to prune={tensor_size}")
    return count


def _validate_structured_pruning(t):
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional "
                         f"tensors. Found tensor of shape {shape} with {len(shape)} dims")


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return _F["norm"](t, p=n, dim=dims)
