"""``chainrule.func``'s helpers for modules: call a module with given tensors
(``functional_call``, Note [reparametrized call] in ``chainrule/nn/utils/stateless.py``),
stack the state of an ensemble of models for ``vmap`` (``stack_module_state``), and
make batch norm usable under ``vmap`` (``replace_all_batch_norm_modules_``)."""
import chainrule as cr
from chainrule.nn.modules.normalization import _BatchNorm
from chainrule.nn.utils.stateless import _functional_call


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with its parameters and buffers replaced by those
    given (by name; a dict or a tuple of dicts), the module left unchanged afterwards.

    >>> import chainrule as cr
    >>> from chainrule.func import functional_call, grad
    >>> model = cr.nn.Linear(2, 1, bias=False)
    >>> x = cr.tensor([[1.0, 2.0]])
    >>> grad(lambda w: functional_call(model, {"weight": w}, (x,)).sum())(cr.zeros(1, 2))
    tensor([[1., 2.]])
    """
    return _functional_call(module, parameter_and_buffer_dicts, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """(params, buffers): each parameter and buffer of identical ``models`` stacked
    along a new dimension 0, ready for ``vmap(functional_call...)`` over an ensemble.
    Stacked parameters are new leaves that require grad when the models' do.

    >>> import chainrule as cr
    >>> from chainrule.func import stack_module_state
    >>> params, buffers = stack_module_state([cr.nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].is_leaf, buffers
    (chainrule.Size([4, 2, 3]), True, {})
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if len({type(m) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return ({k: _stacked_leaf([p[k] for p in params], k) for k in params[0]},
            {k: cr.stack([b[k] for b in buffers]) for k in buffers[0]})


def _stacked_leaf(tensors, name):
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    stacked = cr.stack(tensors)
    return stacked.detach().requires_grad_() if flags == {True} else stacked


def replace_all_batch_norm_modules_(root):
    """Make every batch norm in ``root`` use batch statistics only (no running stats),
    in place, so that it runs under ``vmap``; returns ``root``.

    >>> import chainrule as cr
    >>> from chainrule.func import replace_all_batch_norm_modules_
    >>> net = replace_all_batch_norm_modules_(cr.nn.Sequential(cr.nn.BatchNorm1d(3)))
    >>> net[0].running_mean is None, net[0].track_running_stats
    (True, False)
    """
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
