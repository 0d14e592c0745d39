"""Every activation of ``torch.nn`` as a module; each calls the ``nn.functional``
function of the same name with its stored arguments."""
import inspect
import warnings

from ... import _factories
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "CELU", "SELU", "GELU",
           "SiLU", "Mish", "Sigmoid", "Tanh", "Softplus", "Softsign", "Softshrink",
           "Hardshrink", "Tanhshrink", "Hardtanh", "Hardsigmoid", "Hardswish", "LogSigmoid",
           "Threshold", "Softmax", "LogSoftmax", "Softmin", "Softmax2d", "GLU"]


class _Activation(Module):
    """A module around ``F.<_function>(input, *stored arguments)``.

    ``_args`` names the constructor's arguments in the functional form's order;
    ``_shown`` the ones its repr shows (``inplace`` is shown only when True).
    """

    _function = None
    _args = ()
    _defaults = {}
    _shown = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.__signature__ = inspect.Signature([
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              default=cls._defaults.get(name, inspect.Parameter.empty))
            for name in cls._args])

    def __init__(self, *args, **kwargs):
        super().__init__()
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{type(self).__name__}.__init__() {exc}") from None
        bound.apply_defaults()
        for key, value in bound.arguments.items():
            setattr(self, key, value)

    def forward(self, input):
        fn = getattr(F, self._function)
        return fn(input, *(getattr(self, k) for k in self._args))

    def extra_repr(self):
        parts = [f"{k}={getattr(self, k)!r}" for k in self._shown]
        if getattr(self, "inplace", False):
            parts.append("inplace=True")
        return ", ".join(parts)


def _activation(name, function, defaults, shown=(), doc=""):
    """A subclass of _Activation; ``defaults`` is an ordered dict of its arguments."""
    cls = type(name, (_Activation,), {"_function": function, "_args": tuple(defaults),
                                      "_defaults": dict(defaults), "_shown": tuple(shown),
                                      "__doc__": doc, "__module__": __name__})
    return cls


_X = "\n\n    >>> import chainrule as cr\n    >>> [round(v, 4) for v in cr.nn.{}({})(cr.tensor([-1.0, 0.5])).tolist()]\n    {}\n    "

ReLU = _activation("ReLU", "relu", {"inplace": False}, (),
                   "``max(x, 0)`` element-wise." + _X.format("ReLU", "", "[0.0, 0.5]"))
LeakyReLU = _activation("LeakyReLU", "leaky_relu", {"negative_slope": 0.01, "inplace": False},
                        ("negative_slope",), "``x`` where positive, ``negative_slope * x`` "
                        "elsewhere." + _X.format("LeakyReLU", "0.1", "[-0.1, 0.5]"))
ELU = _activation("ELU", "elu", {"alpha": 1.0, "inplace": False}, ("alpha",),
                  "``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."
                  + _X.format("ELU", "", "[-0.6321, 0.5]"))
CELU = _activation("CELU", "celu", {"alpha": 1.0, "inplace": False}, ("alpha",),
                   "``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."
                   + _X.format("CELU", "", "[-0.6321, 0.5]"))
SELU = _activation("SELU", "selu", {"inplace": False}, (),
                   "Scaled ELU with torch's fixed constants." + _X.format("SELU", "", "[-1.1113, 0.5254]"))
GELU = _activation("GELU", "gelu", {"approximate": "none"}, ("approximate",),
                   "Gaussian error linear unit." + _X.format("GELU", "", "[-0.1587, 0.3457]"))
SiLU = _activation("SiLU", "silu", {"inplace": False}, (),
                   "``x * sigmoid(x)``." + _X.format("SiLU", "", "[-0.2689, 0.3112]"))
Mish = _activation("Mish", "mish", {"inplace": False}, (),
                   "``x * tanh(softplus(x))``." + _X.format("Mish", "", "[-0.3034, 0.3752]"))
Sigmoid = _activation("Sigmoid", "sigmoid", {}, (),
                      "Logistic sigmoid." + _X.format("Sigmoid", "", "[0.2689, 0.6225]"))
Tanh = _activation("Tanh", "tanh", {}, (), "Hyperbolic tangent."
                   + _X.format("Tanh", "", "[-0.7616, 0.4621]"))
Softplus = _activation("Softplus", "softplus", {"beta": 1.0, "threshold": 20.0},
                       ("beta", "threshold"), "``log(1 + exp(beta * x)) / beta``."
                       + _X.format("Softplus", "", "[0.3133, 0.9741]"))
Softsign = _activation("Softsign", "softsign", {}, (), "``x / (1 + |x|)``."
                       + _X.format("Softsign", "", "[-0.5, 0.3333]"))
Tanhshrink = _activation("Tanhshrink", "tanhshrink", {}, (), "``x - tanh(x)``."
                         + _X.format("Tanhshrink", "", "[-0.2384, 0.0379]"))
Hardsigmoid = _activation("Hardsigmoid", "hardsigmoid", {"inplace": False}, (),
                          "``relu6(x + 3) / 6``." + _X.format("Hardsigmoid", "", "[0.3333, 0.5833]"))
Hardswish = _activation("Hardswish", "hardswish", {"inplace": False}, (),
                        "``x * relu6(x + 3) / 6``." + _X.format("Hardswish", "", "[-0.3333, 0.2917]"))
LogSigmoid = _activation("LogSigmoid", "logsigmoid", {}, (), "``log(sigmoid(x))``."
                         + _X.format("LogSigmoid", "", "[-1.3133, -0.4741]"))
Threshold = _activation("Threshold", "threshold", {"threshold": inspect.Parameter.empty,
                                                   "value": inspect.Parameter.empty,
                                                   "inplace": False},
                        ("threshold", "value"), "``x`` where ``x > threshold``, else ``value``."
                        + _X.format("Threshold", "0.0, 7.0", "[7.0, 0.5]"))


class Hardtanh(_Activation):
    """``x`` clamped to [min_val, max_val].

    >>> import chainrule as cr
    >>> cr.nn.Hardtanh(-0.5, 0.5)(cr.tensor([-1.0, 0.2])).tolist()
    [-0.5, 0.20000000298023224]
    """

    _function = "hardtanh"
    _args = ("min_val", "max_val", "inplace", "min_value", "max_value")
    _defaults = {"min_val": -1.0, "max_val": 1.0, "inplace": False, "min_value": None,
                 "max_value": None}
    _shown = ("min_val", "max_val")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for old, new in (("min_value", "min_val"), ("max_value", "max_val")):
            if self.__dict__.pop(old, None) is not None:
                warnings.warn(f"keyword argument `{old}` is deprecated and rename to `{new}`",
                              FutureWarning, stacklevel=2)
                setattr(self, new, kwargs[old])

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``.

    >>> import chainrule as cr
    >>> cr.nn.ReLU6()(cr.tensor([-1.0, 7.0])).tolist()
    [0.0, 6.0]
    """

    _args = ("inplace",)
    _defaults = {"inplace": False}
    _shown = ()

    def __init__(self, inplace=False):
        _Activation.__init__(self, inplace)
        self.min_val, self.max_val = 0.0, 6.0


class _Shrink(_Activation):
    _args = ("lambd",)
    _defaults = {"lambd": 0.5}

    def extra_repr(self):
        return str(self.lambd)


class Softshrink(_Shrink):
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, 0 between.

    >>> import chainrule as cr
    >>> cr.nn.Softshrink()(cr.tensor([-1.0, 0.2])).tolist()
    [-0.5, 0.0]
    """

    _function = "softshrink"


class Hardshrink(_Shrink):
    """``x`` where ``|x| > lambd``, 0 elsewhere.

    >>> import chainrule as cr
    >>> cr.nn.Hardshrink()(cr.tensor([-1.0, 0.2])).tolist()
    [-1.0, 0.0]
    """

    _function = "hardshrink"


class RReLU(_Activation):
    """Randomized leaky ReLU: a slope drawn from U(lower, upper) in training, their
    mean in evaluation.

    >>> import chainrule as cr
    >>> cr.nn.RReLU(0.1, 0.3).eval()(cr.tensor([-1.0, 1.0])).tolist()
    [-0.20000000298023224, 1.0]
    """

    _function = "rrelu"
    _args = ("lower", "upper", "inplace")
    _defaults = {"lower": 1.0 / 8, "upper": 1.0 / 3, "inplace": False}
    _shown = ("lower", "upper")

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)


class _DimActivation(_Activation):
    _args = ("dim",)
    _defaults = {"dim": None}
    _shown = ("dim",)

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("dim", None)

    def forward(self, input):
        return getattr(F, self._function)(input, self.dim, _stacklevel=5)


class Softmax(_DimActivation):
    """``exp(x) / sum(exp(x))`` along ``dim``.

    >>> import chainrule as cr
    >>> cr.nn.Softmax(dim=0)(cr.zeros(2)).tolist()
    [0.5, 0.5]
    """

    _function = "softmax"


class LogSoftmax(_DimActivation):
    """``log(softmax(x))`` along ``dim``.

    >>> import chainrule as cr
    >>> [round(v, 4) for v in cr.nn.LogSoftmax(dim=0)(cr.zeros(2)).tolist()]
    [-0.6931, -0.6931]
    """

    _function = "log_softmax"


class Softmin(_DimActivation):
    """``softmax(-x)`` along ``dim``.

    >>> import chainrule as cr
    >>> cr.nn.Softmin(dim=0)(cr.zeros(2)).tolist()
    [0.5, 0.5]
    """

    _function = "softmin"


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.Softmax2d()(cr.zeros(1, 2, 1, 1)).flatten().tolist()
    [0.5, 0.5]
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


class GLU(_Activation):
    """Gated linear unit: ``a * sigmoid(b)`` for the halves a, b of ``dim``.

    >>> import chainrule as cr
    >>> cr.nn.GLU()(cr.tensor([2.0, 0.0])).tolist()
    [1.0]
    """

    _function = "glu"
    _args = ("dim",)
    _defaults = {"dim": -1}
    _shown = ("dim",)


class PReLU(Module):
    """Leaky ReLU with a learned slope (one, or one per channel), initialised to
    ``init``.

    >>> import chainrule as cr
    >>> cr.nn.PReLU()(cr.tensor([-1.0, 2.0])).tolist()
    [-0.25, 2.0]
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(_factories.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        """Every slope set to ``init``."""
        from .. import init as nn_init
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
