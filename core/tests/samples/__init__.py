"""Sample inputs for every op of the derivative table, one module per family.

The generated tests (test_derivatives.py) run gradcheck, gradgradcheck and the
torch-parity check on every Sample, and fail if an op in the table has none.

A Sample names the table op it exercises, a call through the *public* API, and its
inputs: a shape tuple becomes a random tensor (float64 for gradcheck, complex128
when ``complex`` is set); a Tensor/ndarray is passed as is (indices, masks).
``domain=(lo, hi)`` bounds random values (log, sqrt); ``torch_call`` gives the same
call on torch for the parity tier (None: no parity for this sample).
"""
import importlib

FAMILIES = ("elementwise", "reduction", "shape", "linalg", "nn", "nn_surface", "special")


class Sample:
    def __init__(self, op, call, *inputs, complex=False, domain=None, torch_call="same",
                 gradgrad=True, atol=1e-5, rtol=1e-3, note=""):
        self.op = op
        self.call = call
        self.inputs = inputs
        self.complex = complex
        self.domain = domain
        self.torch_call = call if torch_call == "same" else torch_call
        self.gradgrad = gradgrad
        self.atol, self.rtol = atol, rtol
        self.note = note

    def id(self):
        shapes = ",".join(str(tuple(i)) if isinstance(i, tuple) else type(i).__name__
                          for i in self.inputs)
        return f"{self.op}[{shapes}]{self.note}"


def all_samples():
    samples = []
    for family in FAMILIES:
        module = importlib.import_module(f"samples.{family}")
        samples.extend(module.SAMPLES)
    return samples
