"""``optim.swap_in_optimizer_params_and_state``: run an optimizer, for the length of a
``with`` block, on other parameter tensors and another ``state_dict``'s state."""
import collections
import contextlib

from .._tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _checked_state(state):
    """The swap-in 'state': a dict from packed parameter ids to per-parameter dicts."""
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(key, Tensor) for key in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    return state


def _checked_groups(optimizer, groups):
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    return groups


def _checked_group_ids(index, live, group):
    """The packed parameter ids of swap-in group ``index``, checked against ``live``."""
    if not isinstance(group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {index} has a different number of "
                           "params than the live optimizer param group.")
    only_new = [k for k in group if k not in live]
    only_live = [k for k in live if k not in group]
    if only_new or only_live:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to "
                           "exactly match the live optimizer group keys for group "
                           f"{index}. Keys only in swap-in: {only_new}. Keys only in live: "
                           f"{only_live}.")
    return ids


def _plan(optimizer, parameters, optim_state):
    """[(live group, swap-in group, its tensors)] and the swap-in state, all checked."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _checked_state(optim_state.get("state"))
    groups = _checked_groups(optimizer, optim_state.get("param_groups"))
    tensors, offset, seen, plan = list(parameters.values()), 0, set(), []
    for index, (live, group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _checked_group_ids(index, live, group)
        seen.update(ids)
        if offset + len(ids) > len(tensors):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        plan.append((live, group, tensors[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    return plan, state


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Inside the block, ``optimizer`` works on the tensors of ``swapin_parameters``
    (a dict, in the order of the optimizer's parameters) with the state and group
    options of ``swapin_optim_state`` (an ``optimizer.state_dict()``); on exit its
    own parameters, options and state are back. The per-parameter state dicts are
    shallow copies: in-place updates of their tensors reach ``swapin_optim_state``,
    new entries do not. The optimizer's state must be initialized (one step taken).

    >>> import chainrule as cr
    >>> w = cr.ones(2, requires_grad=True); opt = cr.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> w.grad = cr.ones(2); opt.step()
    >>> other = cr.zeros(2); other.grad = cr.ones(2); saved = opt.state_dict()
    >>> with cr.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, saved):
    ...     opt.step()
    >>> [round(v, 4) for v in other.tolist() + w.tolist()]
    [-0.19, -0.19, 0.9, 0.9]
    """
    plan, state = _plan(optimizer, swapin_parameters, swapin_optim_state)
    live_state = optimizer.state
    snapshots = [dict(group) for group in optimizer.param_groups]
    try:
        swapped = collections.defaultdict(dict)
        for live, group, tensors in plan:
            live.update((k, v) for k, v in group.items() if k != "params")
            live["params"] = tensors
            for tensor, key in zip(tensors, group["params"]):
                swapped[tensor] = dict(state.get(key, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
