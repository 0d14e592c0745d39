"""Lazy modules: layers whose input size is read from the first batch.

Note [lazy modules]
    A lazy layer is built with UninitializedParameter / UninitializedBuffer in place
    of the tensors whose shape depends on the input. A forward pre-hook calls
    ``initialize_parameters(*args)`` on the first call: it materializes them (in
    place, so an optimizer built before holds the same objects), resets them the
    eager layer's way, removes the hooks and turns the module into its
    ``cls_to_become`` (LazyLinear -> Linear). ``state_dict`` keeps uninitialized
    entries as they are; loading an initialized entry into an uninitialized one
    materializes it to that shape first (the load pre-hook), and an uninitialized
    entry into an uninitialized one leaves it so.
"""
import itertools

from ... import _dtypes, _factories
from ..._grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                   ConvTranspose3d)
from .linear import Linear
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d)

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Mixin of the lazy layers (Note [lazy modules]); a subclass implements
    ``initialize_parameters(*args, **kwargs)`` and may name a ``cls_to_become``.

    >>> import chainrule as cr
    >>> fc = cr.nn.LazyLinear(2)
    >>> fc.has_uninitialized_params(), fc(cr.ones(3, 5)).shape, fc
    (True, chainrule.Size([3, 2]), Linear(in_features=5, out_features=2, bias=True))
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(LazyModuleMixin._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(
            LazyModuleMixin._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars \
                    else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        """Materialize an uninitialized entry that receives an initialized one."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) \
                    and not is_lazy(state_dict[key]):
                with no_grad():
                    param.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args, **kwargs):
        """Give the uninitialized parameters their shapes from the first input."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer is still uninitialized."""
        return any(is_lazy(t) for t in
                   itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, args, kwargs=None):
        self.initialize_parameters(*args, **(kwargs or {}))
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        self._initialize_hook.remove()
        self._load_hook.remove()
        del self._initialize_hook, self._load_hook
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


def _factory(device, dtype):
    return {"device": device, "dtype": dtype}


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is the last dim of its first input.

    >>> import chainrule as cr
    >>> fc = cr.nn.LazyLinear(3)
    >>> fc
    LazyLinear(in_features=0, out_features=3, bias=True)
    >>> fc(cr.ones(2, 4)).shape, fc.weight.shape
    (chainrule.Size([2, 3]), chainrule.Size([3, 4]))
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(**_factory(device, dtype))
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(**_factory(device, dtype))

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(**_factory(device, dtype))
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(**_factory(device, dtype))

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            pair = (self.in_channels, self.out_channels // self.groups) if self.transposed \
                else (self.out_channels, self.in_channels // self.groups)
            with no_grad():
                self.weight.materialize(pair + tuple(self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._n + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) "
                               f"input to {type(self).__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose ``in_channels`` is read from its first input.

    >>> import chainrule as cr
    >>> conv = cr.nn.LazyConv1d(4, 3)
    >>> conv(cr.ones(2, 5, 8)).shape, conv
    (chainrule.Size([2, 4, 6]), Conv1d(5, 4, kernel_size=(3,), stride=(1,)))
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose ``in_channels`` is read from its first input.

    >>> import chainrule as cr
    >>> conv = cr.nn.LazyConv2d(4, 3)
    >>> conv
    LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))
    >>> conv(cr.ones(1, 2, 5, 5)).shape, conv.weight.shape
    (chainrule.Size([1, 4, 3, 3]), chainrule.Size([4, 2, 3, 3]))
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose ``in_channels`` is read from its first input.

    >>> import chainrule as cr
    >>> cr.nn.LazyConv3d(2, 2)(cr.ones(3, 3, 3, 3)).shape
    chainrule.Size([2, 2, 2, 2])
    """

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose ``in_channels`` is read from its first input.

    >>> import chainrule as cr
    >>> cr.nn.LazyConvTranspose1d(2, 2, stride=2)(cr.ones(1, 3, 4)).shape
    chainrule.Size([1, 2, 8])
    """

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose ``in_channels`` is read from its first input.

    >>> import chainrule as cr
    >>> up = cr.nn.LazyConvTranspose2d(2, 2, stride=2)
    >>> up(cr.ones(1, 3, 4, 4)).shape, up.weight.shape
    (chainrule.Size([1, 2, 8, 8]), chainrule.Size([3, 2, 2, 2]))
    """

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose ``in_channels`` is read from its first input.

    >>> import chainrule as cr
    >>> cr.nn.LazyConvTranspose3d(2, 2, stride=2)(cr.ones(1, 3, 1, 2, 2)).shape
    chainrule.Size([1, 2, 2, 4, 4])
    """

    cls_to_become = ConvTranspose3d


# --- normalization ---------------------------------------------------------------------------
class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        # built without affine tensors and statistics: they come uninitialized below
        super().__init__(0, eps, momentum, False, False, dtype=dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(**_factory(device, dtype))
            if bias:
                self.bias = UninitializedParameter(**_factory(device, dtype))
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**_factory(device, dtype))
            self.running_var = UninitializedBuffer(**_factory(device, dtype))
            self.num_batches_tracked = _factories.tensor(0, dtype=_dtypes.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if t is not None:
                        t.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A BatchNorm1d whose ``num_features`` is read from its first input.

    >>> import chainrule as cr
    >>> bn = cr.nn.LazyBatchNorm1d()
    >>> bn(cr.randn(4, 3)).shape, bn.running_mean.shape
    (chainrule.Size([4, 3]), chainrule.Size([3]))
    """

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A BatchNorm2d whose ``num_features`` is read from its first input.

    >>> import chainrule as cr
    >>> cr.nn.LazyBatchNorm2d()
    LazyBatchNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A BatchNorm3d whose ``num_features`` is read from its first input.

    >>> import chainrule as cr
    >>> cr.nn.LazyBatchNorm3d()(cr.randn(2, 3, 1, 2, 2)).shape
    chainrule.Size([2, 3, 1, 2, 2])
    """

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """An InstanceNorm1d whose ``num_features`` is read from its first input (its
    defaults, torch's: ``affine=True, track_running_stats=True``).

    >>> import chainrule as cr
    >>> cr.nn.LazyInstanceNorm1d()(cr.randn(2, 3, 4)).shape
    chainrule.Size([2, 3, 4])
    """

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """An InstanceNorm2d whose ``num_features`` is read from its first input.

    >>> import chainrule as cr
    >>> cr.nn.LazyInstanceNorm2d()(cr.randn(2, 3, 4, 4)).shape
    chainrule.Size([2, 3, 4, 4])
    """

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """An InstanceNorm3d whose ``num_features`` is read from its first input.

    >>> import chainrule as cr
    >>> cr.nn.LazyInstanceNorm3d()(cr.randn(2, 3, 2, 2, 2)).shape
    chainrule.Size([2, 3, 2, 2, 2])
    """

    cls_to_become = InstanceNorm3d
