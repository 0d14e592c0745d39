"""Core's table Samples (core/tests/samples) run on the CUDA device: the same call on
CPU inputs and on the same values moved to the device, compared (values and
gradients). Shared by test_ops_cuda.py and the script that lists unsupported ops."""
import numpy as np

import chainrule as cr
from chainrule._ops import _registry

from samples import all_samples
from samples._inputs import make_inputs

RTOL, ATOL = 1e-6, 1e-8


def to_device(value):
    """A sample input on the device (a leaf again when it required grad)."""
    if isinstance(value, cr.Tensor):
        return value.detach().cuda().requires_grad_(value.requires_grad)
    return value


def fresh(value):
    """A new leaf with a sample tensor's values (samples share their fixed Tensor
    inputs between runs: their .grad would accumulate)."""
    if isinstance(value, cr.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


def tensors(out):
    if isinstance(out, cr.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in tensors(o)]
    return []


def _loss(outputs):
    return sum((o.abs() if o.is_complex() else o).sum() for o in outputs)


def not_implemented_derivative(sample, error):
    """Whether ``error`` is the table's own NOT_IMPLEMENTED derivative (the op raises it
    on the CPU as well)."""
    op = _registry.OPS.get(sample.op)
    return isinstance(error, NotImplementedError) and op is not None and \
        _registry.NOT_IMPLEMENTED in op.vjps and f"'{op.name}'" in str(error)


def check_against_cpu(sample):
    """Run ``sample`` on the CPU and on the device; assert equal values, outputs on the
    device, and equal gradients (of the sum of the outputs) on the inputs' devices."""
    cpu_inputs = [fresh(v) for v in make_inputs(sample)]
    dev_inputs = [to_device(v) for v in cpu_inputs]
    cpu_out, dev_out = tensors(sample.call(*cpu_inputs)), tensors(sample.call(*dev_inputs))
    assert len(cpu_out) == len(dev_out)
    for a, b in zip(cpu_out, dev_out):
        assert b.device.type == "cuda", f"an output is on {b.device}"
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), RTOL, ATOL)
    cpu_diff = [o for o in cpu_out if o.requires_grad]
    if not cpu_diff:
        return
    try:
        _loss(cpu_diff).backward()
    except NotImplementedError as e:
        if not_implemented_derivative(sample, e):
            return
        raise
    _loss([o for o in dev_out if o.requires_grad]).backward()
    for a, b in zip(cpu_inputs, dev_inputs):
        if isinstance(a, cr.Tensor) and a.requires_grad and a.grad is not None:
            assert b.grad.device.type == "cuda", f"a gradient is on {b.grad.device}"
            np.testing.assert_allclose(b.grad.cpu().numpy(), a.grad.numpy(), RTOL, ATOL)


def failures():
    """{op: first error} over every sample (what the unsupported list must match)."""
    failed = {}
    for sample in all_samples():
        try:
            check_against_cpu(sample)
        except Exception as e:          # noqa: BLE001 - any failure marks the op
            failed.setdefault(sample.op, f"{sample.id()}: {type(e).__name__}: {e}"[:300])
    return failed


if __name__ == "__main__":
    for op, error in sorted(failures().items()):
        print(f"    {op!r}: {error!r},")
