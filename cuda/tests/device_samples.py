"""Core's table Samples (core/tests/samples) run on the CUDA device: the same call on
CPU inputs and on the same values moved to the device, compared (values and
gradients). Shared by test_ops_cuda.py and the script that lists unsupported ops.

A sample's call may hold fixed tensors of its own besides its inputs (a loss's class
``weight=``, an attention mask, targets): ``device_call`` gives the same call with
those on the device too (a CPU one there is the reference's mixed-device error).

Random ops (dropout, rrelu) draw on the device with its counter-based kernels and on
the CPU with NumPy: ``device_random_numbers`` makes the CPU run draw the device's
numbers (copied to the host), so both runs compute with the same mask."""
import contextlib
import types

import numpy as np

import chainrule as cr
from chainrule import _random
from chainrule._ops import _registry

from host_copies import counted_copies
from samples import all_samples
from samples._inputs import make_inputs

RTOL, ATOL = 1e-6, 1e-8


def to_device(value):
    """A sample input on the device (a leaf again when it required grad)."""
    if isinstance(value, cr.Tensor):
        return value.detach().cuda().requires_grad_(value.requires_grad)
    return value


def _moved(value, memo):
    """``value`` with the tensors in it (in dicts, lists, tuples, functions' closures)
    on the device."""
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, cr.Tensor):
        moved = to_device(value)
    elif isinstance(value, dict):
        moved = {k: _moved(v, memo) for k, v in value.items()}
    elif type(value) in (list, tuple):
        moved = type(value)(_moved(v, memo) for v in value)
    elif isinstance(value, types.FunctionType) and value.__module__.startswith("samples"):
        moved = _rebuilt(value, memo)
    else:
        return value
    memo[id(value)] = moved
    return moved


def _cell(cell, memo):
    try:
        return types.CellType(_moved(cell.cell_contents, memo))
    except ValueError:                  # an empty cell (a name bound later)
        return cell


def _rebuilt(fn, memo):
    """``fn`` with its closure, defaults and the module globals it names moved."""
    names = {n: fn.__globals__[n] for n in fn.__code__.co_names if n in fn.__globals__}
    moved = {n: _moved(v, memo) for n, v in names.items()}
    changed = {n: v for n, v in moved.items() if v is not names[n]}
    scope = dict(fn.__globals__, **changed) if changed else fn.__globals__
    closure = tuple(_cell(c, memo) for c in fn.__closure__) if fn.__closure__ else None
    new = types.FunctionType(fn.__code__, scope, fn.__name__, _moved(fn.__defaults__, memo),
                             closure)
    new.__kwdefaults__ = _moved(fn.__kwdefaults__, memo)
    return new


def device_call(sample):
    """``sample.call`` with the fixed tensors it holds (keyword arguments such as
    ``weight=``, targets, masks) on the device."""
    return _rebuilt(sample.call, {})


@contextlib.contextmanager
def device_random_numbers():
    """Host draws (``_random.device_draw`` for a host array) made by the device's
    kernels from the device's generator, and copied to the host."""
    original = _random.device_draw
    probe = cr.zeros(1, device="cuda")._data

    def draw(kind, shape, dtype, like, generator=None, arg0=0.0, arg1=1.0):
        if type(like) is np.ndarray:
            return original(kind, shape, dtype, probe, generator, arg0, arg1).get()
        return original(kind, shape, dtype, like, generator, arg0, arg1)

    _random.device_draw = draw
    try:
        yield
    finally:
        _random.device_draw = original


@contextlib.contextmanager
def host_round_trips():
    """The names of the host-run functions (Note [host-run functions] in
    chainrule_cuda/_functions.py) called inside, in a list."""
    from chainrule_cuda import _functions
    original, calls = _functions.on_host, []

    def record(func, *args, **kwargs):
        calls.append(func.__name__)
        return original(func, *args, **kwargs)

    _functions.on_host = record
    try:
        yield calls
    finally:
        _functions.on_host = original


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
    return op is not None and _registry.raised_by_marker(op, error)


def check_against_cpu(sample):
    """Run ``sample`` on the CPU and on the device; assert equal values, outputs on the
    device, and equal gradients (of the sum of the outputs) on the inputs' devices.
    Returns what the device run (forward and backward) did with host memory: the names
    of the host-run functions it called, and "data to the host" for arrays it copied
    there otherwise."""
    traffic = set()
    _compare(sample, traffic)
    return traffic


@contextlib.contextmanager
def _device_phase(traffic):
    with host_round_trips() as calls, counted_copies() as copies:
        yield
    traffic.update(calls)
    if copies.to_host and not calls:
        traffic.add("data to the host")


def _compare(sample, traffic):
    cpu_inputs = [fresh(v) for v in make_inputs(sample)]
    dev_inputs = [to_device(v) for v in cpu_inputs]
    with device_random_numbers():
        cpu_out = tensors(sample.call(*cpu_inputs))
    with _device_phase(traffic):
        dev_out = tensors(device_call(sample)(*dev_inputs))
    assert len(cpu_out) == len(dev_out)
    for a, b in zip(cpu_out, dev_out):
        assert b.device.type == "cuda", f"an output is on {b.device}"
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), RTOL, ATOL)
    cpu_diff = [o for o in cpu_out if o.requires_grad]
    if not cpu_diff:
        return
    try:
        _loss(cpu_diff).backward()
    except RuntimeError as e:
        if not_implemented_derivative(sample, e):
            return
        raise
    with _device_phase(traffic):
        _loss([o for o in dev_out if o.requires_grad]).backward()
    for a, b in zip(cpu_inputs, dev_inputs):
        if isinstance(a, cr.Tensor) and a.requires_grad and a.grad is not None:
            assert b.grad.device.type == "cuda", f"a gradient is on {b.grad.device}"
            np.testing.assert_allclose(b.grad.cpu().numpy(), a.grad.numpy(), RTOL, ATOL)


def survey():
    """({op: first error}, {op: host-run functions called}) over every sample (what the
    unsupported list and the list of host round trips must match)."""
    failed, host = {}, {}
    for sample in all_samples():
        try:
            called = check_against_cpu(sample)
        except Exception as e:          # noqa: BLE001 - any failure marks the op
            failed.setdefault(sample.op, f"{sample.id()}: {type(e).__name__}: {e}"[:300])
            continue
        if called:
            host.setdefault(sample.op, set()).update(called)
    return failed, host


if __name__ == "__main__":
    failing, host_run = survey()
    for op, error in sorted(failing.items()):
        print(f"    {op!r}: {error!r},")
    for op, names in sorted(host_run.items()):
        print(f"    {op!r}: {sorted(names)!r},")
