"""``nn.utils.parametrizations``: weight normalisation, spectral normalisation and
orthogonality as parametrizations (Note [parametrized attributes] in parametrize.py)."""
from ... import _grad_mode
from ..._ops import FUNCTIONS
from .. import functional as F
from ..modules.module import Module
from . import parametrize

_F = FUNCTIONS


def norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dimension but ``dim`` (kept as size-1 dimensions);
    ``dim=-1``: the norm of the whole tensor."""
    if dim == -1:
        return v.norm()
    dims = tuple(d for d in range(v.ndim) if d != dim % v.ndim)
    return _F["sqrt"](_F["sum"](v * v, dims, keepdim=True)) if dims else _F["abs"](v)


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norm over every dimension but
    ``dim``): ``original0`` is g, ``original1`` is v.

    >>> import chainrule as cr
    >>> m = cr.nn.utils.parametrizations.weight_norm(cr.nn.Linear(3, 2))
    >>> [n for n, _ in m.named_parameters()]
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12, warmup=15):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps, self.n_power_iterations = eps, n_power_iterations
        if ndim > 1:
            matrix = self._reshape_weight_to_matrix(weight)
            h, w = matrix.shape
            u = F.normalize(matrix.new_empty(h).normal_(0, 1), dim=0, eps=eps)
            v = F.normalize(matrix.new_empty(w).normal_(0, 1), dim=0, eps=eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(matrix, warmup)   # the hook form starts from u, v as drawn

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, matrix, iterations):
        with _grad_mode.no_grad():
            for _ in range(iterations):
                self._u.copy_(F.normalize(_F["mv"](matrix, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(_F["mv"](matrix.mH if matrix.is_complex() else
                                                   matrix.T, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = _F["vdot"](u, _F["mv"](matrix, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize ``module.<name>`` as the weight divided by its largest singular
    value, estimated by power iteration (updated on each forward in training mode).

    >>> import chainrule as cr
    >>> m = cr.nn.utils.parametrizations.spectral_norm(cr.nn.Linear(3, 2))
    >>> sorted(m.state_dict())[-2:]
    ['parametrizations.weight.0._v', 'parametrizations.weight.original']
    """
    weight = getattr(module, name, None)
    if weight is None:
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d
        transposed = tuple(c for c in (ConvTranspose1d, ConvTranspose2d,
                                       _conv_transpose3d()) if c is not None)
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _conv_transpose3d():
    from ..modules import conv
    return getattr(conv, "ConvTranspose3d", None)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Parametrize ``module.<name>`` (a matrix or batch of matrices) as orthogonal
    (unitary): orthonormal columns if tall, rows if wide. ``orthogonal_map``:
    ``"matrix_exp"``, ``"cayley"`` or ``"householder"`` (default: ``"matrix_exp"`` for
    square or complex, else ``"householder"``); ``use_trivialization`` keeps an extra
    orthogonal ``base`` the map's result multiplies.

    >>> import chainrule as cr
    >>> m = cr.nn.utils.parametrizations.orthogonal(cr.nn.Linear(3, 5))
    >>> Q = m.weight
    >>> bool(cr.allclose(Q.T @ Q, cr.eye(3), atol=1e-5))
    True
    """
    from ..._tensor import Tensor
    from ._orthogonal import _Orthogonal, _OrthMaps
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
