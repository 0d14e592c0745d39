"""The C++ engine mirrors the Python engine (core/chainrule/autograd/engine.py and its
helpers) line for line in behaviour. When the Python engine changes, this test fails
until the change is mirrored in engine_cpp/src and the fingerprint below is updated:
core's suite, which runs under both engines, only catches the changes it exercises.

Only code counts (docstrings and comments do not): the fingerprint is a hash of the
AST of the functions and classes the C++ engine mirrors.
"""
import ast
import hashlib
import inspect

from chainrule.autograd import engine, graph_task, input_buffer, ready_queue

MIRRORED = [
    (engine, ["PythonEngine", "_accumulate", "_buffer", "_capture", "_run_tensor_pre_hooks",
              "_run_node_pre_hooks", "_run_node_post_hooks", "needed_edges"]),
    (graph_task, ["GraphTask", "_nodes_leading_to"]),
    (input_buffer, ["InputBuffer"]),
    (ready_queue, ["ReadyQueue"]),
]

# Update after mirroring a change (print(fingerprint()) gives the new value).
FINGERPRINT = "dd6bd5f333d09acb"


def _strip_docstrings(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and \
                    isinstance(getattr(body[0], "value", None), ast.Constant) and \
                    isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def fingerprint():
    digest = hashlib.sha256()
    for module, names in MIRRORED:
        for name in names:
            source = inspect.getsource(getattr(module, name))
            tree = _strip_docstrings(ast.parse(inspect.cleandoc("\n" + source)
                                               if source[0].isspace() else source))
            digest.update(f"{module.__name__}.{name}\n".encode())
            digest.update(ast.dump(tree, annotate_fields=False).encode())
    return digest.hexdigest()[:16]


def test_python_engine_unchanged_since_last_mirrored():
    assert fingerprint() == FINGERPRINT, (
        "the Python engine changed: mirror the change in engine_cpp/src (see "
        "engine_cpp/README.md), then set FINGERPRINT in this file to %r" % fingerprint())
