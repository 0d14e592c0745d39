"""Runs pytest as the main program of a Bazel py_test.

Used by //tools/build_defs:pytest.bzl. Arguments:
  --chainrule-engine=NAME   export CHAINRULE_ENGINE=NAME before anything imports
  --pytest-arg=ARG          pass ARG to pytest
  FILE...                   the test files (runfiles paths)

From Bazel's test environment: the JUnit XML goes to $XML_OUTPUT_FILE,
`bazel test --test_filter=EXPR` ($TESTBRIDGE_TEST_ONLY) becomes `-k EXPR`, and
pytest's temporary folders go under $TEST_TMPDIR. Exits with pytest's exit
code, except that "no tests collected" (5) is a failure unless a filter was
given.
"""
import os
import sys

NO_TESTS_COLLECTED = 5


def build_args(argv, environ):
    files, extra, engine = [], [], None
    for arg in argv:
        if arg.startswith("--chainrule-engine="):
            engine = arg.split("=", 1)[1]
        elif arg.startswith("--pytest-arg="):
            extra.append(arg.split("=", 1)[1])
        else:
            files.append(arg)
    args = [*files, "-q", "-p", "no:cacheprovider"]
    xml = environ.get("XML_OUTPUT_FILE")
    if xml:
        args += ["--junitxml", xml]
        target = environ.get("TEST_TARGET")
        if target:
            args += ["-o", "junit_suite_name=" + target]
    test_filter = environ.get("TESTBRIDGE_TEST_ONLY")
    if test_filter:
        args += ["-k", test_filter]
    tmp = environ.get("TEST_TMPDIR")
    if tmp:
        args += ["--basetemp", os.path.join(tmp, "pytest")]
    return engine, args + extra, bool(test_filter)


def main(argv):
    engine, args, filtered = build_args(argv, os.environ)
    if engine:
        os.environ["CHAINRULE_ENGINE"] = engine
    # Runfiles may be read-only: no __pycache__ or rewritten-assert caches.
    sys.dont_write_bytecode = True
    import pytest

    code = int(pytest.main(args))
    if code == NO_TESTS_COLLECTED:
        if filtered:
            print("pytest_runner: no test matched --test_filter here; passing")
            code = 0
        else:
            print("pytest_runner: no tests were collected from %s" % argv, file=sys.stderr)
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
