"""Parity tier: values and gradients of every op Sample against PyTorch.

Each Sample with a ``torch_call`` (core/tests/samples/) runs on chainrule and on torch
with identical inputs: forward values, output dtypes and the gradients for the same
random grad_outputs must agree, in float64 (complex128 for complex samples); the
first sample of each op also runs in float32 (complex64). Skips cleanly without torch.
"""
import os
import re
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

# The samples live with core's tests (runfiles under Bazel, the source tree otherwise).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                "core", "tests"))

import chainrule as cr  # noqa: E402
from chainrule._ops import _registry  # noqa: E402
from samples import all_samples  # noqa: E402
from samples._inputs import make_inputs, to_torch  # noqa: E402

PARITY = [s for s in all_samples() if s.torch_call is not None]
TOLERANCES = {cr.float64: dict(rtol=1e-7, atol=1e-10), cr.float32: dict(rtol=1e-4, atol=1e-5)}


def _first_per_op(samples):
    firsts = {}
    for s in samples:
        firsts.setdefault(s.op, s)
    return list(firsts.values())


FLOAT32 = _first_per_op(PARITY)


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _dtype_name(dtype):
    return str(dtype).split(".")[-1]


def _numpy(value):
    if isinstance(value, cr.Tensor):
        return value.detach().numpy()
    return value.detach().numpy(force=True)     # resolves torch's conj bit and zero tensors


def _check_values(ours, theirs, tolerance, what):
    assert len(ours) == len(theirs), f"{what}: {len(ours)} outputs, torch has {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if not isinstance(b, torch.Tensor):
            assert a == b, f"{what}: output {i} is {a!r}, torch gives {b!r}"
            continue
        assert tuple(a.shape) == tuple(b.shape), f"{what}: output {i} shape"
        assert _dtype_name(a.dtype) == _dtype_name(b.dtype), f"{what}: output {i} dtype"
        np.testing.assert_allclose(_numpy(a), _numpy(b), err_msg=f"{what}: output {i}",
                                   **tolerance)


def _grad_outputs(outputs, rng):
    """The same random grad_output for both libraries, per floating output."""
    grads = []
    for o in outputs:
        arr = _numpy(o)
        g = rng.standard_normal(arr.shape)
        if arr.dtype.kind == "c":
            g = g + 1j * rng.standard_normal(arr.shape)
        grads.append(np.asarray(g, dtype=arr.dtype))
    return grads


def _gradients(outputs, inputs, grads, grad_fn, wrap):
    """Gradients of sum(grad . output) w.r.t. the inputs that require grad (zeros for
    unused inputs; outputs that do not require grad contribute nothing)."""
    pairs = [(o, wrap(g)) for o, g in zip(outputs, grads) if o.requires_grad]
    diff = [t for t in inputs if _requires_grad(t)]
    if not pairs:
        return [np.zeros(_numpy(t).shape, _numpy(t).dtype) for t in diff]
    found = grad_fn([o for o, _ in pairs], diff, [g for _, g in pairs], allow_unused=True)
    return [np.zeros(_numpy(t).shape, _numpy(t).dtype) if g is None else _numpy(g)
            for g, t in zip(found, diff)]


def _requires_grad(value):
    return isinstance(value, (cr.Tensor, torch.Tensor)) and value.requires_grad


def _check_parity(sample, dtype):
    inputs = make_inputs(sample, dtype=dtype)
    torch_inputs = [to_torch(v, torch) for v in inputs]
    ours = _as_list(sample.call(*inputs))
    theirs = _as_list(sample.torch_call(*torch_inputs))
    tolerance = TOLERANCES[dtype]
    _check_values(ours, theirs, tolerance, sample.id())
    floating = [i for i, o in enumerate(ours) if isinstance(o, cr.Tensor)
                and (o.is_floating_point() or o.is_complex())]
    grads = _grad_outputs([ours[i] for i in floating], np.random.default_rng(1))
    try:
        got = _gradients([ours[i] for i in floating], inputs, grads, cr.autograd.grad,
                         lambda g: cr.tensor(g))
    except RuntimeError as error:      # a NOT_IMPLEMENTED formula: torch must refuse alike
        if not _registry.raised_by_marker(_registry.OPS[sample.op], error):
            raise
        with pytest.raises(type(error), match=re.escape(str(error))):
            _gradients([theirs[i] for i in floating], torch_inputs, grads,
                       torch.autograd.grad, torch.from_numpy)
        return
    expected = _gradients([theirs[i] for i in floating], torch_inputs, grads,
                          torch.autograd.grad, torch.from_numpy)
    for k, (a, b) in enumerate(zip(got, expected)):
        assert a.dtype == b.dtype, f"{sample.id()}: gradient {k} dtype {a.dtype} != {b.dtype}"
        np.testing.assert_allclose(a, b, err_msg=f"{sample.id()}: gradient {k}", **tolerance)


@pytest.mark.parametrize("sample", PARITY, ids=[s.id() for s in PARITY])
def test_parity_float64(sample):
    _check_parity(sample, cr.float64)


@pytest.mark.parametrize("sample", FLOAT32, ids=[s.id() for s in FLOAT32])
def test_parity_float32(sample):
    _check_parity(sample, cr.float32)



def _tie_indices(lib, x, n, with_mode):
    out = []
    for desc in (False, True):
        out += [lib.sort(x, descending=desc).indices, lib.argsort(x, 0, desc)]
    for k in {1, 2, max(1, n // 64), n // 2 + 1, n}:
        out += [lib.topk(x, k, largest=largest, sorted=s).indices
                for largest in (True, False) for s in (True, False)]
        out.append(lib.kthvalue(x, k).indices)
    if with_mode:
        out += [lib.mode(x).indices, lib.mode(x, 0).indices]
    return [o.numpy().tolist() for o in out]


@pytest.mark.parametrize("seed", range(4))
def test_tied_indices_match_the_references_cpu_kernels(seed):
    """Note [ties on the CPU]: sort, argsort, topk, kthvalue and mode on inputs full of
    ties (a few distinct values, several rows; NaNs in float64)."""
    rng = np.random.default_rng(seed)
    for n in (5, 16, 17, 64, 130, 333):
        a = rng.integers(0, 1 + seed % 3 + n % 4, size=(3, n)).astype(
            [np.float32, np.float64, np.int64, np.int32][seed])
        if a.dtype == np.float64:
            a[:, ::5] = np.nan
        with_mode = a.dtype != np.float64
        assert _tie_indices(cr, cr.tensor(a.copy()), n, with_mode) == \
            _tie_indices(torch, torch.from_numpy(a.copy()), n, with_mode)
