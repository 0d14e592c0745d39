"""``GradScaler``: loss scaling for mixed-precision training, as the reference's
``torch.amp.GradScaler`` does it (the same scale history, step for step)."""
import enum
import warnings
from collections import defaultdict

import numpy as np

from .. import _dtypes
from .._grad_mode import no_grad
from .._tensor import Tensor


class OptState(enum.Enum):
    """Where an optimizer is in the iteration: nothing done, grads unscaled, stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _non_finite_check_and_unscale_(grads, found_inf, inv_scale):
    """Multiply every grad by ``inv_scale`` in place; set ``found_inf`` to 1 if any holds
    an inf or a NaN (the reference's ``_amp_foreach_non_finite_check_and_unscale_``)."""
    from .. import isfinite
    for g in grads:
        if not isfinite(g).all().item():
            found_inf.fill_(1.0)
        g.mul_(inv_scale)


def _update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                   growth_interval):
    """Back the scale off after an inf/NaN; grow it after ``growth_interval`` clean steps
    in a row (unless that overflows float32). The reference's ``_amp_update_scale_``."""
    current = float(scale.item())
    if found_inf.item():
        scale.fill_(float(np.float32(current * backoff_factor)))
        growth_tracker.fill_(0)
        return
    successful = int(growth_tracker.item()) + 1
    if successful == growth_interval:
        with np.errstate(over="ignore"):
            grown = np.float32(current * growth_factor)
        if np.isfinite(grown):
            scale.fill_(float(grown))
        growth_tracker.fill_(0)
    else:
        growth_tracker.fill_(successful)


class GradScaler:
    """Scales the loss up before backward (so small float16/bfloat16 gradients do not
    flush to zero), unscales the gradients before the optimizer step, skips steps whose
    gradients hold an inf or a NaN, and adapts the scale: times ``backoff_factor`` after
    such a step, times ``growth_factor`` after ``growth_interval`` clean steps.

    >>> import chainrule as cr
    >>> model = cr.nn.Linear(2, 1)
    >>> opt = cr.optim.SGD(model.parameters(), lr=0.1)
    >>> scaler = cr.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=1)
    >>> with cr.autocast("cpu"):
    ...     loss = model(cr.ones(4, 2)).float().pow(2).mean()
    >>> scaler.scale(loss).backward()
    >>> scaler.step(opt)
    >>> scaler.update()
    >>> scaler.get_scale()
    2048.0
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        from .. import full
        self._scale = full((), self._init_scale, dtype=_dtypes.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_dtypes.int32,
                                    device=dev)

    def scale(self, outputs):
        """``outputs`` (a tensor, or tensors in lists/tuples) times the current scale.

        >>> import chainrule as cr
        >>> cr.amp.GradScaler("cpu", init_scale=8.0).scale(cr.tensor(0.5)).item()
        4.0
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        return self._scale_iterable(outputs)

    def _scale_iterable(self, value):
        if isinstance(value, Tensor):
            return self.scale(value)
        if isinstance(value, (list, tuple)):
            return type(value)(self._scale_iterable(v) for v in value)
        if hasattr(value, "__iter__"):
            return map(self._scale_iterable, value)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_and_dtype = defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype is _dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grad = param.grad
                    per_device_and_dtype[grad.device][grad.dtype].append(grad)
            found = {}
            for device, per_dtype in per_device_and_dtype.items():
                found[device] = found_inf.to(device)
                for grads in per_dtype.values():
                    _non_finite_check_and_unscale_(grads, found[device],
                                                   inv_scale.to(device))
        return found

    def unscale_(self, optimizer):
        """Divide the gradients of ``optimizer``'s parameters by the scale, in place (to
        clip or inspect them before ``step``); at most once per ``update``.

        >>> import chainrule as cr
        >>> w = cr.ones(1, requires_grad=True)
        >>> opt, scaler = cr.optim.SGD([w], lr=1.0), cr.amp.GradScaler("cpu", init_scale=4.0)
        >>> scaler.scale(w.sum()).backward(); w.grad.item()
        4.0
        >>> scaler.unscale_(opt); w.grad.item()
        1.0
        """
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from .. import full
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=_dtypes.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """Unscale the gradients (unless ``unscale_`` did) and run ``optimizer.step``,
        unless they hold an inf or a NaN: then the step is skipped. Returns what
        ``optimizer.step`` returned, or None. Example: the class docstring.

        >>> import chainrule as cr
        >>> w = cr.ones(1, requires_grad=True)
        >>> opt, scaler = cr.optim.SGD([w], lr=1.0), cr.amp.GradScaler("cpu")
        >>> (scaler.scale(w.sum()) * float("inf")).backward()
        >>> scaler.step(opt); w.item()
        1.0
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """End the iteration: set the scale to ``new_scale`` if given, else back it off
        (an inf/NaN was found this iteration) or grow it (``growth_interval`` clean
        iterations in a row). Example: the class docstring.

        >>> import chainrule as cr
        >>> scaler = cr.amp.GradScaler("cpu")
        >>> _ = scaler.scale(cr.ones(1)); scaler.update(16.0); scaler.get_scale()
        16.0
        """
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            self._set_scale(new_scale)
        else:
            found_infs = [found.to(scale.device)
                          for state in self._per_optimizer_states.values()
                          for found in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for found in found_infs[1:]:
                combined += found
            _update_scale_(scale, growth_tracker, combined, self._growth_factor,
                           self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _set_scale(self, new_scale):
        if isinstance(new_scale, float):
            self._scale.fill_(new_scale)
            return
        reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                  "torch.FloatTensor with requires_grad=False.")
        if (new_scale.device.type != self._device or new_scale.numel() != 1
                or new_scale.requires_grad is True):
            raise AssertionError(reason)
        self._scale.copy_(new_scale)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a float (1.0 when disabled).

        >>> import chainrule as cr
        >>> cr.amp.GradScaler("cpu").get_scale()
        65536.0
        """
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        """The factor the scale grows by.

        >>> import chainrule as cr
        >>> cr.amp.GradScaler("cpu").get_growth_factor()
        2.0
        """
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Set the factor the scale grows by.

        >>> import chainrule as cr
        >>> s = cr.amp.GradScaler("cpu"); s.set_growth_factor(4.0); s.get_growth_factor()
        4.0
        """
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The factor the scale backs off by.

        >>> import chainrule as cr
        >>> cr.amp.GradScaler("cpu").get_backoff_factor()
        0.5
        """
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Set the factor the scale backs off by.

        >>> import chainrule as cr
        >>> s = cr.amp.GradScaler("cpu"); s.set_backoff_factor(0.25); s.get_backoff_factor()
        0.25
        """
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """How many clean steps in a row grow the scale.

        >>> import chainrule as cr
        >>> cr.amp.GradScaler("cpu").get_growth_interval()
        2000
        """
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Set how many clean steps in a row grow the scale.

        >>> import chainrule as cr
        >>> s = cr.amp.GradScaler("cpu"); s.set_growth_interval(10); s.get_growth_interval()
        10
        """
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return (self._init_growth_tracker if self._growth_tracker is None
                else int(self._growth_tracker.item()))

    def is_enabled(self):
        """Whether the scaler scales (False when disabled, or for CUDA without a GPU).

        >>> import chainrule as cr
        >>> cr.amp.GradScaler("cpu").is_enabled(), cr.amp.GradScaler("cpu", enabled=False).is_enabled()
        (True, False)
        """
        return self._enabled

    def state_dict(self):
        """The scale, the factors, the interval and the growth tracker ({} when disabled).

        >>> import chainrule as cr
        >>> cr.amp.GradScaler("cpu").state_dict()["scale"]
        65536.0
        """
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Restore what ``state_dict`` returned.

        >>> import chainrule as cr
        >>> s = cr.amp.GradScaler("cpu"); s.load_state_dict({"scale": 8.0, "growth_factor": 2.0,
        ...     "backoff_factor": 0.5, "growth_interval": 3, "_growth_tracker": 1})
        >>> s.get_scale(), s.get_growth_interval()
        (8.0, 3)
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def _cuda_available():
    from .. import cuda
    return cuda.is_available()
