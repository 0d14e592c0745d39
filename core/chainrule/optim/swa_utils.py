"""Weight averaging: ``AveragedModel`` (stochastic weight averaging or an exponential
moving average of a model's parameters), the ``SWALR`` schedule, and ``update_bn``
(recompute batch-norm statistics for the averaged weights)."""
import copy
import itertools
import math

from .. import _factories, _grad_mode
from .._dtypes import int64
from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_avg_fn(decay=0.999):
    """``avg_fn`` for an exponential moving average with ``decay``."""
    def ema_update(averaged, current, num_averaged):
        return decay * averaged + (1 - decay) * current
    return ema_update


def get_swa_avg_fn():
    """``avg_fn`` for the running mean of all models seen (SWA)."""
    def swa_update(averaged, current, num_averaged):
        return averaged + (current - averaged) / (num_averaged + 1)
    return swa_update


def _is_float(t):
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """``multi_avg_fn`` (lists of tensors of one dtype, updated in place) for an EMA;
    integer buffers get ``avg * decay + new * (1 - decay)`` cast back (truncated).

    >>> import chainrule as cr
    >>> from chainrule.optim.swa_utils import get_ema_multi_avg_fn
    >>> avg = [cr.tensor([1.0]), cr.tensor([10])]
    >>> get_ema_multi_avg_fn(0.5)(avg, [cr.tensor([3.0]), cr.tensor([13])], 1)
    >>> avg[0].item(), avg[1].item()
    (2.0, 11)
    """
    def ema_update(averaged, current, num_averaged):
        for a, c in zip(averaged, current):
            if _is_float(a):
                a.lerp_(c, 1 - decay)
            else:
                a.copy_(a * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """``multi_avg_fn`` (lists of tensors of one dtype, updated in place) for SWA: a
    lerp towards the new values by ``1 / (num_averaged + 1)``.

    >>> import chainrule as cr
    >>> from chainrule.optim.swa_utils import get_swa_multi_avg_fn
    >>> avg = [cr.tensor([1.0])]
    >>> get_swa_multi_avg_fn()(avg, [cr.tensor([4.0])], 2)
    >>> avg[0].item()
    2.0
    """
    def swa_update(averaged, current, num_averaged):
        for a, c in zip(averaged, current):
            if _is_float(a):
                a.lerp_(c, 1 / (num_averaged + 1))
            elif isinstance(num_averaged, Tensor):    # integers: torch's addcdiv error
                a.addcdiv_(c - a, num_averaged + 1)
            else:
                a.add_(c - a, alpha=1.0 / (num_averaged + 1))
    return swa_update


def _by_dtype(averaged, current):
    """(averaged, current) lists per dtype (multi_avg_fn gets one dtype at a time), the
    dtype seen last first: the order torch's grouping visits them in, which decides
    what is already averaged when an integer group raises."""
    groups = {}
    for a, c in zip(averaged, current):
        pair = groups.setdefault(a.dtype, ([], []))
        pair[0].append(a)
        pair[1].append(c)
    return list(groups.values())[::-1]


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are the
    average of the models passed to ``update_parameters``: the running mean (SWA) by
    default, or ``avg_fn(averaged, current, num_averaged)`` / ``multi_avg_fn``.

    >>> import chainrule as cr
    >>> from chainrule.optim.swa_utils import AveragedModel
    >>> net = cr.nn.Linear(1, 1, bias=False)
    >>> swa = AveragedModel(net)
    >>> for w in (1.0, 3.0):
    ...     _ = net.weight.data.fill_(w)
    ...     swa.update_parameters(net)
    >>> swa.module.weight.item(), int(swa.n_averaged)
    (2.0, 2)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _factories.tensor(0, dtype=int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(model.parameters())

    def update_parameters(self, model):
        """Fold ``model``'s current weights into the average."""
        averaged = [a.detach() for a in self._tensors(self.module)]
        current = [t.detach().to(a.device) for t, a in zip(self._tensors(model), averaged)]
        with _grad_mode.no_grad():
            if int(self.n_averaged) == 0:
                for a, c in zip(averaged, current):
                    a.copy_(c)
            elif self.avg_fn is None:
                fn = self.multi_avg_fn or self._swa_each
                for group in _by_dtype(averaged, current):
                    fn(*group, self.n_averaged.to(group[0][0].device))
            else:
                for a, c in zip(averaged, current):
                    a.copy_(self.avg_fn(a, c, self.n_averaged.to(a.device)))
            if not self.use_buffers:
                for a, b in zip(self.module.buffers(), model.buffers()):
                    a.detach().copy_(b.detach().to(a.device))
            self.n_averaged.add_(1)

    @staticmethod
    def _swa_each(averaged, current, num_averaged):
        # the CPU default: the running mean, one tensor at a time (no foreach kernels)
        for a, c in zip(averaged, current):
            a.copy_(get_swa_avg_fn()(a, c, num_averaged))


def update_bn(loader, model, device=None):
    """Recompute every batch norm's running statistics as the plain average over one
    pass of ``loader`` (batches, or tuples/lists whose first item is the input).

    >>> import chainrule as cr
    >>> from chainrule.optim.swa_utils import update_bn
    >>> net = cr.nn.BatchNorm1d(1)
    >>> update_bn([cr.tensor([[1.0], [3.0]]), cr.tensor([[5.0], [7.0]])], net)
    >>> net.running_mean.tolist()
    [4.0]
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and module.running_mean is not None:
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's rate to ``swa_lr`` over ``anneal_epochs`` (cosine or
    linear), then hold it.

    >>> import chainrule as cr
    >>> from chainrule.optim.swa_utils import SWALR
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> [round((opt.step(), s.step(), s.get_last_lr()[0])[2], 3) for _ in range(3)]
    [0.55, 0.1, 0.1]
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr),
                             optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_func = self._cos_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cos_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                    for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev_lrs)]
