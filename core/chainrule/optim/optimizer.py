"""``optim.Optimizer``: parameter groups, per-parameter state, ``zero_grad``,
``state_dict``/``load_state_dict`` and step hooks; subclasses define ``step``.

Note [optimizer updates]
    Every update is a sequence of in-place tensor ops on the parameters and their
    state under no_grad, in the order of torch's single-tensor implementations
    (``foreach=False``), so that trajectories match torch's to rounding: the
    parameter's version counter is bumped (a stale saved tensor is caught) and no
    graph is recorded.
"""
import collections
import copy
import functools
import itertools

from .. import _factories
from .._grad_mode import set_grad_enabled
from .._tensor import Tensor

__all__ = ["Optimizer", "required"]


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


def _use_grad(step):
    """Run ``step`` under no_grad, or with grad enabled for ``differentiable=True``
    (the update is then recorded, as in torch); the closure re-enables grad itself."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for pre_hook in list(self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                args, kwargs = result
        self._opt_called = True        # read by the schedulers' order check
        with set_grad_enabled(self._differentiable()):
            out = step(self, *args, **kwargs)
        for post_hook in list(self._optimizer_step_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out
    return wrapper


def _closure_loss(closure):
    if closure is None:
        return None
    from .._grad_mode import enable_grad
    with enable_grad():
        return closure()


class Optimizer:
    """Base class of the optimizers: ``params`` is an iterable of tensors, or of
    dicts (parameter groups, each with its own options; missing options take
    ``defaults``).

    >>> import chainrule as cr
    >>> w, b = cr.zeros(2, requires_grad=True), cr.zeros(1, requires_grad=True)
    >>> opt = cr.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.5]
    """

    # Whether ``differentiable=True`` records the step (the update is written so that
    # autograd can go through it, as torch's differentiable paths); elsewhere the
    # flag is accepted and the step runs under no_grad
    _records_differentiable_step = False

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = collections.OrderedDict()
        self._optimizer_step_post_hooks = collections.OrderedDict()
        for name in _STATE_DICT_HOOKS:
            setattr(self, name, collections.OrderedDict())
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", collections.OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", collections.OrderedDict())
        for name in _STATE_DICT_HOOKS:
            self.__dict__.setdefault(name, collections.OrderedDict())

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with 'params' and optional options), e.g.
        to train layers that were frozen.

        >>> import chainrule as cr
        >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=0.1)
        >>> opt.add_param_group({"params": [cr.zeros(2, requires_grad=True)], "lr": 0.01})
        >>> len(opt.param_groups), opt.param_groups[1]["momentum"]
        (2, 0)
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        param_group = dict(param_group)
        param_group["params"] = _plain_params(params, param_group)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(param).__name__)
            if not (self._differentiable() or param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of every parameter: to None (default) or to zeros.

        >>> import chainrule as cr
        >>> w = cr.ones(2, requires_grad=True); (w * 2).sum().backward()
        >>> opt = cr.optim.SGD([w], lr=0.1); opt.zero_grad(); w.grad is None
        True
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grad = p.grad.detach() if p.grad.grad_fn is not None else p.grad
                    grad.requires_grad_(False)
                    grad.zero_()
                    p.grad = grad

    def step(self, closure=None):
        """One optimization step (subclasses); ``closure`` re-evaluates the loss."""
        raise NotImplementedError

    # -- state_dict --------------------------------------------------------------------
    def state_dict(self):
        """The optimizer's state as plain data: 'state' (per parameter, keyed by its
        index over the groups) and 'param_groups' (options, parameter indices).

        >>> import chainrule as cr
        >>> w = cr.ones(2, requires_grad=True); opt = cr.optim.Adam([w])
        >>> (w * w).sum().backward(); opt.step()
        >>> sorted(opt.state_dict()["state"][0]), opt.state_dict()["param_groups"][0]["params"]
        (['exp_avg', 'exp_avg_sq', 'step'], [0])
        """
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)]: value for p, value in self.state.items() if id(p) in index}
        state_dict = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            state_dict = state_dict if result is None else result
        return state_dict

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict`` (copied; state tensors cast to their parameter's
        dtype, except 'step').

        >>> import chainrule as cr
        >>> w = cr.ones(2, requires_grad=True); opt = cr.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> opt2 = cr.optim.SGD([w], lr=1.0); opt2.load_state_dict(opt.state_dict())
        >>> opt2.param_groups[0]["lr"], opt2.param_groups[0]["momentum"]
        (0.1, 0.9)
        """
        state_dict = copy.deepcopy(state_dict)
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            state_dict = state_dict if result is None else result
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in self.param_groups)))
        self.state = collections.defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                self.state[param] = {k: _cast_state(param, k, v) for k, v in value.items()}
        self.param_groups = [dict(saved, params=group["params"])
                             for group, saved in zip(self.param_groups, saved_groups)]
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # -- hooks -------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``."""
        from ..nn.modules.module import _add_hook
        return _add_hook(self._optimizer_step_pre_hooks, hook, False)

    def register_step_post_hook(self, hook):
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``."""
        from ..nn.modules.module import _add_hook
        return _add_hook(self._optimizer_step_post_hooks, hook, False)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Call ``hook(optimizer)`` before ``state_dict`` packs the state."""
        return self._add_state_hook("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Call ``hook(optimizer, state_dict)`` after; a returned dict replaces it."""
        return self._add_state_hook("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Call ``hook(optimizer, state_dict)`` before loading; a returned dict is loaded."""
        return self._add_state_hook("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Call ``hook(optimizer)`` after ``load_state_dict``."""
        return self._add_state_hook("_optimizer_load_state_dict_post_hooks", hook, prepend)

    def _add_state_hook(self, registry, hook, prepend):
        from ..nn.modules.module import _add_hook
        return _add_hook(getattr(self, registry), hook, prepend)

    # -- helpers for subclasses ---------------------------------------------------------
    def _differentiable(self):
        return bool(self._records_differentiable_step and self.defaults.get("differentiable"))

    _sparse_grads = False           # whether step() takes sparse gradients (SGD, Adagrad)

    def _params_with_grad(self, group):
        """The group's parameters that have a gradient, with their gradients; a sparse
        one raises torch's error unless the optimizer takes them (Note [sparse
        gradients over dense storage])."""
        for p in group["params"]:
            if p.grad is not None:
                if p.grad.is_sparse and not self._sparse_grads:
                    raise RuntimeError(_sparse_refusal(type(self).__name__))
                yield p, p.grad

    def _real_params_with_grad(self, group):
        """``_params_with_grad`` for the optimizers without complex support: a complex
        parameter raises torch's error."""
        for p, grad in self._params_with_grad(group):
            if p.is_complex():
                raise RuntimeError(f"{type(self).__name__} does not support complex parameters")
            yield p, grad


def _sparse_refusal(name):
    if name in ("Adam", "AdamW"):
        return "Adam does not support sparse gradients, please consider SparseAdam instead"
    return f"{name} does not support sparse gradients"


_STATE_DICT_HOOKS = ("_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks")


def _plain_params(params, group):
    """The parameters of a group; (name, tensor) pairs keep their names in
    ``group['param_names']``."""
    params = list(params)
    if params and isinstance(params[0], tuple):
        group["param_names"] = [name for name, _ in params]
        return [p for _, p in params]
    return params


def _cast_state(param, key, value):
    if not isinstance(value, Tensor) or key == "step":
        return value
    return value.to(param.dtype) if value.is_floating_point() else value


def _step_tensor():
    """A fresh step counter: a float32 scalar tensor, as in torch's state_dict."""
    from .. import _dtypes
    return _factories.tensor(0.0, dtype=_dtypes.float32)
