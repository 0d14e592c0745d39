"""The rewrites of chainrule-migrate (chainrule_compat/migrate/_transform.py)."""
import textwrap

import pytest

from chainrule_compat.migrate.cli import migrate_source


def _migrate(source, **kw):
    new, findings = migrate_source(textwrap.dedent(source), **kw)
    again, _ = migrate_source(new, **kw)
    assert again == new                              # idempotent
    return new, findings


def test_variable_forms():
    new, found = _migrate("""\
        import chainrule as cr
        from chainrule.autograd import Variable
        a = Variable(x)
        b = Variable(cr.randn(3), requires_grad=True)
        c = Variable(x, requires_grad=True)  # a leaf sharing x
        d = Variable(x, requires_grad=flag)
        e = Variable(x, requires_grad=False)
        """)
    assert new == textwrap.dedent("""\
        import chainrule as cr
        a = x
        b = cr.randn(3).requires_grad_()
        c = x.detach().requires_grad_()  # a leaf sharing x
        d = x.detach().requires_grad_(flag)
        e = x
        """)
    assert all(f.rewritten for f in found) and (found[0].line, found[0].col) == (3, 5)


def test_volatile_block_goes_under_no_grad():
    new, _ = _migrate("""\
        import chainrule as torch
        from chainrule.autograd import Variable

        def test(model, loader):
            total = 0
            for data, target in loader:
                data, target = Variable(data, volatile=True), Variable(target)
                # the forward
                output = model(data)
                total += F.nll_loss(output, target, size_average=False).data[0]
            return total
        """)
    assert new == textwrap.dedent("""\
        import chainrule as torch

        def test(model, loader):
            total = 0
            for data, target in loader:
                with torch.no_grad():
                    # the forward
                    output = model(data)
                    total += F.nll_loss(output, target, reduction='sum').item()
            return total
        """)


def test_volatile_without_a_chainrule_import_adds_one():
    new, _ = _migrate("""\
        from chainrule.autograd import Variable
        out = model(Variable(x, volatile=True))
        """)
    assert new == "import chainrule\nwith chainrule.no_grad():\n    out = model(x)\n"


def test_keywords_and_calls():
    new, found = _migrate("""\
        loss.backward(retain_variables=True)
        cr.autograd.backward([y], grad_variables=[g])
        F.mse_loss(a, b, size_average=False, reduce=False)
        F.mse_loss(a, b, size_average=flag)
        nn.utils.clip_grad_norm(ps, 1.0)
        p.data.add_(-lr, p.grad.data)
        p.data.add_(p.grad.data, alpha=-lr)
        y = torch.add(a, b) + x.add(-1, g) + x.add(h, g)
        print(total_loss.data[0], loss.data.sum().data[0], h.data[0], loss.data[0, 0])
        """)
    assert new == textwrap.dedent("""\
        loss.backward(retain_graph=True)
        cr.autograd.backward([y], grad_tensors=[g])
        F.mse_loss(a, b, reduction='none')
        F.mse_loss(a, b, size_average=flag)
        nn.utils.clip_grad_norm_(ps, 1.0)
        p.data.add_(p.grad.data, alpha=-lr)
        p.data.add_(p.grad.data, alpha=-lr)
        y = torch.add(a, b) + x.add(g, alpha=-1) + x.add(h, g)
        print(total_loss.item(), loss.data.sum().item(), h.data[0], loss.data[0, 0])
        """)
    kept = [(f.line, f.legacy) for f in found if not f.rewritten]
    assert kept == [(4, "size_average=/reduce="), (9, ".data[0]"), (9, ".data[0, 0]")]


def test_old_style_function():
    new, found = _migrate("""\
        class Clamp(Function):
            def forward(self, x):
                self.save_for_backward(x)
                return x.clamp(min=0)

            def backward(self, g):
                x, = self.saved_tensors
                return g * (x > 0).float()


        class Scale(Function):
            def __init__(self, k):
                self.k = k

            def forward(self, x):
                return x * self.k

        y = Clamp()(x) + Scale(2)(x)
        """)
    assert "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)" in new
    assert "x, = ctx.saved_tensors" in new and "Clamp.apply(x) + Scale(2)(x)" in new
    assert "def forward(self, x):\n        return x * self.k" in new
    reported = [f.modern for f in found if not f.rewritten]
    assert any("__init__" in r for r in reported)


def test_reported_only():
    _, found = _migrate("""\
        if type(h) == Variable or isinstance(h, Variable):
            print(h.creator, h.volatile, F.softmax(h), torch.FloatTensor(2))
        g = grad(y, x, only_inputs=False)
        """)
    assert {f.legacy for f in found} == {
        "type(x) == Variable", "isinstance(x, Variable)", ".creator", ".volatile",
        "softmax without dim", "FloatTensor(...)", "only_inputs="}
    assert not any(f.rewritten for f in found)


def test_from_torch_imports():
    source = """\
        import torch
        import torch.nn as nn
        from torch.autograd import Variable
        from torch import optim
        x = Variable(torch.ones(2))
        """
    new, _ = _migrate(source, from_torch=True)
    assert new == textwrap.dedent("""\
        import chainrule as torch
        import chainrule.nn as nn
        from chainrule import optim
        x = torch.ones(2)
        """)
    unchanged, _ = _migrate("import torch\n")
    assert unchanged == "import torch\n"


def test_unparseable_source_raises():
    import libcst
    with pytest.raises(libcst.ParserSyntaxError):
        migrate_source("def broken(:\n")
