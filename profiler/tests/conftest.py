"""Shared fixtures of the profiler layer's tests."""
import os
import shutil
import subprocess

import pytest

import chainrule as cr

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools")


@pytest.fixture
def tool_library(tmp_path_factory):
    """The path of test tool library ``name`` (tests/tools/<name>.c): the one Bazel
    built beside the sources, or, run without Bazel, compiled here with ``cc``."""
    def find(name):
        built = os.path.join(TOOLS, f"lib{name}.so")
        if os.path.exists(built):
            return built
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None:
            pytest.fail("no C compiler to build the test tool " + name)
        out = str(tmp_path_factory.mktemp("tools") / f"lib{name}.so")
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-fvisibility=hidden",
                        os.path.join(TOOLS, f"{name}.c"), "-o", out, "-lpthread"], check=True)
        return out
    return find


@pytest.fixture
def leaf():
    """A (1, 1) leaf that requires grad, as in the reference's profiler example."""
    cr.manual_seed(0)
    return cr.randn(1, 1, requires_grad=True)
