"""``chainrule-migrate PATH...``: report every Variable-era use with file:line:col and
its modern form; ``--diff`` prints a unified diff of the rewrites, ``--write``
applies them in place. Exit status: 0 when nothing legacy remains, 1 when some does
(after ``--write``: what could not be rewritten), 2 when a file did not parse (it is
reported and left untouched). ``--from-torch`` also rewrites torch imports.
"""
import argparse
import difflib
import os
import sys

import libcst as cst

from . import _transform

CLEAN, LEGACY_REMAINS, UNPARSEABLE = 0, 1, 2


def migrate_source(source, from_torch=False):
    """``(new source, findings)`` for one module's ``source``; raises
    ``libcst.ParserSyntaxError`` when it does not parse.

    >>> from chainrule_compat.migrate.cli import migrate_source
    >>> new, findings = migrate_source("loss.backward(retain_variables=True)\\n")
    >>> new
    'loss.backward(retain_graph=True)\\n'
    >>> [(f.line, f.col, f.modern) for f in findings]
    [(1, 1, 'retain_graph=')]
    """
    module = cst.parse_module(source)
    legacy = _transform._LegacyFunctions()
    module.visit(legacy)
    migrator = _transform.Migrator(_transform.module_alias(module), legacy.mechanical,
                                   from_torch)
    new = cst.MetadataWrapper(module).visit(migrator)
    if migrator.needs_import:
        new = _transform.add_import(new)
    new = _transform.drop_unused_variable_import(new)
    return new.code, migrator.findings


def python_files(paths):
    """The .py files of ``paths`` (files as given, folders walked, sorted)."""
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                yield from (os.path.join(root, f) for f in sorted(files) if f.endswith(".py"))
        else:
            yield path


def _migrate_file(path, args, out):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        new, findings = migrate_source(source, args.from_torch)
    except cst.ParserSyntaxError as error:
        print(f"{path}:{error.raw_line}:{error.raw_column + 1}: cannot parse, skipped: "
              f"{error.message}", file=out)
        return UNPARSEABLE
    for f in findings:
        note = "" if f.rewritten else "  [not rewritten]"
        print(f"{path}:{f.line}:{f.col}: {f.legacy} -> {f.modern}{note}", file=out)
    if args.diff and new != source:
        out.writelines(difflib.unified_diff(source.splitlines(True), new.splitlines(True),
                                            f"a/{path}", f"b/{path}"))
    if args.write and new != source:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
    remaining = [f for f in findings if not (args.write and f.rewritten)]
    return LEGACY_REMAINS if remaining else CLEAN


def main(argv=None, out=None):
    """The command line; returns the exit status.

    >>> import io, os, tempfile
    >>> from chainrule_compat.migrate.cli import main
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "old.py"), "w") as f:
    ...     _ = f.write("y.backward(retain_variables=True)\\n")
    >>> main([folder, "--write"], out=io.StringIO()), main([folder], out=io.StringIO())
    (0, 0)
    """
    parser = argparse.ArgumentParser(prog="chainrule-migrate", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    parser.add_argument("--diff", action="store_true", help="print a unified diff")
    parser.add_argument("--write", action="store_true", help="rewrite the files in place")
    parser.add_argument("--from-torch", action="store_true",
                        help="also rewrite torch / torch.autograd imports to chainrule")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    status = CLEAN
    for path in python_files(args.paths):
        status = max(status, _migrate_file(path, args, out))
    return status


def entry_point():
    """The console script ``chainrule-migrate``."""
    sys.exit(main())
