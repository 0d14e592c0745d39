"""The chainrule-core wheel installs into a fresh virtual environment and works.

The wheel is the one Bazel built (//core:wheel, in this test's runfiles). The
fresh venv has no chainrule of its own; its requirements (numpy, ml_dtypes) and
pip come from the project's .venv through a .pth file, because installing them
from an index is not possible offline. PYTHONPATH (Bazel's runfiles, where
chainrule's sources are) is scrubbed from every subprocess, so `chainrule` can
only come from the installed wheel.
"""
import base64
import glob
import hashlib
import os
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import pytest

DISTRIBUTION = "chainrule-core"
WHEEL_GLOB = os.path.join("core", "chainrule_core-*.whl")


def _runfiles_root():
    srcdir, workspace = os.environ.get("TEST_SRCDIR"), os.environ.get("TEST_WORKSPACE")
    if srcdir and workspace:
        return os.path.join(srcdir, workspace)
    return os.getcwd()


@pytest.fixture(scope="module")
def wheel():
    found = sorted(glob.glob(os.path.join(_runfiles_root(), WHEEL_GLOB)))
    assert len(found) == 1, "expected one %s in the runfiles, found %s" % (WHEEL_GLOB, found)
    return found[0]


def _clean_env():
    """The environment without Bazel's Python settings and pip's configuration."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "PIP_", "RUNFILES_")) and k != "VIRTUAL_ENV"
    }
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    return env


def _run(cmd, cwd, check=True, env=None):
    proc = subprocess.run(
        cmd, cwd=cwd, env=dict(_clean_env(), **(env or {})), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True
    )
    if check and proc.returncode != 0:
        pytest.fail("%s exited with %d:\n%s" % (cmd, proc.returncode, proc.stdout))
    return proc


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory):
    """A fresh venv (no system site-packages) that sees the project venv's packages."""
    return _fresh_venv(tmp_path_factory.mktemp("wheel-install"))


def _fresh_venv(root):
    env_dir = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], cwd=root)
    python = str(env_dir / "bin" / "python")
    purelib = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=root
    ).stdout.strip()
    assert os.path.realpath(purelib).startswith(os.path.realpath(str(env_dir)))
    ours = sysconfig.get_paths()
    with open(os.path.join(purelib, "_project_venv.pth"), "w") as f:
        for key in ("purelib", "platlib"):
            f.write(ours[key] + "\n")
    return python, purelib, root


def test_wheel_contents_and_record(wheel):
    name = os.path.basename(wheel)
    assert name.startswith("chainrule_core-0.1.0-")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        dist_info = "chainrule_core-0.1.0.dist-info/"
        assert names[-1] == dist_info + "RECORD"
        for entry in names:
            assert entry.startswith(("chainrule/", dist_info)), entry
            info = zf.getinfo(entry)
            assert info.date_time == (1980, 1, 1, 0, 0, 0), entry
        assert "chainrule/__init__.py" in names
        record = zf.read(dist_info + "RECORD").decode().splitlines()
        assert sorted(line.split(",")[0] for line in record) == sorted(names)
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            if path == dist_info + "RECORD":
                continue
            data = zf.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode(), path
            assert int(size) == len(data), path
        metadata = zf.read(dist_info + "METADATA").decode()
        assert "Name: chainrule-core\n" in metadata
        assert "Requires-Dist: numpy" in metadata
        assert "Requires-Dist: ml_dtypes" in metadata
        wheel_meta = zf.read(dist_info + "WHEEL").decode()
        if any(n.endswith(".so") for n in names):
            assert "Root-Is-Purelib: false" in wheel_meta
        else:
            assert "Tag: py3-none-any" in wheel_meta


def test_install_into_fresh_venv_and_train(wheel, venv_python):
    python, purelib, cwd = venv_python

    # Nothing named chainrule is importable before the wheel is installed.
    before = _run([python, "-c", "import chainrule"], cwd=cwd, check=False)
    assert before.returncode != 0 and "No module named 'chainrule'" in before.stdout, before.stdout

    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=cwd)
    check = _run([python, "-m", "pip", "check"], cwd=cwd, check=False)
    assert check.returncode == 0, check.stdout

    meta = _run(
        [
            python,
            "-c",
            "import importlib.metadata as m; print(m.version(%r)); print(m.requires(%r))"
            % (DISTRIBUTION, DISTRIBUTION),
        ],
        cwd=cwd,
    ).stdout.splitlines()
    assert meta[0] == "0.1.0"
    assert "numpy" in meta[1] and "ml_dtypes" in meta[1]

    script = textwrap.dedent(
        """
        import os, sys
        import chainrule as cr

        here = os.path.realpath(os.path.dirname(cr.__file__))
        assert here.startswith(os.path.realpath(sys.argv[1])), here

        cr.manual_seed(0)
        x = cr.randn(64, 3)
        y = x @ cr.tensor([1.0, 2.0, 3.0])
        w = cr.zeros(3, requires_grad=True)
        losses = []
        for step in range(30):
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            with cr.no_grad():
                w -= 0.1 * w.grad
            w.grad.zero_()
            losses.append(loss.item())
        assert w.is_leaf and w.requires_grad
        assert all(b < a for a, b in zip(losses, losses[1:])), losses
        assert losses[-1] < 0.05 * losses[0], losses
        print("loss %.4f -> %.4f" % (losses[0], losses[-1]))
        """
    )
    script_path = os.path.join(str(cwd), "train.py")
    with open(script_path, "w") as f:
        f.write(script)
    out = _run([python, script_path, purelib], cwd=cwd).stdout
    assert "loss" in out


# Each layer's wheel, with a script that uses the layer: core alone raises the
# ImportError naming the wheel; core + the layer's wheel runs the script.
LAYER_SCRIPTS = {
    ("forward_ad", "chainrule-forward-ad"): """
import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
with fwAD.dual_level():
    x = fwAD.make_dual(cr.tensor([1.0, 2.0]), cr.tensor([1.0, 0.0]))
    tangent = fwAD.unpack_dual((x * x).sum()).tangent
assert tangent.item() == 2.0, tangent
print("ok")
""",
    ("functional", "chainrule-functional"): """
import chainrule as cr
from chainrule.autograd.functional import hessian
from chainrule.func import grad, vmap
h = hessian(lambda x: (x ** 3).sum(), cr.tensor([1.0, 2.0]))
assert h.tolist() == [[6.0, 0.0], [0.0, 12.0]], h
g = vmap(grad(lambda x: (x ** 2).sum()))(cr.ones(3, 2))
assert g.tolist() == [[2.0, 2.0]] * 3, g
print("ok")
""",
}


@pytest.mark.parametrize("layer", sorted(LAYER_SCRIPTS), ids=lambda layer: layer[1])
def test_layer_wheel_adds_its_feature(layer, wheel, tmp_path):
    folder, distribution = layer
    pattern = os.path.join(_runfiles_root(), folder, distribution.replace("-", "_") + "-*.whl")
    found = sorted(glob.glob(pattern))
    assert len(found) == 1, "expected one %s in the runfiles, found %s" % (pattern, found)
    python, purelib, cwd = _fresh_venv(tmp_path)
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=cwd)
    script = os.path.join(str(cwd), "use_layer.py")
    with open(script, "w") as f:
        f.write(LAYER_SCRIPTS[layer])
    alone = _run([python, script], cwd=cwd, check=False)
    assert alone.returncode != 0 and "needs the %s wheel" % distribution in alone.stdout, \
        alone.stdout
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", found[0]], cwd=cwd)
    check = _run([python, "-m", "pip", "check"], cwd=cwd, check=False)
    assert check.returncode == 0, check.stdout
    assert _run([python, script], cwd=cwd).stdout.strip() == "ok"


PROFILE_PROBE = textwrap.dedent(
    """
    import os, sys
    import chainrule as cr
    from chainrule.autograd import profiler
    import chainrule_profiler
    here = os.path.realpath(os.path.dirname(chainrule_profiler.__file__))
    assert here.startswith(os.path.realpath(sys.argv[1])), here
    x = cr.ones(2, requires_grad=True)
    with profiler.profile() as prof:
        (x * 2).sum().backward()
    print(sorted(e.key for e in prof.key_averages()))
    print(cr.profiler.ProfilerActivity.CPU)
    """
)


def test_profiler_layer_needs_its_wheel(wheel, venv_python):
    """Core alone: both public paths name the wheel; with it installed they work."""
    python, purelib, cwd = venv_python
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=cwd)
    for path in ("chainrule.autograd.profiler", "chainrule.profiler"):
        missing = _run([python, "-c", f"import {path}"], cwd=cwd, check=False)
        assert missing.returncode != 0
        assert f"ImportError: {path} needs the chainrule-profiler wheel" in missing.stdout, \
            missing.stdout
    found = sorted(glob.glob(os.path.join(_runfiles_root(), "profiler",
                                          "chainrule_profiler-*.whl")))
    assert len(found) == 1, found
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", found[0]], cwd=cwd)
    script = os.path.join(str(cwd), "profile.py")
    with open(script, "w") as f:
        f.write(PROFILE_PROBE)
    out = _run([python, script, purelib], cwd=cwd).stdout.splitlines()
    evaluate = "'autograd::engine::evaluate_function: "
    assert out == ["['MulBackward0', 'SumBackward0', 'aten::mul', 'aten::sum', "
                   f"{evaluate}MulBackward0', {evaluate}SumBackward0', "
                   f"{evaluate}torch::autograd::AccumulateGrad', "
                   "'torch::autograd::AccumulateGrad']",
                   "ProfilerActivity.CPU"]


COMPAT_PROBE = textwrap.dedent(
    """
    import os, sys, warnings
    import chainrule as cr
    from chainrule.autograd import Variable
    import chainrule_compat
    here = os.path.realpath(os.path.dirname(chainrule_compat.__file__))
    assert here.startswith(os.path.realpath(sys.argv[1])), here
    warnings.simplefilter("ignore")
    x = Variable(cr.ones(2), requires_grad=True)
    loss = (x * 3).sum()
    loss.backward(retain_variables=True)
    print(loss.data[0], x.grad.data.tolist(), Variable(x.data, volatile=True).volatile)
    """
)


def test_compat_layer_needs_its_wheel_and_installs_the_command(wheel, venv_python):
    """Core alone: Variable's public paths name the wheel; with it installed they
    work and the chainrule-migrate command rewrites a file."""
    python, purelib, cwd = venv_python
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=cwd)
    for probe in ("import chainrule.autograd.variable",
                  "from chainrule.autograd import Variable"):
        missing = _run([python, "-c", probe], cwd=cwd, check=False)
        assert missing.returncode != 0
        assert "ImportError: chainrule.autograd.variable needs the chainrule-compat wheel" \
            in missing.stdout, missing.stdout
    command = os.path.join(os.path.dirname(python), "chainrule-migrate")
    assert not os.path.exists(command)
    found = sorted(glob.glob(os.path.join(_runfiles_root(), "compat", "chainrule_compat-*.whl")))
    assert len(found) == 1, found
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", found[0]], cwd=cwd)
    script = os.path.join(str(cwd), "compat_probe.py")
    with open(script, "w") as f:
        f.write(COMPAT_PROBE)
    assert _run([python, script, purelib], cwd=cwd).stdout == "6.0 [3.0, 3.0] True\n"
    old = os.path.join(str(cwd), "old.py")
    with open(old, "w") as f:
        f.write("loss.backward(retain_variables=True)\n")
    report = _run([command, old], cwd=cwd, check=False)
    assert report.returncode == 1 and "old.py:1:1: retain_variables= -> retain_graph=" \
        in report.stdout, report.stdout
    assert _run([command, "--write", old], cwd=cwd).returncode == 0
    with open(old) as f:
        assert f.read() == "loss.backward(retain_graph=True)\n"


CUDA_PROBE = textwrap.dedent(
    """
    import os, sys
    import chainrule as cr
    print(cr.cuda.is_available(), cr.cuda.device_count(), cr.cuda.unavailable_reason())
    if cr.cuda.is_available():
        import chainrule_cuda
        here = os.path.realpath(os.path.dirname(chainrule_cuda.__file__))
        assert here.startswith(os.path.realpath(sys.argv[1])), here
        with cr.cuda.stream(cr.cuda.Stream()):
            cr.cuda.synchronize()
        print(cr.cuda.get_device_name(), cr.cuda.memory_allocated())
    """
)


def test_cuda_layer_says_why_and_runs_on_its_host_build(wheel, tmp_path):
    """Core alone: chainrule.cuda says to install chainrule-cuda; with the wheel and no
    GPU it says why (no driver, or no GPU library in a wheel built without nvcc); with
    CHAINRULE_CUDA_EMULATE=1 its host build is a usable device."""
    python, purelib, cwd = _fresh_venv(tmp_path)
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=cwd)
    script = os.path.join(str(cwd), "cuda_probe.py")
    with open(script, "w") as f:
        f.write(CUDA_PROBE)
    alone = _run([python, script, purelib], cwd=cwd).stdout
    assert alone.startswith("False 0 chainrule-cuda is not installed: install the "
                            "chainrule-cuda wheel"), alone
    found = sorted(glob.glob(os.path.join(_runfiles_root(), "cuda", "chainrule_cuda-*.whl")))
    assert len(found) == 1, found
    with zipfile.ZipFile(found[0]) as zf:
        has_gpu_library = "chainrule_cuda/libchainrule_cuda.so" in zf.namelist()
        assert "chainrule_cuda/libchainrule_cuda_host.so" in zf.namelist()
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", found[0]], cwd=cwd)
    check = _run([python, "-m", "pip", "check"], cwd=cwd, check=False)
    assert check.returncode == 0, check.stdout
    no_gpu = _run([python, script, purelib], cwd=cwd).stdout
    why = "False 0 no NVIDIA driver" if has_gpu_library else "False 0 chainrule-cuda has no GPU library"
    assert no_gpu.startswith(why), no_gpu
    emulated = _run([python, script, purelib], cwd=cwd, env={"CHAINRULE_CUDA_EMULATE": "1"})
    assert emulated.stdout.splitlines() == ["True 1 None", "chainrule host emulation (CPU) 0"]
