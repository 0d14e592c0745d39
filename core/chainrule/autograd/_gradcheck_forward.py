"""gradcheck's forward-mode checks (``check_forward_ad``, ``check_batched_forward_grad``,
gradgradcheck's ``check_fwd_over_rev``), run with the forward_ad layer when it is
installed (imported at call time: core never imports a layer at import time).

Note [forward-mode gradcheck]
    Row k of the forward-mode Jacobian (Note [Jacobian layout]) is the tangent of the
    outputs when input element k carries the tangent 1 (a complex input also 1j) and
    every other input none: a directional derivative, so it is compared with the raw
    central differences along that axis (Note [complex gradcheck]: no projection). In
    fast mode one tangent ``u`` per input (the unit vectors of the backward check)
    gives J u, compared with the directional differences. The batched check runs the
    same tangents as one batch under vmap and compares with one jvp per tangent.
"""
import numpy as np

from .._tensor import Tensor

_MISSING = ("{flag}=True needs forward-mode AD, which comes with the chainrule-forward-ad "
            "layer (pip install chainrule-forward-ad).")


def forward_ad(flag):
    """The forward_ad layer's module, or NotImplementedError naming its wheel."""
    try:
        import chainrule_forward_ad
    except ImportError:
        chainrule_forward_ad = None
    if chainrule_forward_ad is None:
        raise NotImplementedError(_MISSING.format(flag=flag))
    return chainrule_forward_ad


def _tangents_of(fwAD, func, inputs, pos, tangent):
    """Per tensor output, the flattened tangent (zeros where it has none) when input
    ``pos`` carries ``tangent``."""
    from .gradcheck import _host, _tensor_outputs
    with fwAD.dual_level():
        args = list(inputs)
        args[pos] = fwAD.make_dual(inputs[pos], tangent)
        outputs = _tensor_outputs(func(*args))
        found = [fwAD.unpack_dual(o).tangent for o in outputs]
        return [np.zeros(o._data.size, o._data.dtype) if t is None else
                _host(t.detach()._data).reshape(-1).copy() for t, o in zip(found, outputs)]


def _unit_tangents(t):
    """(axis index, tangent array) per element and axis of ``t``: 1, and 1j if complex."""
    axes = (1, 1j) if t._data.dtype.kind == "c" else (1,)
    for a, value in enumerate(axes):
        for k in range(t._data.size):
            arr = np.zeros(t._data.shape, t._data.dtype)
            arr.flat[k] = value
            yield a, arr


def _forward_jacobians(fwAD, func, inputs, pos, t):
    """Per tensor output, [jx, jy]: the forward-mode Jacobians along the real and
    (complex input) imaginary axis, rows per input element."""
    rows = {}
    for a, arr in _unit_tangents(t):
        rows.setdefault(a, []).append(_tangents_of(fwAD, func, inputs, pos, Tensor._wrap(arr)))
    per_axis = [[np.stack(col) if col else None for col in zip(*rows[a])] for a in sorted(rows)]
    return list(zip(*per_axis)) if per_axis else []


def _mismatch(out_index, in_index, numerical, analytical):
    from .gradcheck import GradcheckError, _show
    return GradcheckError(
        f"Jacobian computed with forward mode mismatch for output {out_index} with respect "
        f"to input {in_index},\nnumerical:{_show(numerical)}\nanalytical:{_show(analytical)}\n")


def check_forward(func, inputs, diff, outputs, config, fast_mode):
    """Note [forward-mode gradcheck]: the Jacobian (or, fast, J u) of every
    differentiable output by forward mode against finite differences."""
    fwAD = forward_ad("check_forward_ad")
    if fast_mode:
        return _check_forward_fast(fwAD, func, inputs, diff, outputs, config)
    from .gradcheck import _numerical_jacobian
    for in_index, (pos, t) in enumerate(diff):
        numerical = _numerical_jacobian(func, inputs, t, config.eps)
        forward = _forward_jacobians(fwAD, func, inputs, pos, t)
        for out_index, (o_pos, _) in enumerate(outputs):
            for n, a in zip(numerical[o_pos], forward[o_pos] if forward else ()):
                if n is not None and not np.allclose(a, n, rtol=config.rtol, atol=config.atol):
                    raise _mismatch(out_index, in_index, n, a)


def _check_forward_fast(fwAD, func, inputs, diff, outputs, config):
    from .gradcheck import _numerical_directional, _unit_vector
    rng = np.random.default_rng(0)
    for in_index, (pos, t) in enumerate(diff):
        u = _unit_vector(rng, t._data.shape)
        numerical = _numerical_directional(func, inputs, t, u, config.eps)
        axes = (1, 1j) if t._data.dtype.kind == "c" else (1,)
        forward = [_tangents_of(fwAD, func, inputs, pos, Tensor._wrap((u * s).astype(
            t._data.dtype))) for s in axes]
        for out_index, (o_pos, _) in enumerate(outputs):
            for n, per_axis in zip(numerical[o_pos], forward):
                a = per_axis[o_pos]
                if n is not None and not np.allclose(a, n, rtol=config.rtol, atol=config.atol):
                    raise _mismatch(out_index, in_index, n, a)


def check_batched_forward(func, inputs, diff):
    """Tangents batched under vmap against one jvp per tangent."""
    from .gradcheck import GradcheckError, _random_like
    from .._vmap import vmap
    fwAD = forward_ad("check_batched_forward_grad")
    rng = np.random.default_rng(2)
    for in_index, (pos, t) in enumerate(diff):
        batch = np.stack([_random_like(t._data, rng) for _ in range(2)])
        looped = [_tangents_of(fwAD, func, inputs, pos, Tensor._wrap(b)) for b in batch]
        with fwAD.dual_level():
            def jvp(tangent):
                return _batched_tangents(fwAD, func, inputs, pos, tangent)
            batched = vmap(jvp)(Tensor._wrap(batch))
        for out_index, got in enumerate(batched):
            expected = np.stack([row[out_index] for row in looped])
            if not np.allclose(got.detach().numpy().reshape(expected.shape), expected):
                raise GradcheckError(
                    f"For output {out_index} and input {in_index}:\n\nbatched forward "
                    f"gradients (tangents under vmap) differ from one jvp per tangent.\n")


def _batched_tangents(fwAD, func, inputs, pos, tangent):
    from .gradcheck import _tensor_outputs
    from .._factories import zeros_like
    args = list(inputs)
    args[pos] = fwAD.make_dual(inputs[pos], tangent)
    outputs = _tensor_outputs(func(*args))
    found = [fwAD.unpack_dual(o).tangent for o in outputs]
    return tuple((zeros_like(o) if t is None else t).reshape(-1) for t, o in zip(found, outputs))
