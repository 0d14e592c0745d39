"""Tangents through the hot Tensor methods, which the C++ engine runs itself inside a
dual level (Note [dual fast methods] in engine_cpp/src/fast_methods.cc): they must
equal the closed forms and, under that engine, what the layer's Python dispatcher
gives with the C path off, fallbacks included."""
import sys

import numpy as np

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD

X = np.array([0.3, -1.2, 0.8])
T = np.array([1.0, 0.5, -2.0])


def _tangent(t):
    g = fwAD.unpack_dual(t).tangent
    return None if g is None else g.detach().numpy().copy()


def _cases():
    """(name, tangent) pairs covering the C path and each case it leaves to Python."""
    out = []
    x, t = cr.tensor(X), cr.tensor(T)
    plain = cr.tensor([2.0, 3.0, 4.0], dtype=cr.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        y = ((d * 1.5).sin() + d).tanh() - plain
        out.append(("chain", _tangent(y)))
        out.append(("product", _tangent(d * d)))
        out.append(("no tangent", _tangent(plain.sin())))
        out.append(("int operand", _tangent(d * cr.tensor([1, 2, 3]))))
        with cr.no_grad():
            out.append(("no_grad", _tangent(d.exp())))
        with cr.inference_mode():
            out.append(("inference", _tangent(d.cos())))
        needs_grad = cr.tensor(X, requires_grad=True)
        out.append(("input requires grad", _tangent(fwAD.make_dual(needs_grad, t).sin())))
        tangent_grad = cr.tensor(T, requires_grad=True)
        dual = fwAD.make_dual(cr.tensor(X), tangent_grad).sin()
        out.append(("tangent requires grad", _tangent(dual)))
        assert fwAD.unpack_dual(dual).tangent.requires_grad
        with cr.no_grad():               # the raw path whatever requires grad
            out.append(("no_grad, input requires grad",
                        _tangent(fwAD.make_dual(needs_grad, t).sin() * 2.0)))
            out.append(("no_grad, tangent requires grad",
                        _tangent(fwAD.make_dual(cr.tensor(X), tangent_grad).sin())))
        out.extend(_program_cases(d, plain))
        out.extend(_recording_cases(t))
    return out


def _recording_cases(t):
    """Note [untracked forward-over-reverse]: ops recorded, tangents on the raw path and
    also found by the output's array; a paused level runs ops alone."""
    from chainrule_forward_ad import _over_reverse, _tangents
    x = cr.tensor(X, requires_grad=True)
    with _over_reverse.tangents_untracked() as level:
        d = fwAD.make_dual(x, t)
        y = ((d * 1.5).sin() + d).tanh()
        with _tangents.paused():
            z = d.sin() * 2.0
    assert y.grad_fn is not None and z.grad_fn is not None
    by_array = level.get_by_array(y._data)
    by_array = by_array if isinstance(by_array, np.ndarray) else by_array.detach().numpy()
    return [("recorded", _tangent(y)), ("recorded, by array", by_array.copy()),
            ("paused", _tangent(z))]


UNARY = ["abs", "ceil", "cos", "erf", "exp", "expm1", "floor", "log", "log1p", "neg", "relu",
         "rsqrt", "sgn", "sigmoid", "sign", "sin", "sqrt", "tan", "tanh", "trunc"]


def _program_cases(d, plain):
    """Note [JVP programs]: every fast method with each set of inputs carrying a
    tangent, and the cases the raw path keeps (0-d, broadcast leaf results, float32)."""
    positive = d * d + 0.5            # in every op's domain
    out = [(name, _tangent(getattr(positive, name)())) for name in UNARY]
    wide = cr.tensor([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], dtype=cr.float64)
    for name, fn in [("mul", lambda a, b: a * b), ("div", lambda a, b: a / b),
                     ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b),
                     ("rmul", lambda a, b: 2.0 * a * b), ("rsub", lambda a, b: 2 - a - b)]:
        for which, (a, b) in {"both": (d, d * 0.5), "left": (d, plain), "right": (plain, d),
                              "broadcast": (d, wide), "broadcast right": (wide, d)}.items():
            out.append((f"{name} {which}", _tangent(fn(a, b))))
    scalar = fwAD.make_dual(cr.tensor(0.7, dtype=cr.float64), cr.tensor(2.0, dtype=cr.float64))
    out.append(("0-d", _tangent((scalar * 3.0).sin().tanh())))
    single = fwAD.make_dual(cr.tensor(X, dtype=cr.float32), cr.tensor(T, dtype=cr.float32))
    out.append(("float32", _tangent((single * 1.5).tanh() / (single + 2.0))))
    inf = cr.tensor([np.inf, 1.0, -np.inf], dtype=cr.float64)
    out.append(("zero tangent times inf", _tangent(d * inf)))
    return out


def test_tangents_equal_the_closed_forms():
    got = dict(_cases())
    u = np.sin(1.5 * X) + X
    du = np.cos(1.5 * X) * 1.5 * T + T
    np.testing.assert_allclose(got["chain"], (1 - np.tanh(u) ** 2) * du)
    np.testing.assert_allclose(got["product"], 2 * X * T)
    assert got["no tangent"] is None
    np.testing.assert_allclose(got["int operand"], T * [1, 2, 3])
    np.testing.assert_allclose(got["no_grad"], np.exp(X) * T)
    np.testing.assert_allclose(got["inference"], -np.sin(X) * T)
    for name in ("input requires grad", "tangent requires grad",
                 "no_grad, tangent requires grad"):
        np.testing.assert_allclose(got[name], np.cos(X) * T)
    np.testing.assert_allclose(got["no_grad, input requires grad"], 2 * np.cos(X) * T)
    u = np.sin(1.5 * X) + X
    chain = (1 - np.tanh(u) ** 2) * (np.cos(1.5 * X) * 1.5 * T + T)
    np.testing.assert_allclose(got["recorded"], chain)
    np.testing.assert_allclose(got["recorded, by array"], chain)
    assert got["paused"] is None


def _cpp_engine_selected():
    """Whether the engine in use is the C++ one (CHAINRULE_ENGINE=cpp, or unset with the
    C++ engine installed: Note [engine selection])."""
    from chainrule.autograd import engine
    return not isinstance(engine.get_engine(), engine.PythonEngine)


def test_the_engines_dual_path_gives_the_python_paths_tangents():
    if not _cpp_engine_selected():
        # the Python engine has no C path: a second pass (the raw plans now cached)
        # gives the first pass's tangents
        fast, slow = _cases(), _cases()
    else:
        import chainrule_engine
        from chainrule.autograd import engine
        from chainrule_engine import _mirror
        engine.get_engine()
        now = _mirror.fingerprint(_mirror.dual_parts())
        assert _mirror.dual_methods_match(), (
            "chainrule_forward_ad._tangents.dispatch or Level changed: the dual fast path "
            "is off until engine_cpp/src/fast_methods.cc (Note [dual fast methods]) "
            "mirrors the change and DUAL_FINGERPRINT is set to %r" % now)
        fast = _cases()
        chainrule_engine._configure_dual_methods(enabled=False)
        try:
            slow = _cases()
        finally:
            chainrule_engine._configure_dual_methods()
    for (name, a), (_, b) in zip(fast, slow):
        if a is None or b is None:
            assert a is None and b is None, name
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)


def test_the_engine_runs_jvp_programs_without_python_frames():
    # Note [JVP programs]: under the C++ engine the chain's tangents come from programs
    # (no call to the layer's _raw_tangent); the Python engine runs the raw path
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "_raw_tangent":
            calls.append(frame)
    cpp = _cpp_engine_selected()
    x, t = cr.tensor(X), cr.tensor(T)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        ((d * 1.5).sin() + d).tanh()          # the raw plans are made on first use
        sys.setprofile(profile)
        try:
            y = ((d * 1.5).sin() + d).tanh()
        finally:
            sys.setprofile(None)
        assert _tangent(y) is not None
    assert len(calls) == (0 if cpp else 4)


def test_the_engine_runs_untracked_and_no_grad_duals_without_dispatch_frames():
    # Note [dual fast methods]: under the C++ engine the fast methods run the
    # dispatchers' raw paths with inputs that require grad (grad mode off, or under
    # recording_dispatch) and ops in a paused level; the Python engine dispatches
    from chainrule_forward_ad import _over_reverse, _tangents
    names = {"dispatch", "recording_dispatch", "apply_op"}
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name in names:
            calls.append(frame.f_code.co_name)
    cpp = _cpp_engine_selected()
    x = cr.tensor(X, requires_grad=True)

    def run():
        with fwAD.dual_level(), _over_reverse.tangents_untracked():
            d = fwAD.make_dual(x, cr.tensor(T))
            sys.setprofile(profile)
            try:
                y = (d * 1.5).sin() + d            # recorded, raw tangents
                with cr.no_grad():
                    w = y.tanh() * 2.0             # requires grad, grad mode off
                with _tangents.paused():
                    z = y * 2.0                    # a paused level
            finally:
                sys.setprofile(None)
        assert y.grad_fn is not None and w.grad_fn is None and z.grad_fn is not None
    run()                                          # the raw plans are made on first use
    calls.clear()
    run()
    expected = 0 if cpp else 12                    # 6 ops, 2 frames each
    assert len(calls) == expected, calls
