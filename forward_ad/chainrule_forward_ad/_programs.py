"""JVP programs: a table op's tangent formula as a straight line of NumPy calls.

Note [JVP programs]
    On the raw path (Note [raw tangent path]) most of an elementwise op's cost is
    Python running its JVP formula: ``t[0] * F.cos(self)`` is one frame, a lookup
    and two ufunc calls. ``jvp_programs`` runs the formula once on stand-ins
    (``_Traced``) that record what is done to them, and keeps the record when it is a
    straight line of operators (``+``, ``*``, ``-x``, ``a < b``, ...) and NumPy ufunc
    calls on the tangents, the op's input arrays, ``result`` and scalar constants;
    the C++ engine's dual fast methods (Note [dual fast methods] in
    engine_cpp/src/fast_methods.cc) replay it with the same calls in the same order
    (the operators as Python's number protocol runs them), so the tangent is the one
    the formula computes, without Python.

    A program belongs to one op, one attrs dict (a formula may branch on an attribute:
    ``alpha == 1``) and one set of inputs that carry a tangent (``mask``: bit i for
    input i); a missing tangent is ZERO as on the raw path (Note [symbolic zero
    tangents]), so ``t[0] * other + self * t[1]`` with only ``t[0]`` records one
    multiplication. A formula that does anything else with a stand-in (reads its
    dtype or shape, indexes it, calls a NumPy function that is not a ufunc, tests its
    truth, meets ZERO beyond arithmetic), needs an input's shape, or gives ZERO, an
    input or a constant back has no program for that mask: the raw path runs it.

    A program is ``(constants, instructions, result)``. Registers: the tangents
    (0 .. n-1, one per input, None where missing), the inputs' arrays (n .. 2n-1), the
    op's result (2n), the constants, then one per instruction, in order. An
    instruction is ``(code, *registers)``: an int code from ``CODES`` (an operator) or
    a ufunc called with the registers as positional arguments.
"""
import numbers
import operator

import numpy as np

from ._tangents import ZERO, _RAW, _raw_plan

# operator codes the engine knows (fast_methods.cc, JvpCode); comparisons are
# COMPARE + Python's rich comparison op (Py_LT .. Py_GE: 0 .. 5)
CODES = {"add": 0, "sub": 1, "mul": 2, "truediv": 3, "pow": 4, "neg": 5, "pos": 6}
COMPARE = 8
_COMPARISONS = {"lt": 0, "le": 1, "eq": 2, "ne": 3, "gt": 4, "ge": 5}
MAX_REGISTERS = 32      # the engine's register file (kMaxJvpRegisters)


class _NotAProgram(Exception):
    """The formula did something a program cannot replay."""


class _Recorder:
    """The registers and instructions of the program being traced."""

    def __init__(self, first_free):
        self.constants = []
        self.instructions = []
        self.first_free = first_free

    def register(self, value):
        """The register of an operand: a stand-in's own, or a new constant."""
        if type(value) is _Traced:
            return value.register
        if not isinstance(value, (numbers.Number, np.generic)):
            raise _NotAProgram(type(value).__name__)
        self.constants.append(value)
        return self.first_free + len(self.constants) - 1

    def emit(self, code, operands):
        self.instructions.append((code,) + tuple(self.register(v) for v in operands))
        return _Traced(self, -1 - (len(self.instructions) - 1))


class _Traced:
    """A stand-in for an array while a formula is traced (Note [JVP programs]).
    Temporaries' registers are negative until the constants are known."""

    __slots__ = ("recorder", "register")
    __array_priority__ = 1000

    def __init__(self, recorder, register):
        self.recorder = recorder
        self.register = register

    def __array_ufunc__(self, ufunc, method, *operands, **kwargs):
        if method != "__call__" or kwargs or ufunc.nout != 1:
            raise _NotAProgram(f"{ufunc.__name__}.{method}")
        return self.recorder.emit(ufunc, operands)

    def __array_function__(self, func, types, args, kwargs):
        raise _NotAProgram(func.__name__)

    def __array__(self, *args, **kwargs):
        raise _NotAProgram("__array__")

    def __bool__(self):
        raise _NotAProgram("__bool__")

    __hash__ = object.__hash__


def _binary(code, swap=False):
    def method(self, other):
        if other is ZERO:               # ZERO's own arithmetic decides
            return NotImplemented
        operands = (other, self) if swap else (self, other)
        return self.recorder.emit(code, operands)
    return method


def _unary(code):
    def method(self):
        return self.recorder.emit(code, (self,))
    return method


for _name, _code in CODES.items():
    if _name in ("neg", "pos"):
        setattr(_Traced, f"__{_name}__", _unary(_code))
    else:
        setattr(_Traced, f"__{_name}__", _binary(_code))
        setattr(_Traced, f"__r{_name}__", _binary(_code, swap=True))
for _name, _op in _COMPARISONS.items():
    setattr(_Traced, f"__{_name}__", _binary(COMPARE + _op))


def jvp_programs(op, attrs, arity):
    """The programs of ``op``'s JVP for these attrs, indexed by mask (None where the
    raw path must run): Note [JVP programs]. Called by the engine once per fast
    method.

    >>> from chainrule._ops import elementwise
    >>> constants, code, result = jvp_programs(elementwise.SIN, {}, 1)[1]
    >>> code            # t[0] * F.cos(self): cos of register 1, times register 0
    ((<ufunc 'cos'>, 1), (2, 0, 3))
    """
    raw = _RAW.get(op)
    if raw is None:
        raw = _raw_plan(op)
    programs = [None] * (1 << arity)
    if not raw or len(raw[1]) != arity:
        return tuple(programs)
    for mask in range(1, 1 << arity):
        try:
            programs[mask] = _trace(raw, attrs, arity, mask)
        except Exception:           # noqa: BLE001 - whatever stops the trace: no program
            pass
    return tuple(programs)


def _trace(raw, attrs, arity, mask):
    fn, fill, plan = raw
    first_free = 2 * arity + 1
    recorder = _Recorder(first_free)
    t = [_Traced(recorder, i) if mask >> i & 1 else fill[i] for i in range(arity)]
    env = []
    for kind, key in plan:
        if kind == 2:
            env.append(_Traced(recorder, arity + key))
        elif kind == 1:
            env.append(_Traced(recorder, 2 * arity))
        elif kind == 0:
            env.append(attrs[key])
        else:
            raise _NotAProgram("an input's shape")
    from chainrule._ops import _registry
    result = fn(_registry.ARRAY_NS, t, *env)
    if type(result) is not _Traced or result.register >= 0:
        raise _NotAProgram("the result is not computed")      # ZERO, a leaf, a constant
    return _finish(recorder, result)


def _finish(recorder, result):
    """Give temporaries their registers, after the constants."""
    base = recorder.first_free + len(recorder.constants)

    def final(register):
        return base + (-1 - register) if register < 0 else register
    instructions = tuple((ins[0],) + tuple(final(r) for r in ins[1:])
                         for ins in recorder.instructions)
    if base + len(instructions) > MAX_REGISTERS:
        raise _NotAProgram("too long")
    return tuple(recorder.constants), instructions, final(result.register)


_OPERATORS = (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
              operator.neg, operator.pos)


def run_program(program, t, arrays, result):
    """Run a program in Python, as the engine does: its reference (tests).

    >>> import numpy as np
    >>> from chainrule._ops import elementwise
    >>> program = jvp_programs(elementwise.SIN, {}, 1)[1]
    >>> float(run_program(program, [np.ones(1)], [np.zeros(1)], np.zeros(1))[0])
    1.0
    """
    constants, instructions, out = program
    registers = list(t) + list(arrays) + [result] + list(constants)
    compare = (operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge)
    for code, *operands in instructions:
        values = [registers[r] for r in operands]
        if type(code) is int:
            fn = _OPERATORS[code] if code < COMPARE else compare[code - COMPARE]
        else:
            fn = code
        registers.append(fn(*values))
    return registers[out]
