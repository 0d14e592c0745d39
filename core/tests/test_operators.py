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
    for statement, symbol in (("t //= [1]", "//="), ("t %= [1]", "%=")):
        with pytest.raises(TypeError, match=rf"for {symbol}: 'Tensor' and 'list'"):
            exec(statement, {"t": t})
    for statement in ("t += [1]", "t -= 'a'", "t *= None", "t /= [1]"):
        with pytest.raises(TypeError, match="unsupported operand type"):
            exec(statement, {"t": t})     # the in-place method's words (a C++ fast path)
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


_INPLACE_DTYPE_ERRORS = [
    ("x.add_(1.5)", "result type Float can't be cast to the desired output type Long"),
    ("x.mul_(cr.tensor([1.5, 2.]))", "result type Float can't be cast to the desired output type Long"),
    ("x.div_(2)", "result type Float can't be cast to the desired output type Long"),
    ("x.sqrt_()", "result type Float can't be cast to the desired output type Long"),
    ("x.clamp_(0.5, 1.5)", "result type Float can't be cast to the desired output type long int"),
    ("x.clamp_min_(0.5)", "result type Float can't be cast to the desired output type long int"),
    ("x32.clip_(1j)", "result type ComplexFloat can't be cast to the desired output type int"),
    ("x.clamp_(cr.tensor(0.5))", "result type Float can't be cast to the desired output type Long"),
    ("x.lerp_(cr.ones(2), 0.5)", "expected dtype long int for `end` but got dtype float"),
    ("f.lerp_(cr.ones(2, dtype=cr.float64), 0.5)", "expected dtype float for `end` but got dtype double"),
    ("x.index_add_(0, cr.tensor([0]), cr.tensor([1.5]))",
     r"index_add_\(\): self \(Long\) and source \(Float\) must have the same scalar type"),
    ("x.scatter_add_(0, cr.tensor([0]), cr.tensor([1.5]))",
     r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
    ("x.scatter_(0, cr.tensor([0]), cr.tensor([1.5]))",
     r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
    ("x.put_(cr.tensor([0]), cr.tensor([1.5]))",
     r"put_\(\): self and source expected to have the same dtype, but got self.dtype = Long "
     "and source.dtype = Float"),
    ("x.addmm_(cr.ones(2, 2), cr.ones(2, 2))",
     "self and mat2 must have the same dtype, but got Long and Float"),
    ("x.baddbmm_(cr.ones(1, 2, 2), cr.ones(1, 2, 2))",
     "Input dtypes must be the same, got: input long int, batch1: float, batch2: float"),
    ("b.neg_()", "Negation, the `-` operator, on a bool tensor is not supported"),
]


@pytest.mark.parametrize("statement,message", _INPLACE_DTYPE_ERRORS)
def test_inplace_dtype_errors_use_the_references_words(statement, message):
    names = {"cr": cr, "x": cr.tensor([1, 2]), "x32": cr.tensor([1, 2], dtype=cr.int32),
             "f": cr.ones(2), "b": cr.tensor([True, False])}
    with pytest.raises(RuntimeError, match=message):
        eval(statement, names)
    assert names["x"].tolist() == [1, 2] and names["x"]._version == 0


def test_an_array_on_the_right_is_a_tensor():
    import numpy as np
    out = cr.ones(2, 3) * np.full(3, 2.)
    assert isinstance(out, cr.Tensor) and out.dtype is cr.float64 and out.tolist()[0] == [2.] * 3
    assert (cr.ones(2, 3) @ np.ones((3, 1))).dtype is cr.float64


@pytest.mark.parametrize("write", [
    lambda t, b: t.sub_(b), lambda t, b: t.__isub__(b), lambda t, b: t.sub_(b, alpha=2),
    lambda t, b: operator.isub(t, b)], ids=["sub_", "__isub__", "sub_ alpha", "-="])
@pytest.mark.parametrize("dtype", [cr.int64, cr.float32], ids=["int", "float"])
def test_inplace_subtraction_of_a_bool_tensor_is_refused(write, dtype):
    # Note [bool subtraction]: the in-place fast path leaves it to the method
    t, b = cr.tensor([1, 2, 3], dtype=dtype), cr.tensor([True, False, True])
    with pytest.raises(RuntimeError, match="^Subtraction, the `-` operator, with a bool tensor "
                                           "is not supported. If you are trying to invert a "
                                           "mask, use the `~` or `logical_not\\(\\)` operator "
                                           "instead.$"):
        write(t, b)
    assert t.tolist() == [1, 2, 3] and t._version == 0
    t += b                                 # addition takes a bool operand
    assert t.tolist() == [2, 2, 4]


def test_number_divided_by_a_tensor_is_a_product_with_its_reciprocal():
    # the reference's __rdiv__: self.reciprocal() * other
    x = cr.tensor([3.0, -0.5, 7.0], requires_grad=True)
    y = 1.7 / x
    node = y.grad_fn
    assert node.name() == "MulBackward0"
    assert [type(n).__name__ if n else None for n, _ in node.next_functions] == \
        ["ReciprocalBackward0", None]
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx([-1.7 / 9, -6.8, -1.7 / 49])
    assert (2 / cr.tensor([1, 2, 0])).tolist() == [2.0, 1.0, float("inf")]
    assert cr.tensor(2.0).__rdiv__(3).item() == 1.5
    with pytest.raises(TypeError, match=re.escape("unsupported operand type(s) for /: 'list'")):
        [1] / x


def test_fill_records_the_reference_s_four_nodes():
    x = cr.ones(3, dtype=cr.float64, requires_grad=True)
    value = cr.tensor(2.0, dtype=cr.float64, requires_grad=True)
    names = [type(y.grad_fn).__name__ for y in (cr.fill(x, 2.0), cr.fill(x, value),
                                                 x.clone().fill_(2.0), x.clone().fill_(value))]
    assert names == ["FillBackward0", "FillBackward1", "FillBackward2", "FillBackward3"]
    y = x.clone().fill_(value)
    y.sum().backward()
    assert value.grad.item() == 3.0 and x.grad.tolist() == [0.0, 0.0, 0.0]


def test_remainder_and_rsub_name_their_tensor_and_number_overloads():
    x, y = cr.ones(3, requires_grad=True), cr.full((3,), 3.0, requires_grad=True)
    assert type(cr.remainder(x, y).grad_fn).__name__ == "RemainderBackward1"
    assert type((x % 0.7).grad_fn).__name__ == "RemainderBackward0"
    assert type(cr.rsub(x, y).grad_fn).__name__ == "RsubBackward0"
    node = (2.0 - x).grad_fn
    assert type(node).__name__ == "RsubBackward1" and len(node.next_functions) == 1
    assert type(x.log1p().grad_fn).__name__ == "Log1PBackward0"
