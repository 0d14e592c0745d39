"""The chainrule-engine wheel installs beside chainrule-core in a fresh virtual
environment and is picked up with no configuration.

Both wheels come from this test's runfiles (//core:wheel, //engine_cpp:wheel).
NumPy and pip come from the project's venv through a .pth file (nothing can be
downloaded here); PYTHONPATH is scrubbed, so chainrule and chainrule_engine can only
come from the installed wheels.
"""
import glob
import os
import subprocess
import sys
import sysconfig
import zipfile

import pytest

PROBE = """
import os, sys
import chainrule as cr
assert "chainrule_engine" not in sys.modules
x = cr.tensor([1.0, 2.0], requires_grad=True)
(x * x).sum().backward()
from chainrule.autograd.engine import get_engine
import chainrule_engine
here = os.path.realpath(os.path.dirname(chainrule_engine.__file__))
assert here.startswith(os.path.realpath(sys.argv[1])), here
print(get_engine().name, x.grad.tolist())
"""


def _runfiles_root():
    srcdir, workspace = os.environ.get("TEST_SRCDIR"), os.environ.get("TEST_WORKSPACE")
    if srcdir and workspace:
        return os.path.join(srcdir, workspace)
    return os.getcwd()


def _wheel(pattern):
    found = sorted(glob.glob(os.path.join(_runfiles_root(), pattern)))
    if not found:
        pytest.skip(f"no {pattern} in the runfiles (run under Bazel)")
    return found[0]


def _env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PIP_", "RUNFILES_", "CHAINRULE_"))
           and k != "VIRTUAL_ENV"}
    env.update(PYTHONNOUSERSITE="1", PIP_CONFIG_FILE=os.devnull,
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return env


def _run(cmd, cwd):
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, f"{cmd} exited with {proc.returncode}:\n{proc.stdout}"
    return proc.stdout


def test_wheel_contents():
    wheel = _wheel("engine_cpp/chainrule_engine-*.whl")
    assert os.path.basename(wheel).startswith("chainrule_engine-0.1.0-cp")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read("chainrule_engine-0.1.0.dist-info/METADATA").decode()
    assert "chainrule_engine/__init__.py" in names
    assert any(n.startswith("chainrule_engine/_engine") and n.endswith(".so") for n in names)
    assert "Requires-Dist: chainrule-core==0.1.0" in meta


def test_installs_beside_core_and_is_picked_up(tmp_path):
    core, engine = _wheel("core/chainrule_core-*.whl"), _wheel("engine_cpp/chainrule_engine-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    python = str(venv / "bin" / "python")
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   cwd=tmp_path).strip()
    with open(os.path.join(purelib, "_project_venv.pth"), "w") as f:
        ours = sysconfig.get_paths()
        f.write(ours["purelib"] + "\n" + ours["platlib"] + "\n")
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", core, engine],
         cwd=tmp_path)
    _run([python, "-m", "pip", "check"], cwd=tmp_path)
    out = _run([python, "-c", PROBE, purelib], cwd=tmp_path).split()
    assert out[0] == "cpp", out
