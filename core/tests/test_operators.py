"""Python operators on Tensor (chainrule/_ops/operators.py): foreign operands and
the reference's errors (Note [operators and foreign operands])."""
import operator
import re

import pytest

import chainrule as cr

_OPERATORS = [("+", operator.add), ("-", operator.sub), ("*", operator.mul),
              ("/", operator.truediv), ("//", operator.floordiv), ("%", operator.mod),
              ("** or pow()", operator.pow), ("@", operator.matmul), ("&", operator.and_),
              ("|", operator.or_), ("^", operator.xor), ("<<", operator.lshift),
              (">>", operator.rshift)]


@pytest.mark.parametrize("symbol,fn", _OPERATORS)
@pytest.mark.parametrize("other", [None, {1: 2}, object()])
def test_foreign_operand_gets_pythons_type_error(symbol, fn, other):
    t, name = cr.tensor([1, 2]), type(other).__name__
    message = f"unsupported operand type(s) for {symbol}: "
    with pytest.raises(TypeError, match=re.escape(f"{message}'Tensor' and '{name}'")):
        fn(t, other)
    with pytest.raises(TypeError, match=re.escape(f"{message}'{name}' and 'Tensor'")):
        fn(other, t)


def test_lists_tuples_and_strings_are_not_tensors():
    t = cr.tensor([1., 2.])
    with pytest.raises(TypeError, match=r"for \+: 'Tensor' and 'list'"):
        t + [1, 2]
    with pytest.raises(TypeError, match=r'can only concatenate list \(not "Tensor"\) to list'):
        [1, 2] + t
    with pytest.raises(TypeError, match=r"for -: 'tuple' and 'Tensor'"):
        (1, 2) - t
    with pytest.raises(TypeError, match="only integer tensors of a single element can be "
                                        "converted to an index"):
        t * "a"                   # Python's sequence repetition asks t.__index__
    with pytest.raises(TypeError, match=r"for \*\*=: 'Tensor' and 'list'"):
        t **= [1]


def test_matmul_takes_no_scalars():
    t = cr.tensor([1., 2.])
    with pytest.raises(TypeError, match=r"for @: 'Tensor' and 'int'"):
        t @ 3
    with pytest.raises(TypeError, match=r"for @: 'float' and 'Tensor'"):
        1.5 @ t


def test_augmented_assignment_with_a_foreign_operand():
    t = cr.tensor([1., 2.])
    for statement, symbol in (("t += [1]", r"\+="), ("t -= 'a'", "-="), ("t *= None", r"\*="),
                              ("t /= [1]", "/="), ("t //= [1]", "//="), ("t %= [1]", "%=")):
        with pytest.raises(TypeError, match=rf"for {symbol}: 'Tensor' and"):
            exec(statement, {"t": t})
    assert t._version == 0


def test_equality_with_a_foreign_object_is_false_and_ordering_raises():
    t = cr.tensor([1., 2.])
    assert (t == None) is False and (t != [1, 2]) is True      # noqa: E711
    assert (t == 1).tolist() == [True, False]
    with pytest.raises(TypeError, match="'<' not supported between instances of 'Tensor' "
                                        "and 'list'"):
        t < [1, 2]
    with pytest.raises(TypeError, match="unsupported operand type: NoneType"):
        cr.eq(t, None)                     # the function form keeps its own error


def test_dtype_errors_name_the_kernel():
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        cr.tensor([1., 2.]) & 1
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        cr.tensor([1, 2]) << 1.5
    with pytest.raises(NotImplementedError, match="\"div_floor_cpu\" not implemented for "
                                                  "'ComplexFloat'"):
        cr.tensor([1., 2.]) // 1j
    with pytest.raises(NotImplementedError, match="\"remainder_cpu\" not implemented for "
                                                  "'ComplexFloat'"):
        1j % cr.tensor([1., 2.])
    with pytest.raises(NotImplementedError, match="\"lt_cpu\" not implemented for 'ComplexFloat'"):
        cr.tensor([1j]) < 1


def test_bool_negation_subtraction_and_float_invert():
    b = cr.tensor([True, False])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool "
                                           "tensors is not supported"):
        b - b
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -b
    with pytest.raises(TypeError, match=r"~ \(operator.invert\) is only implemented on integer"):
        ~cr.tensor([1.])
    assert (~b).tolist() == [False, True]


def test_numbers_and_tensors_still_work():
    t = cr.tensor([1, 2])
    assert (t << 1).tolist() == [2, 4] and (1 << t).tolist() == [2, 4]
    assert (2 ** cr.tensor([1., 2.])).tolist() == [2., 4.]
    assert (cr.ones(2, 2) @ cr.ones(2)).tolist() == [2., 2.]
    assert (3 - cr.tensor([1., 2.])).tolist() == [2., 1.]
