"""Learning-rate schedules: each ``step()`` moves the schedule one epoch (or batch)
on and writes the new rate into every parameter group's 'lr'. The rates follow
torch's chainable (recursive) forms, so that schedules compose and match torch's
values step by step.

>>> import chainrule as cr
>>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
>>> sched = cr.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> rates = []
>>> for _ in range(5):
...     opt.step(); sched.step(); rates.append(sched.get_last_lr()[0])
>>> rates
[1.0, 0.5, 0.5, 0.25, 0.25]
"""
import bisect
import collections
import math
import types
import warnings

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LambdaLR", "MultiplicativeLR", "LinearLR", "ConstantLR", "OneCycleLR",
           "ReduceLROnPlateau", "PolynomialLR", "CosineAnnealingWarmRestarts", "SequentialLR",
           "ChainedScheduler"]

# the warning of ``scheduler.step(epoch)``, word for word torch's (users search for it)
EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the new "
    "chainable form, where available. Please open an issue if you are unable to replicate your "
    "use case: https://github.com/pytorch/pytorch/issues/new/choose.")


class LRScheduler:
    """Base class: records each group's 'initial_lr', then takes the first step.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=0.1)
    >>> cr.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5).get_last_lr()
    [0.1]
    """

    _get_lr_called_within_step = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when "
                               "resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self.step()

    def state_dict(self):
        """Everything but the optimizer, as a dict.

        >>> import chainrule as cr
        >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=0.1)
        >>> cr.optim.lr_scheduler.StepLR(opt, 3).state_dict()["step_size"]
        3
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The rates the last ``step`` set, one per parameter group."""
        return self._last_lr

    def get_lr(self):
        """The rates of the current epoch (subclasses)."""
        raise NotImplementedError

    def step(self, epoch=None):
        """Advance one epoch (``epoch`` given: jump there, deprecated) and set the
        groups' rates."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch "
                "1.1.0 and later, you should call them in the opposite order: "
                "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                "result in PyTorch skipping the first value of the learning rate schedule. "
                "See more details at "
                "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                UserWarning, stacklevel=2)
        self._step_count += 1
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _group_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1); opt.step(); s.step()
    >>> round(s.get_last_lr()[0], 6)
    0.1
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each epoch listed in ``milestones``.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> [(opt.step(), s.step(), s.get_last_lr()[0])[2] for _ in range(3)]
    [0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = collections.Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        passed = sum(n for m, n in self.milestones.items() if m <= self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5); opt.step(); s.step()
    >>> s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal from the initial rate to ``eta_min`` along a half cosine over ``T_max``
    epochs (and back up after, as torch's recursive form does).

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> [round((opt.step(), s.step(), s.get_last_lr()[0])[2], 6) for _ in range(2)]
    [0.5, 0.0]
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, T, low = self.last_epoch, self.T_max, self.eta_min
        if t == 0:
            return self._group_lrs()
        if self._step_count == 1 and t > 0:
            return [low + (base - low) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, self._group_lrs())]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - low) + low for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class _LambdaScheduler(LRScheduler):
    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """The schedule's state; lambdas are saved only when they are callable
        objects (their ``__dict__``), not functions."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict`` (callable objects' attributes included)."""
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaScheduler):
    """The rate is the initial rate times ``lr_lambda(epoch)`` (one function, or one
    per group).

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.9 ** epoch)
    >>> opt.step(); s.step(); s.get_last_lr()
    [0.9]
    """

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """Multiply the rate by ``lr_lambda(epoch)`` every epoch.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> opt.step(); s.step(); s.get_last_lr()
    [0.5]
    """

    def get_lr(self):
        if self.last_epoch == 0:
            return self._group_lrs()
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, self._group_lrs())]


class LinearLR(LRScheduler):
    """Scale the rate linearly from ``start_factor`` to ``end_factor`` times the
    initial rate over ``total_iters`` epochs.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> [s.get_last_lr()[0]] + [(opt.step(), s.step(), s.get_last_lr()[0])[2] for _ in range(2)]
    [0.5, 0.75, 1.0]
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._group_lrs()]
        if self.last_epoch > self.total_iters:
            return self._group_lrs()
        span = self.end_factor - self.start_factor
        factor = 1.0 + span / (self.total_iters * self.start_factor
                               + (self.last_epoch - 1) * span)
        return [lr * factor for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * progress)
                for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """The rate times ``factor`` for ``total_iters`` epochs, then the rate itself.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=1)
    >>> [s.get_last_lr()[0], (opt.step(), s.step(), s.get_last_lr()[0])[2]]
    [0.5, 1.0]
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._group_lrs()]
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return [lr * (1.0 / self.factor) for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        scale = self.factor if self.last_epoch < self.total_iters else 1.0
        return [base * scale for base in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the rate rises from ``max_lr / div_factor`` to ``max_lr``
    over ``pct_start`` of the steps, then anneals to ``initial / final_div_factor``
    (momentum, or Adam's beta1, cycles the other way). Step it every batch.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> s = cr.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> rates = [s.get_last_lr()[0]] + [(opt.step(), s.step(), s.get_last_lr()[0])[2] for _ in range(9)]
    >>> round(rates[0], 4), round(max(rates), 4), rates[-1] < 1e-4
    (0.04, 1.0, True)
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        self.total_steps = self._total_steps(total_steps, epochs, steps_per_epoch)
        if not 0 <= pct_start <= 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        self._schedule_phases = self._phases(pct_start, three_phase)
        groups = optimizer.param_groups
        max_lrs = max_lr if isinstance(max_lr, (list, tuple)) else [max_lr] * len(groups)
        for group, top in zip(groups, max_lrs):
            if last_epoch == -1:
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._init_momentum(optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _total_steps(total_steps, epochs, steps_per_epoch):
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            return total_steps
        if epochs is None or steps_per_epoch is None:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        return epochs * steps_per_epoch

    def _phases(self, pct_start, three_phase):
        n = self.total_steps
        if three_phase:
            return [(float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                    (float(2 * pct_start * n) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                    (n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        return [(float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]

    def _init_momentum(self, optimizer, base_momentum, max_momentum, last_epoch):
        defaults = optimizer.defaults
        if "momentum" not in defaults and "betas" not in defaults:
            raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                             "option enabled")
        self.use_beta1 = "betas" in defaults
        for group in optimizer.param_groups:
            if last_epoch == -1:
                self._set_momentum(group, max_momentum)
                group["max_momentum"], group["base_momentum"] = max_momentum, base_momentum

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0
            for i, (end_step, lr0, lr1, m0, m1) in enumerate(self._schedule_phases):
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lr = self._anneal(group[lr0], group[lr1], pct)
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m0], group[m1], pct))
                    break
                start_step = end_step
            lrs.append(lr)
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` when a metric (``step(metric)``) has not
    improved for ``patience`` epochs.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [1.0, 1.0, 1.0, 1.0]:
    ...     s.step(loss)
    >>> s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer, self.factor = optimizer, factor
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * n
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.cooldown_counter, self.last_epoch = 0, 0
        self._last_lr = self._group_lrs()
        self._reset()

    def _reset(self):
        self.mode_worse = math.inf if self.mode == "min" else -math.inf
        self.best = self.mode_worse
        self.num_bad_epochs = 0

    def is_better(self, a, best):
        """Whether metric ``a`` improves on ``best`` by the threshold."""
        if self.mode == "min":
            return a < (best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                        else best - self.threshold)
        return a > (best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                    else best + self.threshold)

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def step(self, metrics, epoch=None):
        """Record this epoch's metric; reduce the rates after ``patience`` epochs
        without improvement."""
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._group_lrs()

    def _reduce_lr(self):
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                group["lr"] = new


class PolynomialLR(LRScheduler):
    """Decay the rate as ``(1 - t / total_iters) ** power`` of the initial rate, then
    hold it.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    >>> [(opt.step(), s.step(), s.get_last_lr()[0])[2] for _ in range(2)]
    [0.5625, 0.25]
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t = self.last_epoch
        if t == 0 or t > self.total_iters:
            return self._group_lrs()
        factor = ((1.0 - t / self.total_iters) / (1.0 - (t - 1) / self.total_iters)) ** self.power
        return [lr * factor for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - done) ** self.power for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial rate to ``eta_min`` over ``T_0`` epochs, then
    restart; each period is ``T_mult`` times the last. ``step(epoch)`` accepts
    fractional epochs (steps within an epoch).

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> s = cr.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> [round((opt.step(), s.step(), s.get_last_lr()[0])[2], 4) for _ in range(3)]
    [0.5, 1.0, 0.5]
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or go to (fractional) ``epoch``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur - self.T_i, self.T_i * self.T_mult
        else:
            self._jump(epoch)
        self.last_epoch = math.floor(epoch)
        self._step_count += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._group_lrs()

    def _jump(self, epoch):
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n


class SequentialLR(LRScheduler):
    """Hand over from one schedule to the next at each epoch in ``milestones``.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> warm = cr.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = cr.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> s = cr.optim.lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[2])
    >>> [s.get_last_lr()[0]] + [(opt.step(), s.step(), s.get_last_lr()[0])[2] for _ in range(3)]
    [0.5, 0.75, 1.0, 0.5]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got "
                             "no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{type(self).__name__} expects all schedulers to belong to "
                                 f"the same optimizer, but got scheduler at index {i} to be "
                                 "different than the optimizer passed in.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             f"one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch, self.optimizer = last_epoch + 1, optimizer
        for group in optimizer.param_groups:       # undo what the schedulers' first steps did
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            scheduler.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self):
        """Advance the schedule in charge at this epoch (a new one starts from 0)."""
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        """The state, with each wrapped schedule's."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict`` (each wrapped schedule's too)."""
        state_dict = dict(state_dict)
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, sd in zip(self._schedulers, saved):
            scheduler.load_state_dict(sd)


class ChainedScheduler(SequentialLR):
    """Step every schedule in ``schedulers`` at once (their factors multiply).

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    >>> a = cr.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> b = cr.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    >>> s = cr.optim.lr_scheduler.ChainedScheduler([a, b])
    >>> [round((opt.step(), s.step(), s.get_last_lr()[0])[2], 6) for _ in range(2)]
    [0.5, 0.025]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        self.optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
        self._schedulers = list(schedulers)
        self._last_lr = self._group_lrs()

    def step(self):
        """Step every schedule."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._group_lrs()


def _format_param(name, optimizer, param):
    """One value per parameter group (a list must have one per group)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"expected {len(optimizer.param_groups)} values for {name}, got "
                             f"{len(param)}")
        return list(param)
    return [param] * len(optimizer.param_groups)


class CyclicLR(LRScheduler):
    """Cyclical learning rates: the rate goes from ``base_lr`` up to ``max_lr`` over
    ``step_size_up`` steps and back over ``step_size_down``; the amplitude is scaled by
    ``mode`` ("triangular": constant, "triangular2": halved each cycle, "exp_range":
    ``gamma ** step``) or ``scale_fn``. Momentum cycles the opposite way. Step it every
    batch.

    >>> import chainrule as cr
    >>> opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> s = cr.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> [round((opt.step(), s.step(), s.get_last_lr()[0])[2], 3) for _ in range(4)]
    [0.3, 0.5, 0.3, 0.1]
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else \
            {"triangular": "cycle", "triangular2": "cycle", "exp_range": "iterations"}[mode]
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._init_momentum(optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_momentum(self, optimizer, base_momentum, max_momentum, last_epoch):
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                             "option enabled")
        self.use_beta1 = "betas" in optimizer.defaults
        self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
        self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
        if last_epoch == -1:
            for momentum, group in zip(self.max_momentums, optimizer.param_groups):
                self._set_momentum(group, momentum)

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def scale_fn(self, x):
        """The amplitude's scale at cycle (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [low + (high - low) * factor * scale
               for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                self._set_momentum(group, high - (high - low) * factor * scale)
        return lrs


__all__ += ["CyclicLR"]
