"""Normalization layers: BatchNorm1d/2d/3d (running statistics as buffers),
SyncBatchNorm, LayerNorm, GroupNorm, InstanceNorm, RMSNorm, LocalResponseNorm,
CrossMapLRN2d."""
import numbers

import numpy as np

from ... import _dtypes, _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm",
           "SyncBatchNorm", "CrossMapLRN2d"]


def _affine_parameters(module, shape, affine, bias, dtype):
    """weight (and, with ``bias``, bias) of ``shape`` when ``affine``, else None."""
    module.register_parameter(
        "weight", Parameter(_factories.empty(*shape, dtype=dtype)) if affine else None)
    module.register_parameter(
        "bias", Parameter(_factories.empty(*shape, dtype=dtype)) if affine and bias else None)


def _reset_affine(module):
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _BatchNorm(Module):
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _factories.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _factories.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _factories.tensor(0, dtype=_dtypes.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Running statistics reset; weight 1, bias 0."""
        self.reset_running_stats()
        _reset_affine(self)

    def _momentum_factor(self):
        """The running-average factor of this step (counts the batch in training)."""
        if not (self.training and self.track_running_stats):
            return 0.0 if self.momentum is None else self.momentum
        if self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
        if self.momentum is None:
            return 1.0 / float(self.num_batches_tracked.item())
        return self.momentum

    def forward(self, input):
        self._check_input_dim(input)
        factor = self._momentum_factor()
        batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias,
                            batch_stats, factor, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # A state dict of version < 2 (or one rebuilt as a plain dict, which loses
        # its metadata) predates num_batches_tracked: keep ours instead of calling
        # it missing, as torch does.
        key = prefix + "num_batches_tracked"
        if (local_metadata.get("version") or 0) < 2 and self.track_running_stats \
                and key not in state_dict:
            state_dict[key] = self.num_batches_tracked
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            wanted = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {wanted} input (got {input.dim()}D input)")

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) input: per channel, normalize by
    the batch statistics in training (updating the running ones), by the running
    statistics in evaluation.

    >>> import chainrule as cr
    >>> bn = cr.nn.BatchNorm1d(2)
    >>> y = bn(cr.tensor([[1.0, 2.0], [3.0, 6.0]]))
    >>> [round(v, 3) for v in y[:, 0].tolist()], bn.running_mean.tolist()
    ([-1.0, 1.0], [0.20000000298023224, 0.4000000059604645])
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) input (see BatchNorm1d).

    >>> import chainrule as cr
    >>> cr.nn.BatchNorm2d(3)
    BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) input (see BatchNorm1d).

    >>> import chainrule as cr
    >>> cr.nn.BatchNorm3d(2).eval()(cr.ones(1, 2, 1, 1, 1)).shape
    chainrule.Size([1, 2, 1, 1, 1])
    """

    _dims = (5,)


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dimensions, then scale and
    shift element-wise (weight 1, bias 0 initially).

    >>> import chainrule as cr
    >>> ln = cr.nn.LayerNorm(2)
    >>> ln, [round(v, 3) for v in ln(cr.tensor([[1.0, 3.0]]))[0].tolist()]
    (LayerNorm((2,), eps=1e-05, elementwise_affine=True, bias=True), [-1.0, 1.0])
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight 1, bias 0."""
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalize each of ``num_groups`` channel groups of (N, C, ...) input, then
    scale and shift per channel.

    >>> import chainrule as cr
    >>> cr.nn.GroupNorm(2, 4)(cr.randn(3, 4, 5)).shape
    chainrule.Size([3, 4, 5])
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        _affine_parameters(self, (num_channels,), affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight 1, bias 0."""
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(_BatchNorm):
    """Per-sample, per-channel normalization (no running statistics by default)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype=dtype,
                         bias=bias)

    def forward(self, input):
        self._check_input_dim(input)
        batched = input.dim() == self._dims[-1]
        if not batched:
            input = input.unsqueeze(0)
        use_stats = self.training or not self.track_running_stats
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                              self.bias, use_stats, self.momentum if self.momentum is not None
                              else 0.1, self.eps)
        return out if batched else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or (C, L) input.

    >>> import chainrule as cr
    >>> cr.nn.InstanceNorm1d(2)(cr.randn(3, 2, 5)).shape
    chainrule.Size([3, 2, 5])
    """

    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or (C, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.InstanceNorm2d(3)
    InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.InstanceNorm3d(2)(cr.randn(1, 2, 2, 2, 2)).shape
    chainrule.Size([1, 2, 2, 2, 2])
    """

    _dims = (4, 5)


class RMSNorm(Module):
    """Divide by the root mean square over the trailing ``normalized_shape``
    dimensions, then scale (weight 1 initially).

    >>> import chainrule as cr
    >>> [round(v, 4) for v in cr.nn.RMSNorm(2)(cr.tensor([[3.0, 4.0]]))[0].tolist()]
    [0.8485, 1.1314]
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.register_parameter("weight", Parameter(_factories.empty(
            *self.normalized_shape, dtype=dtype)) if elementwise_affine else None)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight 1."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Normalize each channel by the activity of ``size`` neighbouring channels.

    >>> import chainrule as cr
    >>> cr.nn.LocalResponseNorm(2)(cr.ones(1, 3, 2)).shape
    chainrule.Size([1, 3, 2])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose statistics a distributed run would gather over all
    processes; in one process (chainrule has no process groups) it is BatchNorm over
    input of any rank >= 2, as torch's is without an initialized process group.

    >>> import chainrule as cr
    >>> net = cr.nn.Sequential(cr.nn.Linear(3, 4), cr.nn.BatchNorm1d(4))
    >>> cr.nn.SyncBatchNorm.convert_sync_batchnorm(net)[1]
    SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d replaced by a SyncBatchNorm sharing its
        parameters and running statistics (a BatchNorm itself: the new layer)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


def _cross_map_window(channels, size):
    """(channels, channels) 0/1 matrix: which channels' squares enter each channel's
    scale in the reference's CrossMapLRN2d, built by its running-window recurrence
    (whose first channel, never subtracted, stays in every later window)."""
    pre_pad = int((size - 1) / 2 + 1)
    window = np.zeros((channels, channels))
    window[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        window[c] = window[c - 1]
        if c < channels - pre_pad + 1:
            window[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            window[c, c - pre_pad] -= 1
    return window


class CrossMapLRN2d(Module):
    """Local response normalization across channels of (N, C, H, W) input, the legacy
    layer: ``x / (k + alpha / size * sum of x^2 over the channel window) ** beta``
    with the reference's windows (and the true gradient of that forward).

    >>> import chainrule as cr
    >>> cr.nn.CrossMapLRN2d(3, alpha=3.0, beta=1.0)(cr.ones(1, 2, 1, 1)).flatten().tolist()
    [0.3333333432674408, 0.3333333432674408]
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        window = _factories.tensor(_cross_map_window(input.shape[1], self.size),
                                   dtype=input.dtype, device=input.device)
        squares = (input * input).movedim(1, -1) @ window.transpose(0, 1)
        scale = squares.movedim(-1, 1) * (self.alpha / self.size) + self.k
        return input * scale ** -self.beta

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
