"""The rewrites of ``chainrule-migrate``, on libcst (comments and formatting kept).

Each legacy use becomes a ``Finding``: its position, what it is, the modern form and
whether the transformer rewrote it. What cannot be rewritten safely is reported
with the reason and left as it was (Note [what the migrator only reports]).

Note [what the migrator only reports]
    Rewritten: ``Variable(x)``, ``Variable(x, requires_grad=...)``, volatile
    evaluation (the rest of the block goes under ``with no_grad():``),
    ``<loss>.data[0]`` -> ``.item()`` (a name or call that says loss, cost, penalty,
    objective, criterion, entropy or kl_div, or a full reduction such as ``.sum()``),
    ``retain_variables=`` / ``grad_variables=``,
    ``size_average=`` / ``reduce=`` given as literals -> ``reduction=``,
    ``clip_grad_norm`` -> ``clip_grad_norm_``, ``add_(scalar, tensor)`` ->
    ``add_(tensor, alpha=scalar)`` (also add, sub, sub_), old-style Functions without
    a constructor or helper methods -> static ``forward(ctx, ...)`` /
    ``backward(ctx, ...)`` with ``MyFn()(x)`` -> ``MyFn.apply(x)`` in the same file,
    and with ``--from-torch`` the torch imports.
    Reported only: ``.data[0]`` on something not recognisably a loss or reduction
    (it may index a vector), ``[0, 0]``-style indexes, ``.creator``, ``.volatile``,
    ``only_inputs=``, ``size_average=`` / ``reduce=`` given as expressions,
    ``softmax`` / ``log_softmax`` without ``dim`` (the legacy dim depends on the
    input's rank), ``isinstance(x, Variable)`` / ``type(x) == Variable``,
    ``FloatTensor``-style constructors, old-style Functions with a constructor or
    other methods, ``Variable(x, volatile=<expression>)``. Not detected: calls of
    old-style Functions defined in another file, ``type(x) is Variable``.
"""
import dataclasses

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

FACTORIES = {"randn", "rand", "zeros", "ones", "empty", "tensor", "Tensor", "FloatTensor",
             "DoubleTensor", "arange", "linspace", "full", "eye", "from_numpy", "randint"}
LEGACY_CONSTRUCTORS = {"FloatTensor", "DoubleTensor", "LongTensor", "IntTensor",
                       "ByteTensor", "HalfTensor", "ShortTensor", "CharTensor"}
RENAMED_KEYWORDS = {"retain_variables": "retain_graph", "grad_variables": "grad_tensors"}
REDUCTION_NAMES = ("sum", "mean", "norm", "dot", "max", "min", "prod")
SCALAR_WORDS = ("loss", "cost", "penalty", "objective", "criterion", "entropy", "kl_div")


@dataclasses.dataclass
class Finding:
    """One legacy use: where, what, the modern form, whether it was rewritten."""
    line: int
    col: int
    legacy: str
    modern: str
    rewritten: bool


def _name_of(func):
    """The last identifier of a callee (``F.nll_loss`` -> ``nll_loss``)."""
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def _keyword(call, name):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def _literal_bool(expr):
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


class _LegacyFunctions(cst.CSTVisitor):
    """First pass: the old-style Function classes of a module, and which of them can
    be rewritten mechanically."""

    def __init__(self):
        self.mechanical = {}      # class name -> True, or the reason it is not

    def visit_ClassDef(self, node):
        if not any(_name_of(b.value) == "Function" for b in node.bases):
            return
        methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
        forward = methods.get("forward")
        if forward is None or any(_name_of(d.decorator) == "staticmethod"
                                  for d in forward.decorators):
            return
        others = sorted(set(methods) - {"forward", "backward"})
        self.mechanical[node.name.value] = (
            True if not others else
            f"it defines {', '.join(others)}: move constructor arguments into forward's "
            "arguments and helpers out of the class, then use static forward(ctx, ...)")


class _SelfToCtx(cst.CSTTransformer):
    def leave_Name(self, original, updated):
        return updated.with_changes(value="ctx") if updated.value == "self" else updated


class Migrator(cst.CSTTransformer):
    """Rewrites one module; ``findings`` lists every legacy use it saw."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, module_alias, legacy_functions, from_torch):
        super().__init__()
        self.alias = module_alias
        self.legacy_functions = legacy_functions
        self.from_torch = from_torch
        self.findings = []
        self.needs_import = False
        self._volatile_pending = False
        self._volatile_statements = {}     # id -> the statement (kept alive)

    # -- bookkeeping ----------------------------------------------------------------
    def _found(self, node, legacy, modern, rewritten):
        pos = self.get_metadata(PositionProvider, node).start
        self.findings.append(Finding(pos.line, pos.column + 1, legacy, modern, rewritten))

    def _no_grad(self):
        if self.alias is None:
            self.needs_import = True
        return cst.parse_expression(f"{self.alias or 'chainrule'}.no_grad()")

    # -- calls ----------------------------------------------------------------------
    def leave_Call(self, original, updated):
        name = _name_of(updated.func)
        if name == "Variable":
            return self._variable(original, updated)
        updated = self._keywords(original, updated)
        if name in ("softmax", "log_softmax") and _keyword(updated, "dim") is None \
                and len(updated.args) < 2:
            self._found(original, f"{name} without dim",
                        f"{name}(x, dim=...): the legacy choice was dim=0 for 0-, 1- and "
                        "3-d inputs, else dim=1", False)
        elif name == "clip_grad_norm":
            self._found(original, "clip_grad_norm", "clip_grad_norm_", True)
            return updated.with_deep_changes(
                updated.func, **({"value": "clip_grad_norm_"} if isinstance(updated.func, cst.Name)
                                 else {"attr": cst.Name("clip_grad_norm_")}))
        elif name in ("add_", "add", "sub_", "sub") and isinstance(updated.func, cst.Attribute):
            return self._scalar_first(original, updated, name)
        elif name in LEGACY_CONSTRUCTORS:
            self._found(original, f"{name}(...)", f"chainrule.tensor(..., dtype=...) or "
                        f"chainrule.empty(sizes, dtype=...)", False)
        elif name == "isinstance" and len(updated.args) == 2 \
                and _name_of(updated.args[1].value) == "Variable":
            self._found(original, "isinstance(x, Variable)", "isinstance(x, chainrule.Tensor)",
                        False)
        elif isinstance(updated.func, cst.Call) and _name_of(updated.func.func) in \
                self.legacy_functions and not updated.func.args:
            return self._legacy_call(original, updated)
        return updated

    def _variable(self, original, updated):
        args = [a for a in updated.args if a.keyword is None]
        if not args:
            self._found(original, "Variable()", "chainrule.tensor([])", False)
            return updated
        data = args[0].value
        volatile = _keyword(updated, "volatile")
        grad = _keyword(updated, "requires_grad")
        if volatile is not None and _literal_bool(volatile.value) is not False:
            if _literal_bool(volatile.value) is not True or grad is not None:
                self._found(original, "Variable(x, volatile=...)", "with no_grad():", False)
                return updated
            self._found(original, "Variable(x, volatile=True)", "x, under with no_grad():", True)
            self._volatile_pending = True
            return data
        if grad is None or _literal_bool(grad.value) is False:
            self._found(original, "Variable(x)", "x", True)
            return data
        flag = [] if _literal_bool(grad.value) is True else [cst.Arg(grad.value)]
        fresh = isinstance(data, cst.Call) and _name_of(data.func) in FACTORIES
        base = data if fresh else cst.Call(cst.Attribute(data, cst.Name("detach")))
        self._found(original, "Variable(x, requires_grad=...)",
                    "x.requires_grad_()" if fresh else "x.detach().requires_grad_()", True)
        return cst.Call(cst.Attribute(base, cst.Name("requires_grad_")), flag)

    def _keywords(self, original, updated):
        args = list(updated.args)
        for i, arg in enumerate(args):
            word = arg.keyword.value if arg.keyword is not None else None
            if word in RENAMED_KEYWORDS:
                self._found(original, f"{word}=", f"{RENAMED_KEYWORDS[word]}=", True)
                args[i] = arg.with_changes(keyword=cst.Name(RENAMED_KEYWORDS[word]))
            elif word == "only_inputs":
                self._found(original, "only_inputs=", "leave it out (ignored; use "
                            "autograd.backward to accumulate into other leaves)", False)
        return self._reduction(original, updated.with_changes(args=args))

    def _reduction(self, original, updated):
        average, reduce = _keyword(updated, "size_average"), _keyword(updated, "reduce")
        if average is None and reduce is None:
            return updated
        values = [True if a is None else _literal_bool(a.value) for a in (average, reduce)]
        if None in values or _keyword(updated, "reduction") is not None:
            self._found(original, "size_average=/reduce=", "reduction='mean'|'sum'|'none'",
                        False)
            return updated
        reduction = "mean" if all(values) else "sum" if values[1] else "none"
        self._found(original, "size_average=/reduce=", f"reduction='{reduction}'", True)
        args = [a for a in updated.args if a is not average and a is not reduce]
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        args.append(cst.Arg(cst.SimpleString(f"'{reduction}'"), keyword=cst.Name("reduction"),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""),
                                                  cst.SimpleWhitespace(""))))
        return updated.with_changes(args=args)

    def _scalar_first(self, original, updated, name):
        positional = [a for a in updated.args if a.keyword is None]
        if len(positional) != 2 or len(updated.args) != 2:
            return updated
        scalar, tensor = positional
        if not name.endswith("_") and not (_scalar_like(scalar.value) and not m.matches(
                updated.func.value, m.Name(self.alias or "chainrule"))):
            return updated          # torch.add(a, b) / x.add(y, z): not the old order
        self._found(original, f"{name}(scalar, tensor)", f"{name}(tensor, alpha=scalar)", True)
        return updated.with_changes(args=[
            cst.Arg(tensor.value),
            cst.Arg(scalar.value, keyword=cst.Name("alpha"),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))])

    def _legacy_call(self, original, updated):
        cls = _name_of(updated.func.func)
        reason = self.legacy_functions[cls]
        if reason is not True:
            self._found(original, f"{cls}()(...)", f"{cls}.apply(...) once {cls} is a "
                        f"new-style Function", False)
            return updated
        self._found(original, f"{cls}()(...)", f"{cls}.apply(...)", True)
        return updated.with_changes(func=cst.Attribute(updated.func.func, cst.Name("apply")))

    # -- attributes and subscripts ---------------------------------------------------
    def leave_Attribute(self, original, updated):
        if updated.attr.value in ("creator", "volatile"):
            modern = ".grad_fn" if updated.attr.value == "creator" else \
                "nothing: evaluate under no_grad() and drop the check"
            self._found(original, f".{updated.attr.value}", modern, False)
        return updated

    def leave_Subscript(self, original, updated):
        if not m.matches(updated.value, m.Attribute(attr=m.Name("data"))):
            return updated
        index = [e.slice.value if isinstance(e.slice, cst.Index) else None
                 for e in updated.slice]
        if not all(isinstance(i, cst.Integer) and i.value == "0" for i in index):
            return updated
        base = updated.value.value
        if len(index) == 1 and _looks_scalar(base):
            self._found(original, ".data[0]", ".item()", True)
            return cst.Call(cst.Attribute(base, cst.Name("item")))
        self._found(original, ".data[0]" if len(index) == 1 else ".data[0, 0]",
                    ".item() if it is a one-element result", False)
        return updated

    def leave_Comparison(self, original, updated):
        if m.matches(updated, m.Comparison(left=m.Call(func=m.Name("type")),
                                           comparisons=[m.ComparisonTarget(
                                               comparator=m.Name("Variable"))])):
            self._found(original, "type(x) == Variable", "isinstance(x, chainrule.Tensor)",
                        False)
        return updated

    # -- old-style Functions ---------------------------------------------------------
    def leave_ClassDef(self, original, updated):
        reason = self.legacy_functions.get(updated.name.value)
        if reason is None:
            return updated
        if reason is not True:
            self._found(original, f"old-style Function {updated.name.value}", reason, False)
            return updated
        self._found(original, f"old-style Function {updated.name.value}",
                    "@staticmethod forward(ctx, ...) / backward(ctx, ...)", True)
        body = [_static(s) if isinstance(s, cst.FunctionDef) else s for s in updated.body.body]
        return updated.with_changes(body=updated.body.with_changes(body=body))

    # -- volatile blocks and imports -------------------------------------------------
    def leave_SimpleStatementLine(self, original, updated):
        if self._volatile_pending:
            self._volatile_pending = False
            # keyed by id, holding the node: a collected node's id could be reused by a
            # later statement (a return outside the loop went under no_grad, now and then)
            self._volatile_statements[id(updated)] = updated
        return updated

    def leave_IndentedBlock(self, original, updated):
        return updated.with_changes(body=self._finish_body(updated.body))

    def leave_Module(self, original, updated):
        return updated.with_changes(body=self._finish_body(updated.body))

    def _finish_body(self, body):
        """Drops ``a = a`` lines (what ``a = Variable(a)`` became) and puts the rest
        of the block, from a volatile statement on, under ``with no_grad():``."""
        kept, start = [], None
        for stmt in body:
            if start is None and id(stmt) in self._volatile_statements:
                start = len(kept)
            stmt = _drop_self_assignment(stmt)
            if stmt is not None:
                kept.append(stmt)
        if start is None:
            return kept
        if start == len(kept):
            kept.append(cst.SimpleStatementLine([cst.Pass()]))
        block = cst.With([cst.WithItem(self._no_grad())], cst.IndentedBlock(kept[start:]))
        return kept[:start] + [block]

    def leave_Import(self, original, updated):
        if not self.from_torch:
            return updated
        names = []
        for alias in updated.names:
            dotted = _dotted(alias.name)
            if dotted == "torch" or dotted.startswith("torch."):
                new = "chainrule" + dotted[len("torch"):]
                asname = alias.asname
                if asname is None and "." not in dotted:     # torch.x keeps working
                    asname = cst.AsName(cst.Name(dotted))
                self._found(original, f"import {dotted}", f"import {new}", True)
                alias = alias.with_changes(name=cst.parse_expression(new), asname=asname)
            names.append(alias)
        return updated.with_changes(names=names)

    def leave_ImportFrom(self, original, updated):
        if not self.from_torch or updated.module is None:
            return updated
        dotted = _dotted(updated.module)
        if dotted != "torch" and not dotted.startswith("torch."):
            return updated
        new = "chainrule" + dotted[len("torch"):]
        self._found(original, f"from {dotted} import", f"from {new} import", True)
        return updated.with_changes(module=cst.parse_expression(new))


def _dotted(node):
    if isinstance(node, cst.Name):
        return node.value
    return f"{_dotted(node.value)}.{node.attr.value}"


def _looks_scalar(base):
    """Whether ``base`` is recognisably a one-element result: a name saying loss,
    a loss function's call, or a full reduction."""
    node = base
    while isinstance(node, cst.Attribute) and node.attr.value == "data":
        node = node.value
    if isinstance(node, (cst.Name, cst.Attribute)):
        return any(word in _name_of(node).lower() for word in SCALAR_WORDS)
    if isinstance(node, cst.Call):
        name = (_name_of(node.func) or "").lower()
        return any(word in name for word in SCALAR_WORDS) or \
            (name in REDUCTION_NAMES and not node.args)
    return False


def _scalar_like(expr):
    """A number, or ``-something`` (``-lr``): the first argument of ``add(-lr, g)``."""
    return isinstance(expr, (cst.Integer, cst.Float)) or (
        isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus))


def _static(fn):
    if fn.name.value not in ("forward", "backward"):
        return fn
    fn = fn.visit(_SelfToCtx())
    decorator = cst.Decorator(cst.Name("staticmethod"))
    return fn.with_changes(decorators=[decorator, *fn.decorators])


def _drop_self_assignment(line):
    """``line`` without ``a, b = a, b`` statements; None when nothing is left."""
    if not isinstance(line, cst.SimpleStatementLine):
        return line
    body = [s for s in line.body if not (
        isinstance(s, cst.Assign) and len(s.targets) == 1
        and s.targets[0].target.deep_equals(s.value))]
    if len(body) == len(line.body):
        return line
    return line.with_changes(body=body) if body else None


def module_alias(module):
    """The name the module imports chainrule (or torch) as, or None."""
    for stmt in module.body:
        if not m.matches(stmt, m.SimpleStatementLine(body=[m.Import()])):
            continue
        for alias in stmt.body[0].names:
            dotted = _dotted(alias.name)
            if dotted in ("chainrule", "torch"):
                return alias.asname.name.value if alias.asname else dotted
    return None


def add_import(module):
    """``import chainrule`` after the module's last top-level import."""
    last = -1
    for i, stmt in enumerate(module.body):
        if m.matches(stmt, m.SimpleStatementLine(body=[m.OneOf(m.Import(), m.ImportFrom())])):
            last = i
    line = cst.parse_statement("import chainrule\n")
    return module.with_changes(body=[*module.body[:last + 1], line, *module.body[last + 1:]])


def drop_unused_variable_import(module):
    """``module`` without its import of ``Variable`` once nothing uses the name."""
    uses = m.findall(module, m.Name("Variable"))
    imported = m.findall(module, m.ImportAlias(name=m.Name("Variable")))
    if not imported or len(uses) > len(imported):
        return module
    return module.visit(_DropVariableImport())


class _DropVariableImport(cst.CSTTransformer):
    def leave_ImportFrom(self, original, updated):
        if isinstance(updated.names, cst.ImportStar):
            return updated
        names = [a for a in updated.names if not m.matches(a.name, m.Name("Variable"))]
        if len(names) == len(updated.names):
            return updated
        if not names:
            return cst.RemoveFromParent()
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=names)
