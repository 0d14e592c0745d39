"""``torch.cond`` and ``torch.while_loop`` in eager mode: the reference traces them for
export and compilation; run eagerly they are plain Python control flow over the
operands (so autograd records whichever branch and iterations ran).
"""
from .._tensor import Tensor
from ._common import public


def _check_pred(pred):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        return bool(pred.item())
    if not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    return bool(pred)


@public(method=False)
def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` holds (a bool, or a one-element tensor), else
    ``false_fn(*operands)``.

    >>> import chainrule as cr
    >>> cr.cond(cr.tensor(True), lambda a: a + 1, lambda a: a - 1, (cr.ones(2),)).tolist()
    [2.0, 2.0]
    """
    return (true_fn if _check_pred(pred) else false_fn)(*operands)


@public(method=False)
def while_loop(cond_fn, body_fn, carried_inputs):
    """Apply ``body_fn`` to the carried values while ``cond_fn`` of them holds; returns
    the last carried values (as ``body_fn`` returned them).

    >>> import chainrule as cr
    >>> cr.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2), (0, cr.ones(1)))
    (3, tensor([8.]))
    """
    carried = carried_inputs
    while _check_pred(cond_fn(*_as_operands(carried))):
        carried = body_fn(*_as_operands(carried))
    return carried


def _as_operands(carried):
    return tuple(carried) if isinstance(carried, (tuple, list)) else (carried,)
