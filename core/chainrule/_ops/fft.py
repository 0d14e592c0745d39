"""Derivative table: the discrete Fourier transforms behind ``chainrule.fft`` (and
``stft``/``istft``), the reference's three primitives, with pocketfft (``np.fft``) as
the engine:

    _fft_c2c(self, dim, normalization, forward)       complex -> complex
    _fft_r2c(self, dim, normalization, onesided)      real -> complex (forward sign)
    _fft_c2r(self, dim, normalization, last_dim_size) one-sided complex -> real
                                                      (inverse sign)

``dim`` is a tuple of non-negative dims; ``normalization`` is the scaling applied, as
in the reference: 0 none, 1 by 1/sqrt(n), 2 by 1/n (n: the product of the transformed
sizes). The public functions (fft_functions.py) check arguments, cast, crop or
zero-pad the input (``n``/``s``) and call these.

Note [fft adjoints]
    A transform with scaling c is the linear map c*W (W the unscaled DFT matrix, whose
    adjoint is the unscaled transform of the other sign), so under the
    conjugate-Wirtinger convention its VJP is the other direction with the *same*
    scaling; every JVP is the op itself on the tangent (all three are linear).
    r2c's VJP is the real part of that adjoint, with the bins a one-sided transform
    drops taken as zero gradients; c2r reads each bin k of 1..n-n//2-1 twice (as k
    and as its mirror n-k), so its VJP, the one-sided forward transform of g, counts
    those bins twice (the reference's doubling); the DC bin and, for even n, the
    Nyquist bin are read once.
"""
import numpy as np

from ._common import formula_helper
from ._formula_helpers import helper
from ._namespaces import array_fn
from ._registry import apply_op, defop

# (normalization, forward) -> np.fft's norm string applying that scaling
_NP_NORM = {(0, True): "backward", (1, True): "ortho", (2, True): "forward",
            (0, False): "forward", (1, False): "ortho", (2, False): "backward"}


def _c2c_forward(x, dim, normalization, forward):
    if not dim:
        return x.copy()
    transform = np.fft.fftn if forward else np.fft.ifftn
    return transform(x, axes=dim, norm=_NP_NORM[normalization, forward])


def _r2c_forward(x, dim, normalization, onesided):
    transform = np.fft.rfftn if onesided else np.fft.fftn
    return transform(x, axes=dim, norm=_NP_NORM[normalization, True])


def _c2r_forward(x, dim, normalization, last_dim_size):
    sizes = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    return np.fft.irfftn(x, s=sizes, axes=dim, norm=_NP_NORM[normalization, False])


# --- formula helpers (both namespaces; Note [fft adjoints]) ----------------------------
@helper
def fft_r2c_backward(F, g, self_shape, dim, normalization, onesided):
    """VJP of r2c: the dropped bins get zero gradient, then the real part of the
    inverse-sign transform."""
    if onesided:
        last = dim[-1]
        missing = self_shape[last] - g.shape[last]
        if missing > 0:
            g = F._constant_pad(g, _pads_on(len(g.shape), last, 0, missing), 0)
    return F.real(F._fft_c2c(g, dim, normalization, False))


@helper
def fft_c2r_backward(F, g, dim, normalization):
    """VJP of c2r: the one-sided forward transform of ``g``, its mirrored bins doubled."""
    grad = F._fft_r2c(g, dim, normalization, True)
    last = dim[-1]
    twice = g.shape[last] - grad.shape[last]          # bins 1..twice are read twice
    if twice > 0:
        again = F.narrow(grad, last, 1, twice)
        rest = grad.shape[last] - 1 - twice
        grad = grad + F._constant_pad(again, _pads_on(len(grad.shape), last, 1, rest), 0)
    return grad


def _pads_on(ndim, dim, before, after):
    """constant_pad_nd's per-dim (before, after) pairs padding only ``dim``."""
    return tuple((before, after) if d == dim else (0, 0) for d in range(ndim))


# --- the table -------------------------------------------------------------------------
FFT_C2C = defop("fft_c2c", _c2c_forward, attrs=("dim", "normalization", "forward"),
                node_name="FftC2CBackward0",
                vjp=(lambda F, g, dim, normalization, forward:
                     F._fft_c2c(g, dim, normalization, not forward),),
                jvp=lambda F, t, dim, normalization, forward:
                    F._fft_c2c(t[0], dim, normalization, forward))
FFT_R2C = defop("fft_r2c", _r2c_forward, attrs=("dim", "normalization", "onesided"),
                node_name="FftR2CBackward0",
                vjp=(lambda F, g, self_shape, dim, normalization, onesided:
                     F.fft_r2c_backward(g, self_shape, dim, normalization, onesided),),
                jvp=lambda F, t, dim, normalization, onesided:
                    F._fft_r2c(t[0], dim, normalization, onesided))
FFT_C2R = defop("fft_c2r", _c2r_forward, attrs=("dim", "normalization", "last_dim_size"),
                node_name="FftC2RBackward0",
                vjp=(lambda F, g, dim, normalization: F.fft_c2r_backward(g, dim, normalization),),
                jvp=lambda F, t, dim, normalization, last_dim_size:
                    F._fft_c2r(t[0], dim, normalization, last_dim_size))

array_fn("_fft_c2c")(_c2c_forward)
array_fn("_fft_r2c")(_r2c_forward)
array_fn("_fft_c2r")(_c2r_forward)


@formula_helper
def _fft_c2c(self, dim, normalization, forward):
    return apply_op(FFT_C2C, (self,), {"dim": tuple(dim), "normalization": normalization,
                                       "forward": forward})


@formula_helper
def _fft_r2c(self, dim, normalization, onesided):
    return apply_op(FFT_R2C, (self,), {"dim": tuple(dim), "normalization": normalization,
                                       "onesided": onesided})


@formula_helper
def _fft_c2r(self, dim, normalization, last_dim_size):
    return apply_op(FFT_C2R, (self,), {"dim": tuple(dim), "normalization": normalization,
                                       "last_dim_size": last_dim_size})
