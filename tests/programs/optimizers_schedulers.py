"""Optimizers and schedulers on the Rosenbrock function and a tiny model."""
import torch


def rosenbrock(p):
    return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2


configs = [
    ("SGD", lambda ps: torch.optim.SGD(ps, lr=1e-3, momentum=0.9, nesterov=True)),
    ("Adam", lambda ps: torch.optim.Adam(ps, lr=0.05, betas=(0.9, 0.99))),
    ("AdamW", lambda ps: torch.optim.AdamW(ps, lr=0.05, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", lambda ps: torch.optim.RMSprop(ps, lr=0.01, momentum=0.5)),
    ("Adagrad", lambda ps: torch.optim.Adagrad(ps, lr=0.3)),
]
for name, make in configs:
    p = torch.tensor([-1.5, 2.0], dtype=torch.float64, requires_grad=True)
    opt = make([p])
    for _ in range(50):
        opt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        opt.step()
    print(f"{name:8s} loss {rosenbrock(p).item():.10f} p {p.detach().tolist()}")

# LBFGS needs a closure
p = torch.tensor([-1.5, 2.0], dtype=torch.float64, requires_grad=True)
opt = torch.optim.LBFGS([p], lr=1, max_iter=20, line_search_fn="strong_wolfe")
def closure():
    opt.zero_grad()
    loss = rosenbrock(p)
    loss.backward()
    return loss
for _ in range(5):
    opt.step(closure)
print("LBFGS", round(rosenbrock(p).item(), 8), [round(v, 6) for v in p.tolist()])

# parameter groups and schedulers
w = torch.nn.Parameter(torch.ones(3))
b = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
scheds = {
    "cosine": torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.001),
}
lrs = []
for epoch in range(12):
    opt.zero_grad()
    ((w * torch.arange(3.0)).sum() + b.sum() ** 2).backward()
    opt.step()
    scheds["cosine"].step()
    lrs.append([round(g["lr"], 6) for g in opt.param_groups])
print("cosine lrs", lrs)

opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
decay = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
seq = torch.optim.lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[3])
out = []
for _ in range(8):
    opt.step()
    seq.step()
    out.append(round(opt.param_groups[0]["lr"], 6))
print("sequential", out)
opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
lam = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 / (1 + e))
plateau_opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(plateau_opt, patience=1, factor=0.5)
out = []
for metric in [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7]:
    opt.step(); lam.step(); plateau_opt.step(); plateau.step(metric)
    out.append((round(opt.param_groups[0]["lr"], 5), plateau_opt.param_groups[0]["lr"]))
print("lambda/plateau", out)
oc_opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, momentum=0.9)
oc = torch.optim.lr_scheduler.OneCycleLR(oc_opt, max_lr=1.0, total_steps=10)
out = []
for _ in range(10):
    oc_opt.step(); oc.step()
    out.append((round(oc_opt.param_groups[0]["lr"], 6), round(oc_opt.param_groups[0]["momentum"], 6)))
print("onecycle", out)
