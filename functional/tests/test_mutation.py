"""_mutation.py: Note [mutating captured tensors] — in-place writes into captured
tensors under the gradient transforms raise the reference's error."""
import pytest

import chainrule as cr
from chainrule import func

CAPTURED = cr.zeros(3)


def _message(op):
    return (f"During a grad \\(vjp, jvp, grad, etc\\) transform, the function provided "
            f"attempted to call in-place operation \\({op}\\) that would mutate a captured "
            f"Tensor")


def _global_iadd(x):
    global CAPTURED
    CAPTURED += 1
    return x.sum()


@pytest.mark.parametrize("write, op", [
    (lambda c, x: c.add_(x), "aten::add_.Tensor"),
    (lambda c, x: c.mul_(2.0), "aten::mul_.Tensor"),
    (lambda c, x: c[0:2].add_(x[:2]), "aten::add_.Tensor"),       # a view of its memory
    (lambda c, x: c.__setitem__(0, x[0]), "aten::copy_"),
    (lambda c, x: c.copy_(x), "aten::copy_"),
    (lambda c, x: c.zero_(), "aten::zero_"),
    (lambda c, x: c.fill_(2), "aten::fill_.Scalar"),
    (lambda c, x: c.sin_(), "aten::sin_"),
    (lambda c, x: c.index_put_((cr.tensor([0]),), x[:1]), "aten::index_put_")])
def test_writing_into_a_closed_over_tensor_raises(write, op):
    c = cr.zeros(3)

    def f(x):
        write(c, x)
        return x.sum()
    for transform in [lambda: func.grad(f)(cr.ones(3)),
                      lambda: func.vjp(f, cr.ones(3)),
                      lambda: func.jacrev(f)(cr.ones(3)),
                      lambda: func.jvp(f, (cr.ones(3),), (cr.ones(3),))]:
        with pytest.raises(RuntimeError, match=_message(op)):
            transform()
    assert c.tolist() == [0.0, 0.0, 0.0]


def test_globals_buffers_and_no_grad_writes_are_captured_too():
    with pytest.raises(RuntimeError, match=_message("aten::add_.Tensor")):
        func.grad(_global_iadd)(cr.ones(3))
    weight = cr.zeros(3, requires_grad=True)

    def under_no_grad(x):
        with cr.no_grad():
            weight.add_(1)
        return x.sum()
    with pytest.raises(RuntimeError, match="mutate a captured Tensor"):
        func.grad(under_no_grad)(cr.ones(3))
    norm = cr.nn.BatchNorm1d(3)             # its running statistics
    with pytest.raises(RuntimeError, match="mutate a captured Tensor"):
        func.grad(lambda x: norm(x).sum())(cr.ones(2, 3))
    norm.eval()
    assert func.grad(lambda x: norm(x).sum())(cr.ones(2, 3)).shape == (2, 3)


def test_what_the_function_makes_or_receives_is_written_freely():
    w = cr.ones(3)

    def local(x):
        y = cr.zeros(3)
        y.add_(x)
        y[0] = 5.0
        return (y * w).sum()
    assert func.grad(local)(cr.ones(3)).tolist() == [0.0, 1.0, 1.0]
    assert func.jacfwd(lambda x: x.clone().mul_(2))(cr.ones(2)).tolist() == [[2.0, 0.0],
                                                                              [0.0, 2.0]]
    with cr.autograd.graph.allow_mutation_on_saved_tensors():   # the outer context still
        a = cr.ones(3, requires_grad=True)                       # sees every write
        b = a.clone()
        out = (b ** 2).sum() + func.grad(lambda x: (x * w).sum())(cr.ones(3)).sum()
        b.sin_()
        out.backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]
