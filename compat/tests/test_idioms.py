import sys
import warnings

import pytest

import chainrule as cr
import chainrule_compat  # noqa: F401
from chainrule_compat import Variable


def test_loss_data_index_gives_the_number_with_a_warning():
    loss = (cr.ones(3, requires_grad=True) * 2).sum()
    with pytest.warns(UserWarning, match=r"use tensor.item\(\)") as caught:
        value = loss.data[0]
    assert value == 6.0 and type(value) is float and caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert loss.data[0, 0] == 6.0 and loss[-1] == 6.0


def test_modern_indexing_is_unchanged():
    x = cr.tensor([[1.0, 2.0]])
    assert x.data[0].tolist() == [1.0, 2.0]
    assert cr.tensor([cr.tensor(1.0), cr.tensor(2.0)]).tolist() == [1.0, 2.0]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        cr.tensor(1.0)[1]


def test_retain_variables_maps_to_retain_graph():
    x = cr.ones(2, requires_grad=True)
    y = (x * x).sum()
    with pytest.warns(DeprecationWarning, match="use retain_graph") as caught:
        y.backward(retain_variables=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0] and caught[0].filename == __file__
    with pytest.raises(ValueError, match="only one of retain_graph"):
        y.backward(retain_graph=True, retain_variables=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'retain'"):
        y.backward(retain=True)


def test_autograd_backward_retain_variables():
    x = cr.ones(1, requires_grad=True)
    y = (x * 3).sum()
    with pytest.warns(DeprecationWarning, match="retain_variables"):
        cr.autograd.backward(y, retain_variables=True)
    cr.autograd.backward(y)
    assert x.grad.tolist() == [6.0]


def test_creator_new_resize():
    x = cr.ones(2, requires_grad=True)
    y = x * 2
    with pytest.warns(DeprecationWarning, match="use .grad_fn"):
        assert y.creator is y.grad_fn
    assert x.data.new(2, 3).shape == (2, 3) and x.new(4).dtype == x.dtype
    assert x.new((1, 2)).tolist() == [1.0, 2.0] and x.new([3.0]).tolist() == [3.0]  # core's
    t = cr.arange(6.0)
    assert t.resize_(2, 2).tolist() == [[0.0, 1.0], [2.0, 3.0]] and t.shape == (2, 2)
    assert t.resize_(5).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]   # core's: the storage kept
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        x.resize_(3)
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        x.no_such_thing


def test_scalar_first_add():
    p = cr.ones(2)
    with pytest.warns(DeprecationWarning, match=r"add_\(tensor, alpha=scalar\)"):
        p.add_(-0.5, cr.ones(2))
    p.sub_(2, cr.ones(2))
    assert p.tolist() == [-1.5, -1.5]
    with pytest.raises(TypeError):
        p.add_(cr.ones(2), cr.ones(2))
    with pytest.raises(TypeError):
        p.mul_(2, cr.ones(2))


def test_typed_constructors():
    with pytest.warns(DeprecationWarning, match=r"chainrule.FloatTensor is deprecated"):
        t = cr.FloatTensor(2, 3)
    assert t.dtype == cr.float32 and t.shape == (2, 3) and t.sum().item() == 0
    assert cr.LongTensor([1, 2]).tolist() == [1, 2] and cr.LongTensor([1, 2]).dtype == cr.int64
    assert cr.ByteTensor(cr.Size([2])).dtype == cr.uint8 and cr.DoubleTensor().numel() == 0
    assert cr.FloatTensor((2, 3)).tolist() == [2.0, 3.0]          # a tuple is data, a Size
    assert cr.FloatTensor(cr.Size([2, 3])).shape == (2, 3)         # a shape, as in torch


def test_warnings_from_a_scripts_top_level():
    # warn_once names the user's line frames_up above; a top-level statement has fewer
    import os
    import subprocess
    import sys
    code = "import chainrule as cr, chainrule_compat\nprint(cr.FloatTensor(2).shape)\n"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "chainrule.Size([2])" in out.stdout


def test_the_other_2017_forms_core_keeps():
    """What the issue lists beside compat's own: core already accepts these, with the
    reference's warnings; old programs run them unchanged."""
    import chainrule.nn.functional as F
    x = cr.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        assert F.softmax(x).sum(1).tolist() == pytest.approx([1.0, 1.0])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        total = F.mse_loss(x, cr.zeros(2, 2), size_average=False)
    assert total.item() == 39.0
    total.backward()
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        cr.nn.utils.clip_grad_norm([x], 1.0)
    with pytest.warns(DeprecationWarning, match="only_inputs"):
        cr.autograd.grad((x * x).sum(), x, only_inputs=False)


def test_attribute_warnings_name_the_line_that_reads_the_attribute():
    # the getters run as properties (Note [legacy attribute slot]): one frame below
    x = Variable(cr.ones(1), volatile=True)
    y = cr.ones(1, requires_grad=True) * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        x.volatile, y.creator
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)] * 2
