"""Identity, Linear, Bilinear; Flatten and Unflatten."""
import math

from ... import _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "Flatten", "Unflatten"]


def _empty(*shape, dtype=None):
    return _factories.empty(*shape, dtype=dtype)


class Identity(Module):
    """Returns its input (its constructor ignores its arguments).

    >>> import chainrule as cr
    >>> cr.nn.Identity(54, unused="x")(cr.ones(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``; weight (out_features, in_features) and bias are
    initialised U(-1/sqrt(in_features), 1/sqrt(in_features)) as in torch.

    >>> import chainrule as cr
    >>> fc = cr.nn.Linear(3, 2)
    >>> fc, fc(cr.ones(4, 3)).shape
    (Linear(in_features=3, out_features=2, bias=True), chainrule.Size([4, 2]))
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """torch's default: kaiming_uniform_(a=sqrt(5)) weight, uniform fan-in bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y[..., o] = x1 @ weight[o] @ x2 + bias[o]``.

    >>> import chainrule as cr
    >>> cr.nn.Bilinear(3, 4, 2)(cr.ones(5, 3), cr.ones(5, 4)).shape
    chainrule.Size([5, 2])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """U(-1/sqrt(in1_features), 1/sqrt(in1_features)) for weight and bias."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        if hasattr(F, "bilinear"):
            return F.bilinear(input1, input2, self.weight, self.bias)
        from ... import _ops
        out = _ops.FUNCTIONS["einsum"]("...i,oij,...j->...o", input1, self.weight, input2)
        return out if self.bias is None else out + self.bias

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    """Flatten dimensions ``start_dim`` to ``end_dim`` (by default all but the batch).

    >>> import chainrule as cr
    >>> cr.nn.Flatten()(cr.ones(2, 3, 4)).shape
    chainrule.Size([2, 12])
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size``.

    >>> import chainrule as cr
    >>> cr.nn.Unflatten(1, (3, 4))(cr.ones(2, 12)).shape
    chainrule.Size([2, 3, 4])
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
