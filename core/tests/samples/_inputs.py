"""A Sample's inputs as chainrule tensors (and the same values as torch tensors), for
the generated gradcheck tests and the torch-parity tier.

A shape tuple becomes a random tensor that requires grad: uniform in ``sample.domain``
(default DEFAULT_DOMAIN), complex with real and imaginary parts each in the domain
when ``sample.complex``. Anything else (index tensors, masks, numbers) is passed as is.
"""
import numpy as np

import chainrule as cr

DEFAULT_DOMAIN = (-2.0, 2.0)


def _random_values(shape, sample, rng):
    lo, hi = sample.domain or DEFAULT_DOMAIN
    values = rng.uniform(lo, hi, shape)
    if sample.complex:
        values = values + 1j * rng.uniform(lo, hi, shape)
    return values


def make_inputs(sample, dtype=cr.float64, seed=0):
    """The sample's inputs as chainrule values; random ones get ``dtype`` (its complex
    counterpart for complex samples) and require grad."""
    rng = np.random.default_rng(seed)
    dtype = dtype.to_complex() if sample.complex else dtype
    return [cr.tensor(_random_values(i, sample, rng), dtype=dtype, requires_grad=True)
            if isinstance(i, tuple) else i for i in sample.inputs]


def to_torch(value, torch):
    """The same value as a torch object (a chainrule tensor becomes a torch leaf with the
    same data and requires_grad)."""
    if isinstance(value, cr.Tensor):
        t = torch.from_numpy(np.array(value.detach().numpy()))
        return t.requires_grad_(value.requires_grad)
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.array(value))
    return value
