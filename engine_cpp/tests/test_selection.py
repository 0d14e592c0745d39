"""Engine selection (Note [engine selection] in chainrule/autograd/engine.py): the
C++ engine is picked automatically when installed; CHAINRULE_ENGINE forces one;
importing chainrule never imports chainrule_engine."""
import os
import subprocess
import sys

import chainrule
import chainrule_engine

CORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(chainrule.__file__)))
ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(chainrule_engine.__file__)))

PROBE = """
import sys
import chainrule as cr
assert "chainrule_engine" not in sys.modules, "imported at import time"
x = cr.ones(2, requires_grad=True)
(x * 2).sum().backward()
from chainrule.autograd.engine import get_engine
print(get_engine().name)
"""


def run(env_value, with_engine=True):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CHAINRULE_ENGINE")}
    paths = [CORE_DIR] + ([ENGINE_DIR] if with_engine else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    if env_value is not None:
        env["CHAINRULE_ENGINE"] = env_value
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                          text=True, cwd="/")


def test_installed_engine_is_picked_automatically():
    out = run(None)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cpp"


def test_forcing_each_engine():
    assert run("python").stdout.strip() == "python"
    assert run("cpp").stdout.strip() == "cpp"


def test_without_the_wheel_core_falls_back_to_python():
    out = run(None, with_engine=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "python"


def test_forcing_cpp_without_the_wheel_names_it():
    out = run("cpp", with_engine=False)
    assert out.returncode != 0
    assert "ImportError" in out.stderr and "chainrule-engine" in out.stderr


def test_unknown_engine_name_is_an_error():
    out = run("fortran")
    assert out.returncode != 0 and "CHAINRULE_ENGINE must be 'python' or 'cpp'" in out.stderr
