"""``gradcheck`` and ``gradgradcheck``: analytical gradients against finite differences.

gradcheck builds, for every input that requires grad and every differentiable output,
the numerical Jacobian by central differences (each input element moved by ``+-eps``)
and the analytical one from backward passes (one vector-Jacobian product per output
element), and compares them with ``|analytical - numerical| <= atol + rtol *
|numerical|``. ``fast_mode=True`` compares only the scalar ``v^T J u`` for random unit
vectors ``u`` (per input) and ``v`` (per output): two evaluations per input (four for
a complex one) and two backward passes per output (the second checks reentrancy),
whatever the sizes.

Note [complex gradcheck]
    Gradients follow the conjugate-Wirtinger convention: for a real loss L of a
    complex input z = x + iy the gradient is dL/dx + i dL/dy. So the numerical
    Jacobian of a real output with respect to a complex input has the entries
    ds/dx + i ds/dy (the input is moved along both the real and the imaginary axis).
    A complex output is checked as two real functions: its real part (backward with
    grad_output 1) and its imaginary part (grad_output 1j), as the reference does.

Note [Jacobian layout]
    A Jacobian is an array of shape (input numel, output numel): row k holds the
    derivatives of every output element with respect to input element k (flattened
    in C order), as the reference prints it.
"""
import warnings

import numpy as np

from .. import _random
from .._tensor import DEVICE_ARRAY_TYPES, Tensor, on_device_of

_PART_NAMES = {"real": "real", "imag": "imaginary"}


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


class _Config:
    """The tolerances and switches of one gradcheck call."""

    def __init__(self, eps, atol, rtol, nondet_tol, check_grad_dtypes):
        self.eps, self.atol, self.rtol = eps, atol, rtol
        self.nondet_tol = nondet_tol
        self.check_grad_dtypes = check_grad_dtypes


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    ``inputs`` is a tensor or a tuple of arguments; the tensors among them that
    require grad are differentiated (use float64/complex128: lower precisions warn,
    and will likely fail). The outputs of ``func`` that require grad are checked, the
    others (integer outputs, detached tensors) are ignored. Returns True, or raises
    ``GradcheckError`` (a RuntimeError) naming the output and input whose Jacobians
    differ, with both Jacobians; with ``raise_exception=False`` it returns False
    instead. Complex inputs and outputs follow Note [complex gradcheck].

    Besides the Jacobians it checks that backward is reentrant (two runs agree
    within ``nondet_tol``), that zero output gradients give zero input gradients of
    the right dtype and shape, and (``check_undefined_grad``) that backward copes
    with undefined output gradients, giving undefined (None) or zero gradients.
    ``check_grad_dtypes`` also requires every gradient to have its input's dtype.
    ``check_batched_grad`` compares the gradients of a batch of two grad_outputs
    computed with ``is_grads_batched=True`` against one backward per grad_output;
    where batched gradients are not available it runs the loop only (then it checks
    nothing more). ``fast_mode`` is described in the module docstring. ``masked`` is
    accepted for compatibility (there are no sparse tensors). ``check_forward_ad``
    compares the Jacobian computed by forward mode (``check_batched_forward_grad``:
    also with tangents batched under vmap) with finite differences (Note [forward-mode
    gradcheck]; it needs the forward_ad layer, else NotImplementedError);
    ``check_backward_ad=False`` skips the backward checks.

    >>> import chainrule as cr
    >>> from chainrule.autograd import gradcheck
    >>> x = cr.randn(3, dtype=cr.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t).sin(), (x,))
    True
    >>> def wrong_grad(t):
    ...     y = t * 1
    ...     _ = y.register_hook(lambda g: g * 2)    # doubles the gradient
    ...     return y
    >>> gradcheck(wrong_grad, (x,), raise_exception=False)
    False
    """
    _check_flags(check_forward_ad, check_backward_ad, check_batched_grad,
                 check_batched_forward_grad)
    config = _Config(eps, atol, rtol, nondet_tol, check_grad_dtypes)
    config.modes = (check_backward_ad, check_forward_ad, check_batched_forward_grad)
    try:
        return _gradcheck(func, _as_tuple(inputs), config, fast_mode, check_batched_grad,
                          check_undefined_grad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _check_flags(forward_ad, backward_ad, batched_grad, batched_forward_grad):
    if not (forward_ad or backward_ad):
        raise ValueError("Expected at least one of check_forward_ad or check_backward_ad to be "
                         "True")
    if batched_grad and not backward_ad:
        raise ValueError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if batched_forward_grad and not forward_ad:
        raise ValueError("Setting check_batched_forward_grad=True requires check_forward_ad "
                         "to be True")
    if forward_ad:
        from ._gradcheck_forward import forward_ad as layer
        layer("check_forward_ad")


def _gradcheck(func, inputs, config, fast_mode, batched_grad, undefined_grad):
    diff = _check_inputs(inputs)
    tensor_outputs = _tensor_outputs(func(*inputs))
    outputs = [(pos, o) for pos, o in enumerate(tensor_outputs) if o.requires_grad]
    if not outputs:
        _check_no_differentiable_outputs(func, inputs, diff, config.eps)
        return True
    backward_ad, forward_ad, batched_forward = config.modes
    if forward_ad:
        from . import _gradcheck_forward
        _gradcheck_forward.check_forward(func, inputs, diff, outputs, config, fast_mode)
        if batched_forward:
            _gradcheck_forward.check_batched_forward(func, inputs, diff)
    if not backward_ad:
        return True
    if fast_mode:
        _fast_check(func, inputs, diff, outputs, config)
    else:
        _slow_check(func, inputs, diff, outputs, config)
    diff_outputs = [o for _, o in outputs]
    if batched_grad:
        _check_batched_grad(diff_outputs, diff)
    _check_zero_grad_outputs(diff_outputs, diff)
    if undefined_grad:
        _check_undefined_grads(func, inputs, diff)
    return True


# --- inputs and outputs -----------------------------------------------------------
def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _tensor_outputs(out):
    outputs = _as_tuple(out)
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            raise TypeError(f"gradcheck expects func to return a Tensor or a tuple of Tensors, "
                            f"but output {i} is a {type(o).__name__}")
    return outputs


def _differentiable_outputs(out):
    return [o for o in _tensor_outputs(out) if o.requires_grad]


def _check_inputs(inputs):
    """The inputs to differentiate, as (position, tensor); warns about low precision."""
    diff = [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")
    for pos, t in diff:
        if t._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{pos} requires gradient and is not a double precision floating point "
                "or complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", UserWarning, stacklevel=4)
        if _overlapping(t._data):
            raise RuntimeError(
                f"The {pos}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical "
                "gradients correctly. You should call .contiguous on the input before "
                "passing it to gradcheck.")
    return diff


def _overlapping(arr):
    """Several elements at one memory location (a stride-0 dimension, as expand makes)."""
    return arr.size > 1 and any(s == 0 and n > 1 for s, n in zip(arr.strides, arr.shape))


def _parts(output):
    """Which real functions of ``output`` are checked (Note [complex gradcheck])."""
    return ("real", "imag") if output._data.dtype.kind == "c" else (None,)


def _project(jx, jy, part):
    """The Jacobian of ``part`` of an output from the raw finite differences along the
    real (jx) and, for complex inputs, imaginary (jy) axis of the input."""
    take = np.real if part == "real" else np.imag if part == "imag" else np.asarray
    j = take(jx)
    return j if jy is None else j + 1j * take(jy)


# --- numerical derivatives ----------------------------------------------------------
def _evaluate(func, inputs):
    """Double-precision copies of func's tensor outputs (copies: an output may be a
    view of the input being perturbed)."""
    return [_host(o._data).astype(np.complex128 if o._data.dtype.kind == "c" else np.float64)
            for o in _tensor_outputs(func(*inputs))]


def _host(arr):
    """A device array's values on the host (Note [device arrays]): the Jacobians are
    compared in NumPy whatever device the function runs on."""
    return arr.get() if type(arr) in DEVICE_ARRAY_TYPES else arr


def _central_difference(func, inputs, arr, index, step, eps):
    """(f(x + step) - f(x - step)) / (2 eps) per output, flattened, where ``step`` is
    added to ``arr[index]``; the array is restored exactly afterwards."""
    saved = arr[index].copy()
    try:
        _write(arr, index, saved + step)
        plus = _evaluate(func, inputs)
        _write(arr, index, saved - step)
        minus = _evaluate(func, inputs)
    finally:
        _write(arr, index, saved)
    return [(p - m).reshape(-1) / (2 * eps) for p, m in zip(plus, minus)]


class _PrivateCopy:
    """Context: the input's array replaced by a private copy while it is perturbed, so
    the caller's memory is never written (and read-only or locked arrays work)."""

    def __init__(self, tensor):
        self.tensor, self.original = tensor, tensor._data

    def __enter__(self):
        self.tensor._data = self.original.copy()
        return self.tensor._data

    def __exit__(self, *exc):
        self.tensor._data = self.original


def _write(arr, index, value):
    # A graph of an earlier evaluation may still hold the private copy read-only
    # (Note [read-only saved arrays]); that graph is garbage, so write anyway.
    if not arr.flags.writeable:
        arr.flags.writeable = True
    arr[index] = value


def _steps(arr, eps):
    return (eps, eps * 1j) if arr.dtype.kind == "c" else (eps,)


def _numerical_jacobian(func, inputs, tensor, eps):
    """Per tensor output, (jx, jy): the finite-difference Jacobians along the real and
    (complex input only, else None) imaginary axis, Note [Jacobian layout]."""
    with _PrivateCopy(tensor) as arr:
        per_step = []
        for step in _steps(arr, eps):
            rows = [_central_difference(func, inputs, arr, np.unravel_index(k, arr.shape),
                                        step, eps) for k in range(arr.size)]
            per_step.append(_stack_rows(rows, arr.size, func, inputs))
    jys = per_step[1] if len(per_step) > 1 else [None] * len(per_step[0])
    return list(zip(per_step[0], jys))


def _stack_rows(rows, n_rows, func, inputs):
    if rows:
        return [np.stack(columns) for columns in zip(*rows)]
    sizes = [o.size for o in _evaluate(func, inputs)]     # an empty input
    return [np.zeros((0, n)) for n in sizes]


def _numerical_directional(func, inputs, tensor, u, eps):
    """Per tensor output, (dx, dy): derivatives along ``u`` and (complex input) ``1j*u``."""
    with _PrivateCopy(tensor) as arr:
        per_step = [_central_difference(func, inputs, arr, Ellipsis,
                                        on_device_of(step * u, arr), eps)
                    for step in _steps(arr, eps)]
    dys = per_step[1] if len(per_step) > 1 else [None] * len(per_step[0])
    return list(zip(per_step[0], dys))


def _check_no_differentiable_outputs(func, inputs, diff, eps):
    for _, t in diff:
        for jx, jy in _numerical_jacobian(func, inputs, t, eps):
            if np.any(jx != 0) or (jy is not None and np.any(jy != 0)):
                raise GradcheckError("Numerical gradient for function expected to be zero")


# --- analytical derivatives ---------------------------------------------------------
def _vjp(output, diff, grad_output, config):
    """The gradient arrays of ``output`` w.r.t. each input for ``grad_output`` (zeros
    where an input is unused)."""
    from .backward import grad
    grad_output = on_device_of(grad_output, output._data)
    grads = grad(output, [t for _, t in diff], Tensor._wrap(grad_output), retain_graph=True,
                 allow_unused=True)
    return [_grad_array(g, t, config.check_grad_dtypes) for g, (_, t) in zip(grads, diff)]


def _grad_array(g, t, check_grad_dtypes):
    if g is None:
        return np.zeros(t._data.shape, t._data.dtype)
    if g._data.shape != t._data.shape:
        raise GradcheckError("Analytical gradient has incorrect size")
    if check_grad_dtypes and g._data.dtype != t._data.dtype:
        raise GradcheckError("Gradient has dtype mismatch")
    return _host(g._data)


def _unit_grad_output(output, k, part):
    g = np.zeros(output._data.shape, output._data.dtype)
    g.flat[k] = 1j if part == "imag" else 1
    return g


def _analytical_jacobian(output, diff, part, config):
    """Per input, the Jacobian of ``part`` of ``output`` from one vjp per output
    element; built twice, so that the caller can check that backward is reentrant."""
    n_out = output._data.size
    first, second = [], []
    for k in range(n_out):
        g = _unit_grad_output(output, k, part)
        first.append(_vjp(output, diff, g, config))
        second.append(_vjp(output, diff, g, config))
    jacobians = [_stack_columns([c[i] for c in first], t) for i, (_, t) in enumerate(diff)]
    again = [_stack_columns([c[i] for c in second], t) for i, (_, t) in enumerate(diff)]
    return jacobians, again


def _stack_columns(columns, t):
    if not columns:
        return np.zeros((t._data.size, 0), t._data.dtype)
    return np.stack([c.reshape(-1) for c in columns], axis=1)


def _check_reentrant(first, second, nondet_tol):
    for a, b in zip(first, second):
        if np.size(a) and np.max(np.abs(np.subtract(a, b))) > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient. The tolerance for nondeterminism was "
                f"{nondet_tol}. If the backward is nondeterministic on purpose, pass a "
                "larger nondet_tol.")


# --- the two modes --------------------------------------------------------------------
def _mismatch_message(out_index, in_index, part, numerical, analytical):
    prefix = "" if part is None else \
        f"While considering the {_PART_NAMES[part]} part of complex outputs only, "
    return (f"{prefix}Jacobian mismatch for output {out_index} with respect to input "
            f"{in_index},\nnumerical:{_show(numerical)}\nanalytical:{_show(analytical)}\n")


def _show(arr):
    return repr(Tensor._wrap(np.asarray(arr)))


def _slow_check(func, inputs, diff, outputs, config):
    numerical = [_numerical_jacobian(func, inputs, t, config.eps) for _, t in diff]
    for out_index, (pos, output) in enumerate(outputs):
        for part in _parts(output):
            analytical, again = _analytical_jacobian(output, diff, part, config)
            for in_index, a in enumerate(analytical):
                n = _project(*numerical[in_index][pos], part)
                if not np.allclose(a, n, rtol=config.rtol, atol=config.atol):
                    raise GradcheckError(_mismatch_message(out_index, in_index, part, n, a))
            _check_reentrant(analytical, again, config.nondet_tol)


def _unit_vector(rng, shape):
    """Random non-negative entries with unit L2 norm (zeros for an empty shape)."""
    u = rng.random(shape)
    norm = np.sqrt(np.sum(u * u))
    return u / norm if norm > 0 else u


def _fast_check(func, inputs, diff, outputs, config):
    """Compare v^T J u: ``u`` per input, ``v`` per output (fixed seed: reproducible)."""
    rng = np.random.default_rng(0)
    us = [_unit_vector(rng, t._data.shape) for _, t in diff]
    numerical = [_numerical_directional(func, inputs, t, u, config.eps)
                 for (_, t), u in zip(diff, us)]
    for out_index, (pos, output) in enumerate(outputs):
        v = _unit_vector(rng, output._data.shape)
        for part in _parts(output):
            analytical, again = _projected_vjps(output, diff, v, us, part, config)
            for in_index, (a, u) in enumerate(zip(analytical, us)):
                n = _fast_numerical(*numerical[in_index][pos], v, part)
                atol = config.atol * np.sum(np.abs(u)) * np.sum(np.abs(v))
                if not np.allclose(a, n, rtol=config.rtol, atol=atol):
                    raise GradcheckError(_fast_mismatch_message(
                        func, inputs, diff, in_index, output, pos, out_index, part, n, a,
                        config))
            _check_reentrant(analytical, again, config.nondet_tol)


def _fast_numerical(dx, dy, v, part):
    """v . (directional derivative of ``part`` of the output), Note [complex gradcheck]."""
    v = v.reshape(-1)
    n = np.dot(_project(dx, None, part), v)
    return n if dy is None else n + 1j * np.dot(_project(dy, None, part), v)


def _projected_vjps(output, diff, v, us, part, config):
    """Per input, u . vjp(v): the real and imaginary parts of a complex input's
    gradient each dotted with u (Note [complex gradcheck]); computed twice, for the
    reentrancy check."""
    g_out = (v * (1j if part == "imag" else 1)).astype(output._data.dtype)
    return tuple([_dot_u(g, u) for g, u in zip(_vjp(output, diff, g_out, config), us)]
                 for _ in range(2))


def _dot_u(g, u):
    if g.dtype.kind == "c":
        return np.sum(g.real * u) + 1j * np.sum(g.imag * u)
    return np.sum(g * u)


def _fast_mismatch_message(func, inputs, diff, in_index, output, pos, out_index, part, n, a,
                           config):
    """The fast-mode quantities, then the full Jacobians recomputed in slow mode."""
    jx, jy = _numerical_jacobian(func, inputs, diff[in_index][1], config.eps)[pos]
    slow_n = _project(jx, jy, part)
    slow_a = _analytical_jacobian(output, diff, part, config)[0][in_index]
    worst = np.max(np.abs(slow_a - slow_n)) if slow_a.size else 0.0
    return (_mismatch_message(out_index, in_index, part, n, a) +
            "\nThe quantities above are v^T J u for random unit vectors u and v (fast "
            "mode). Recomputed in slow mode:\n\nNumerical:\n " + _show(slow_n) +
            "\nAnalytical:\n" + _show(slow_a) +
            f"\n\nThe max per-element difference (slow mode) is: {worst}.\n")


# --- further backward checks ----------------------------------------------------------
def _random_like(arr, rng):
    values = rng.standard_normal(arr.shape)
    if arr.dtype.kind == "c":
        values = values + 1j * rng.standard_normal(arr.shape)
    return values.astype(arr.dtype)


def _check_batched_grad(outputs, diff):
    """Gradients of a batch of grad_outputs (``is_grads_batched``) against a loop."""
    rng = np.random.default_rng(1)
    config = _Config(0, 0, 0, 0, False)
    for out_index, output in enumerate(outputs):
        batch = [_random_like(output._data, rng) for _ in range(2)]
        looped = [_vjp(output, diff, g, config) for g in batch]
        batched = _batched_vjp(output, diff, np.stack(batch), looped)
        for in_index, got in enumerate(batched):
            expected = np.stack([grads[in_index] for grads in looped])
            if not np.allclose(got, expected):
                raise GradcheckError(
                    f"For output {out_index} and input {in_index}:\n\nbatched gradients "
                    f"(is_grads_batched=True) differ from one backward per grad_output.\n"
                    f"batched:{_show(got)}\nlooped:{_show(expected)}\n")


def _batched_vjp(output, diff, stacked, looped):
    """Batched gradients per input; the looped ones where batching is unavailable."""
    from .backward import grad
    tensors = [t for _, t in diff]
    try:
        grads = grad(output, tensors, Tensor._wrap(on_device_of(stacked, output._data)),
                     retain_graph=True,
                     allow_unused=True, is_grads_batched=True)
    except (ImportError, NotImplementedError):
        return [np.stack([grads[i] for grads in looped]) for i in range(len(tensors))]
    except Exception as e:
        raise GradcheckError(f"While computing batched gradients, got: {e}") from e
    return [np.zeros((len(stacked),) + t._data.shape, t._data.dtype) if g is None
            else _host(g._data) for g, t in zip(grads, tensors)]


def _check_zero_grad_outputs(outputs, diff):
    """Zero output gradients must give zero input gradients of the right type."""
    from .backward import grad
    zeros = [Tensor._wrap(np.zeros_like(o._data)) for o in outputs]
    grads = grad(outputs, [t for _, t in diff], zeros, retain_graph=True, allow_unused=True)
    for g, (_, t) in zip(grads, diff):
        if g is None:
            continue
        if g._data.dtype != t._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if g._data.shape != t._data.shape:
            raise GradcheckError("grad is incorrect size")
        if np.any(g._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")


def _check_undefined_grads(func, inputs, diff):
    """Backward must cope with undefined (None) output gradients: all of them at once,
    then one at a time (the others zero), giving None or zero input gradients."""
    outputs = _differentiable_outputs(func(*inputs))
    _backward_with_undefined(outputs, diff, set(range(len(outputs))))
    if len(outputs) > 1:
        for k in range(len(outputs)):
            _backward_with_undefined(_differentiable_outputs(func(*inputs)), diff, {k})


def _backward_with_undefined(outputs, diff, undefined):
    from .. import _grad_mode
    from .backward import _root_edges, _target_edge
    from .engine import get_engine
    targets = [_target_edge(t, i, True) for i, (_, t) in enumerate(diff)]
    # Undefined roots go first: several outputs may share a root (the same tensor
    # returned twice), and an input buffer takes None only into an empty slot.
    order = sorted(range(len(outputs)), key=lambda k: k not in undefined)
    roots = _root_edges([outputs[k] for k in order])
    root_grads = [None if k in undefined else np.zeros_like(outputs[k]._data) for k in order]
    try:
        with _grad_mode.set_grad_enabled(False):
            grads = get_engine().execute(roots, root_grads, False, False, targets,
                                         accumulate_grad=False)
    except Exception as e:
        raise GradcheckError(
            "Expected backward function to handle undefined output grads (None): a backward "
            "formula must treat an undefined gradient as zero.") from e
    for g in grads:
        if g is not None and np.any(_host(getattr(g, "_data", g)) != 0):
            raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                 "output grads are undefined or zero.")


# --- gradgradcheck --------------------------------------------------------------------
def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of the map (inputs, grad_outputs) -> the
    gradients of ``func`` w.r.t. its inputs, computed with ``create_graph=True``.

    ``grad_outputs`` defaults to random tensors in [-1, 1) shaped like the
    differentiable outputs (non-contiguous ones with ``gen_non_contig_grad_outputs``);
    they require grad, so the derivative with respect to them is checked too. The
    other arguments are gradcheck's (``check_rev_over_rev`` is its
    ``check_backward_ad``, ``check_fwd_over_rev`` its ``check_forward_ad``: forward
    mode over the backward pass, with the forward_ad layer).

    >>> import chainrule as cr
    >>> from chainrule.autograd import gradgradcheck
    >>> x = cr.randn(2, 3, dtype=cr.float64, requires_grad=True)
    >>> gradgradcheck(lambda t: t.exp() * t, (x,))
    True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise ValueError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                         "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise ValueError("Setting check_undefined_grad=True requires check_rev_over_rev to be "
                         "True")
    if check_batched_grad and not check_rev_over_rev:
        raise ValueError("Setting check_batched_grad=True requires check_rev_over_rev to be "
                         "True")
    if check_fwd_over_rev:
        from ._gradcheck_forward import forward_ad as layer
        layer("check_fwd_over_rev")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs)
                             for o in _differentiable_outputs(func(*inputs)))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    return gradcheck(_first_derivative(func, len(inputs)), inputs + grad_outputs, eps=eps,
                     atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev,
                     fast_mode=fast_mode, masked=masked)


def _first_derivative(func, n_inputs):
    """(inputs..., grad_outputs...) -> the gradients of func, differentiable again."""
    from .backward import grad

    def first_derivative(*args):
        inputs, grad_outputs = args[:n_inputs], args[n_inputs:]
        outputs = _differentiable_outputs(func(*inputs))
        diff = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
        grads = grad(outputs, diff, grad_outputs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)
    return first_derivative


def _random_grad_output(output, noncontiguous):
    """Uniform in [-1, 1) like ``output`` (float64 for a non-floating output), a leaf
    that requires grad; every other element of a wider array if ``noncontiguous``."""
    arr = output._data
    dtype = arr.dtype if output.is_floating_point() or output.is_complex() else np.float64
    shape = arr.shape
    if noncontiguous and shape:
        shape = shape[:-1] + (2 * shape[-1],)
    rng = _random.numpy_rng()            # the default generator (manual_seed)
    values = rng.uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.uniform(-1, 1, shape)
    values = on_device_of(values.astype(dtype), arr)
    if noncontiguous and shape:
        values = values[..., ::2]
    return Tensor._wrap(values).requires_grad_()


gradcheck.GradcheckError = GradcheckError      # also reachable from the function
