"""The derivative table, one module per family, and the namespaces formulas run in.

Families: elementwise, reduction, shape (views and indexing), linalg, nn. Importing
this package registers every op (``_registry.OPS``), installs the public functions
(``_common.FUNCTIONS``) and Tensor methods, and builds TENSOR_NS.
"""
from . import _registry
from ._common import FUNCTIONS
from ._formula_helpers import HELPERS
from ._namespaces import ARRAY_NS, TensorNamespace, bind_helpers
from . import elementwise, operators, conversions  # noqa: F401  (registration side effects)
from . import reduction, shape, linalg, nn  # noqa: F401
from . import indexing
from . import pooling  # noqa: F401
from . import upsample  # noqa: F401
from . import padding  # noqa: F401
from . import shuffle  # noqa: F401
from . import im2col  # noqa: F401
from . import unpooling  # noqa: F401
from . import distance  # noqa: F401
from . import embedding_bag  # noqa: F401
from . import grid_sampler  # noqa: F401
from . import attention  # noqa: F401
from . import margin_losses  # noqa: F401
from . import affine_grid  # noqa: F401
from . import ctc  # noqa: F401
from . import linalg_functions  # noqa: F401
from . import special_functions  # noqa: F401
from . import torch_surface  # noqa: F401
from . import legacy_surface, control_flow, lowrank, segments  # noqa: F401
from . import linalg_householder, linalg_ldl  # noqa: F401
from . import fft, fft_functions, spectral  # noqa: F401
from . import aliases, sets, composites  # noqa: F401  (after the families: they use their ops)
from . import foreach  # noqa: F401
from ._method_slot import accelerable
from .._tensor import Tensor

# Note [method slot]: the augmented assignments of operators.py (an optimizer's
# `p -= lr * p.grad`), declared here, after every Tensor method is in place.
for _name, _op in (("__iadd__", elementwise.ADD), ("__isub__", elementwise.SUB),
                   ("__imul__", elementwise.MUL), ("__itruediv__", elementwise.DIV)):
    accelerable(_name, "inplace", _op, {}, Tensor.__dict__[_name])

# Note [method slot]: the commonest view methods, whose arguments a replacement may
# parse itself; attrs name the Python function it mirrors.
for _name, _op, _method in (("t", shape.T, "t"), ("transpose", shape.TRANSPOSE, "transpose"),
                            ("unsqueeze", shape.UNSQUEEZE, "unsqueeze"),
                            ("permute", shape.PERMUTE, "permute"), ("view", shape.VIEW, "view"),
                            ("reshape", shape.VIEW, "reshape"),
                            ("__getitem__", indexing.SELECT, "getitem")):
    accelerable(_name, "view", _op, {"method": _method}, Tensor.__dict__[_name])

TENSOR_NS = TensorNamespace(FUNCTIONS)
bind_helpers(ARRAY_NS, HELPERS)
bind_helpers(TENSOR_NS, HELPERS)
TENSOR_NS.sum_to = FUNCTIONS["sum_to"]
_registry.ARRAY_NS = ARRAY_NS
_registry.TENSOR_NS = TENSOR_NS
