"""Instructions per call of view ops and of bench/peers.py's chain, counted by callgrind.

    PYTHONPATH=core:engine_cpp .venv/bin/python engine_cpp/tools/callgrind_ops.py [CASE ...]

One process per requires_grad setting runs every case under ``valgrind
--tool=callgrind``, collecting only inside ``exec`` (``--toggle-collect``) and dumping
after each: a case runs its statement N=100 and N=400 times (after a warm-up), and
(b - a) / 300 is the cost of one call, the loop's start cancelling out. The chain is
1,000 elementwise ops recorded (mul by scalar, sin, add leaf, tanh), counted per op,
without and with the backward.
Instructions are deterministic where wall time on a shared machine is not. The C++
engine is imported first (CHAINRULE_ENGINE=cpp; it installs its fast paths).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

SETUP = """
import chainrule as cr
import chainrule.nn.functional as F
from chainrule.autograd import engine
engine.get_engine()
a = cr.ones(4, 4, dtype=cr.float64, requires_grad={rg})
x = cr.ones(4, 4, dtype=cr.float64, requires_grad={rg})
w = cr.ones(3, 4, dtype=cr.float64, requires_grad={rg})
b = cr.ones(3, dtype=cr.float64, requires_grad={rg})
a3 = cr.ones(2, 4, 2, dtype=cr.float64, requires_grad={rg})
s = cr.ones(4, 1, 4, dtype=cr.float64, requires_grad={rg})
c = cr.tensor([0.5] * 16, dtype=cr.float64, requires_grad=True)
def chain(n):
    y = c
    for i in range(n):
        k = i % 4
        y = y * 1.0001 if k == 0 else y.sin() if k == 1 else y + c if k == 2 else y.tanh()
    return y
"""
CASES = {
    "tanh": "a.tanh()",
    "view": "a.view(16)",
    "view(-1)": "a.view(-1)",
    "reshape": "a.reshape(2, 8)",
    "t": "a.t()",
    "transpose": "a.transpose(0, 1)",
    "permute": "a3.permute(2, 0, 1)",
    "unsqueeze": "a.unsqueeze(1)",
    "squeeze": "s.squeeze(1)",
    "flatten": "a3.flatten()",
    "a[0]": "a[0]",
    "a[:, 1:3]": "a[:, 1:3]",
    "F.linear": "F.linear(x, w, b)",
    "x@w.t()+b": "x @ w.t() + b",
}
DRIVER = """
import sys
cases = {cases!r}
codes = {{}}
for name, stmt in cases.items():
    for n in (50, 100, 400):
        codes[name, n] = compile(f"for _ in range({{n}}): {{stmt}}", name, "exec")
chain_codes = [compile(f"chain({{n}}){{tail}}", "chain", "exec")
               for tail in ("", ".sum().backward()") for n in (1000, 1000, 4000)]
scope = globals()
for name in cases:
    for n in (50, 100, 400):
        exec(codes[name, n], scope)
for code in chain_codes:
    exec(code, scope)
"""


def dumps(rg, cases):
    """The instruction counts of each exec, in order."""
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1",
               CHAINRULE_ENGINE=os.environ.get("CHAINRULE_ENGINE", "cpp"))
    source = SETUP.format(rg=rg) + DRIVER.format(cases=cases)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--collect-atstart=no", "--toggle-collect=builtin_exec",
                        "--dump-after=builtin_exec", "--dump-instr=no", sys.executable,
                        "-c", source], env=env, capture_output=True, check=True)
        files = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        counts = [int(re.search(r"^(?:summary|totals): (\d+)", open(p).read(), re.M).group(1))
                  for p in files]
    return counts[-(3 * len(cases) + 6):]        # the driver's (import runs exec too)


def main(names):
    cases = {k: CASES[k] for k in names or CASES}
    counts = {rg: dumps(rg, cases) for rg in (False, True)}
    print(f"{'op':12s}{'no grad':>10s}{'grad':>10s}")
    for i, name in enumerate(cases):
        row = [(counts[rg][3 * i + 2] - counts[rg][3 * i + 1]) / 300 for rg in (False, True)]
        print(f"{name:12s}" + "".join(f"{v:10.0f}" for v in row))
    for label, first in (("chain fwd", -6), ("chain f+b", -3)):
        n100, n400 = counts[True][first + 1], counts[True][first + 2]
        print(f"{label + '/op':12s}{(n400 - n100) / 3000:20.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
