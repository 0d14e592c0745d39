"""The deprecated hook-based ``nn.utils.weight_norm`` / ``spectral_norm`` (and their
``remove_*``): the module keeps ``<name>_g``/``<name>_v`` (or ``<name>_orig`` with
buffers ``<name>_u``/``<name>_v``) and a forward pre-hook recomputes ``<name>`` as a
plain attribute before every forward. The parametrization forms in
``parametrizations.py`` replace them; both give the same values."""
import warnings

from ... import _grad_mode
from .. import functional as F
from ..parameter import Parameter
from .parametrizations import _SpectralNorm, _WeightNorm, norm_except_dim


class _WeightNormHook:
    def __init__(self, name, dim):
        self.name, self.dim = name, dim
        self.rule = _WeightNorm(dim)

    def compute(self, module):
        return self.rule(getattr(module, self.name + "_g"), getattr(module, self.name + "_v"))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute(module))


def weight_norm(module, name="weight", dim=0):
    """Deprecated: weight normalisation through a forward pre-hook (use
    ``nn.utils.parametrizations.weight_norm``).

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = cr.nn.utils.weight_norm(cr.nn.Linear(3, 2))
    >>> [n for n, _ in m.named_parameters()]
    ['bias', 'weight_g', 'weight_v']
    """
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, _WeightNormHook) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                               f"{name}")
    hook = _WeightNormHook(name, -1 if dim is None else dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, hook.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute(module))
    module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module, name="weight"):
    """Remove the hook-based weight normalisation: ``<name>`` is a parameter again.

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = cr.nn.utils.remove_weight_norm(cr.nn.utils.weight_norm(cr.nn.Linear(3, 2)))
    >>> [n for n, _ in m.named_parameters()]
    ['bias', 'weight']
    """
    return _remove(module, name, _WeightNormHook, "weight_norm", ("_g", "_v"), ())


class _HookSpectralNorm(_SpectralNorm):
    """The hook form's power iteration: v from u first, then u from v (the
    parametrization updates u first), so the two forms' estimates differ as in torch."""

    def _power_method(self, matrix, iterations):
        with _grad_mode.no_grad():
            for _ in range(iterations):
                self._v.copy_(F.normalize(matrix.T.mv(self._u), dim=0, eps=self.eps))
                self._u.copy_(F.normalize(matrix.mv(self._v), dim=0, eps=self.eps))


class _SpectralNormHook:
    def __init__(self, name, rule):
        self.name, self.rule = name, rule

    def compute(self, module, training):
        # the buffers are read from the module each time: .double() / .to() replace them
        self.rule._u, self.rule._v = (getattr(module, self.name + s) for s in ("_u", "_v"))
        self.rule.training = training
        return self.rule(getattr(module, self.name + "_orig"))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute(module, module.training))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Deprecated: spectral normalisation through a forward pre-hook (use
    ``nn.utils.parametrizations.spectral_norm``).

    >>> import chainrule as cr
    >>> m = cr.nn.utils.spectral_norm(cr.nn.Linear(3, 2))
    >>> list(m.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, _SpectralNormHook) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter "
                               f"{name}")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    weight = getattr(module, name)
    rule = _HookSpectralNorm(weight, n_power_iterations, dim, eps, warmup=0)
    hook = _SpectralNormHook(name, rule)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    module.register_buffer(name + "_u", rule._u)
    module.register_buffer(name + "_v", rule._v)
    setattr(module, name, weight.data)          # the raw weight until the first forward
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module, name="weight"):
    """Remove the hook-based spectral normalisation: ``<name>`` is a parameter again.

    >>> import chainrule as cr
    >>> m = cr.nn.utils.remove_spectral_norm(cr.nn.utils.spectral_norm(cr.nn.Linear(3, 2)))
    >>> list(m.state_dict())
    ['bias', 'weight']
    """
    return _remove(module, name, _SpectralNormHook, "spectral_norm", ("_orig",), ("_u", "_v"))


def _remove(module, name, hook_type, what, params, buffers):
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, hook_type) and hook.name == name:
            with _grad_mode.no_grad():
                value = (hook.compute(module) if hook_type is _WeightNormHook
                         else hook.compute(module, False)).detach()
            del module._forward_pre_hooks[key]
            for suffix in params:
                del module._parameters[name + suffix]
            for suffix in buffers:
                del module._buffers[name + suffix]
            module.__dict__.pop(name, None)
            module.register_parameter(name, Parameter(value))
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")
