"""pytest-based py_test targets.

    load("//tools/build_defs:pytest.bzl", "pytest_suite", "pytest_test")

    pytest_test(
        name = "test_ops",
        srcs = ["tests/test_ops.py"],
        deps = [":core"],
        engines = ["python", "cpp"],          # the default: DEFAULT_ENGINES
        engine_deps = {"cpp": ["//engine_cpp"]},  # the default: DEFAULT_ENGINE_DEPS
    )

Every test runs under both engines unless it says otherwise (the whole suite must
pass with the Python engine and with the C++ one); a target that must not, e.g. one
that installs wheels into a fresh environment, sets `engines = ["python"]`.

Each target runs //tools:pytest_runner.py, which calls pytest on the `srcs`
(JUnit XML to $XML_OUTPUT_FILE; `--test_filter=EXPR` becomes `-k EXPR`) and
sets the environment variable CHAINRULE_ENGINE to the target's engine.

With one engine the target is `name`; with several there is one target per
engine, `<name>_<engine>` (tagged `engine_<engine>`, so
`--test_tag_filters=-engine_cpp` leaves one out), and a test_suite `name` that
runs them all.
"""

_RUNNER = "//tools:pytest_runner.py"
DEFAULT_ENGINES = ["python", "cpp"]

# What each engine needs beside the test's own deps (used when engine_deps is not
# given): the C++ engine is the //engine_cpp layer.
DEFAULT_ENGINE_DEPS = {"cpp": ["//engine_cpp"]}

def pytest_test(
        name,
        srcs,
        deps = [],
        data = [],
        engines = None,
        engine_deps = None,
        pytest_args = [],
        tags = [],
        **kwargs):
    """One py_test per engine running pytest on `srcs`.

    Args:
      name: target name (or test_suite name, with several engines).
      srcs: the pytest files to run.
      deps: py_library targets the tests import.
      data: files the tests read at run time (conftest.py and pytest.ini
        belong in deps/data too).
      engines: engines to run the tests under (default DEFAULT_ENGINES).
      engine_deps: extra deps per engine (default: DEFAULT_ENGINE_DEPS for the
        engines in `engines`).
      pytest_args: extra arguments for pytest.
      tags: tags for every target.
      **kwargs: passed to py_test (size, timeout, flaky, shard_count, ...).
    """
    engines = engines or DEFAULT_ENGINES
    if engine_deps == None:
        engine_deps = {e: d for e, d in DEFAULT_ENGINE_DEPS.items() if e in engines}
    for engine in engine_deps:
        if engine not in engines:
            fail("engine_deps names engine %r, which is not in engines %r" % (engine, engines))
    tests = []
    for engine in engines:
        target = name if len(engines) == 1 else "%s_%s" % (name, engine)
        tests.append(":" + target)
        native.py_test(
            name = target,
            srcs = [_RUNNER] + srcs,
            main = _RUNNER,
            deps = deps + engine_deps.get(engine, []),
            data = data,
            args = ["--chainrule-engine=" + engine] +
                   ["--pytest-arg=" + a for a in pytest_args] +
                   ["$(rootpath %s)" % src for src in srcs],
            tags = tags + ["engine_" + engine],
            python_version = "PY3",
            srcs_version = "PY3",
            **kwargs
        )
    if len(engines) > 1:
        # No tags here: a test_suite's tags filter its members.
        native.test_suite(
            name = name,
            tests = tests,
            visibility = kwargs.get("visibility"),
        )

def _target_name(src, prefix):
    name = src[:-len(".py")] if src.endswith(".py") else src
    if prefix and name.startswith(prefix):
        name = name[len(prefix):]
    return name

def pytest_suite(
        name,
        srcs = None,
        deps = [],
        data = [],
        engines = None,
        strip_prefix = "tests/",
        **kwargs):
    """One pytest_test per file, and a test_suite `name` over all of them.

    Args:
      name: the test_suite's name.
      srcs: test files; default glob(["tests/**/test_*.py"]).
      deps, data, engines: as for pytest_test, for every file.
      strip_prefix: left out of the per-file target names
        (tests/test_ops.py -> :test_ops).
      **kwargs: passed to every pytest_test.
    """
    if srcs == None:
        srcs = native.glob(["tests/**/test_*.py"], allow_empty = True)
    tests = []
    for src in srcs:
        target = _target_name(src, strip_prefix)
        if target == name:
            fail("test file %s would make a target named like the suite %r" % (src, name))
        tests.append(":" + target)
        pytest_test(
            name = target,
            srcs = [src],
            deps = deps,
            data = data,
            engines = engines,
            **kwargs
        )
    native.test_suite(
        name = name,
        tests = tests,
        visibility = kwargs.get("visibility"),
    )
