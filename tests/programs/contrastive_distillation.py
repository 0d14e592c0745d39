"""SimCLR-style contrastive learning (F.normalize, cosine_similarity, InfoNCE via
cross_entropy with label_smoothing, a learnable temperature nn.Parameter, logsumexp),
then knowledge distillation into a smaller student with KLDivLoss (log_target) and soft
targets."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
B, D_IN, D_EMB = 8, 10, 6
data = torch.randn(32, D_IN)
labels = (data[:, 0] > 0).long() + (data[:, 1] > 0).long()


def augment(x, k):
    g = torch.Generator().manual_seed(100 + k)
    return x + 0.1 * torch.randn(x.shape, generator=g) * (1 + (torch.arange(x.size(1)) % 2))


encoder = nn.Sequential(nn.Linear(D_IN, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, D_EMB))
log_temp = nn.Parameter(torch.tensor(math.log(1 / 0.5)))
opt = torch.optim.SGD(list(encoder.parameters()) + [log_temp], lr=0.1, momentum=0.9, nesterov=True)


def info_nce(z1, z2, scale):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T * scale
    n = z1.size(0)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(n)])
    ce = F.cross_entropy(sim, target, label_smoothing=0.0)
    manual = (torch.logsumexp(sim, dim=1) - sim[torch.arange(2 * n), target]).mean()
    return ce, manual, sim


for step in range(12):
    idx = torch.arange(B) + (step % 4) * B
    x = data[idx]
    z1, z2 = encoder(augment(x, step)), encoder(augment(x, step + 50))
    ce, manual, sim = info_nce(z1, z2, log_temp.exp().clamp(max=100))
    opt.zero_grad()
    ce.backward()
    opt.step()
    if step % 4 == 0:
        pos = F.cosine_similarity(z1, z2, dim=1)
        print(f"step {step} nce {ce.item():.5f} manual {manual.item():.5f} "
              f"pos cos {pos.mean().item():.5f} temp {1 / log_temp.exp().item():.5f} "
              f"temp grad {log_temp.grad.item():.5f}")

# label smoothing on a plain classification loss, with class weights and reductions
logits = torch.randn(5, 3, requires_grad=True)
tgt = torch.tensor([0, 2, 1, 1, -100])
for ls in (0.0, 0.1, 0.3):
    l = F.cross_entropy(logits, tgt, label_smoothing=ls, weight=torch.tensor([1.0, 2.0, 0.5]))
    print("label_smoothing", ls, round(l.item(), 6), type(l.grad_fn).__name__)
soft = torch.softmax(torch.randn(5, 3), 1)
l_soft = nn.CrossEntropyLoss(label_smoothing=0.2, reduction="sum")(logits, soft)
l_soft.backward()
print("soft-target ce", round(l_soft.item(), 6), [round(v, 5) for v in logits.grad[0].tolist()])
print("cos sim broadcast", F.cosine_similarity(torch.randn(4, 1, 3), torch.randn(1, 5, 3), dim=-1).shape)
print("pairwise", F.pairwise_distance(torch.ones(2, 3), torch.zeros(2, 3), p=2.0, eps=1e-6, keepdim=True))

# knowledge distillation
teacher = nn.Sequential(nn.Linear(D_IN, 32), nn.Tanh(), nn.Linear(32, 3))
student = nn.Sequential(nn.Linear(D_IN, 8), nn.ReLU(), nn.Linear(8, 3))
teacher.eval()
t_opt = torch.optim.Adam(teacher.parameters(), lr=0.01)
for _ in range(20):
    t_opt.zero_grad()
    F.cross_entropy(teacher(data), labels).backward()
    t_opt.step()
kl = nn.KLDivLoss(reduction="batchmean")
kl_log = nn.KLDivLoss(reduction="batchmean", log_target=True)
s_opt = torch.optim.Adam(student.parameters(), lr=0.02, amsgrad=True)
T, alpha = 3.0, 0.7
for epoch in range(15):
    with torch.no_grad():
        t_logits = teacher(data)
    s_logits = student(data)
    soft_loss = kl(F.log_softmax(s_logits / T, 1), F.softmax(t_logits / T, 1)) * T * T
    soft_log = kl_log(F.log_softmax(s_logits / T, 1), F.log_softmax(t_logits / T, 1)) * T * T
    hard = F.cross_entropy(s_logits, labels)
    loss = alpha * soft_loss + (1 - alpha) * hard
    s_opt.zero_grad()
    loss.backward()
    s_opt.step()
    if epoch % 5 == 0:
        print(f"kd {epoch} soft {soft_loss.item():.6f} log_target {soft_log.item():.6f} "
              f"hard {hard.item():.6f}")
with torch.no_grad():
    acc_t = (teacher(data).argmax(1) == labels).float().mean()
    acc_s = (student(data).argmax(1) == labels).float().mean()
    agree = (teacher(data).argmax(1) == student(data).argmax(1)).sum()
print("teacher acc", acc_t.item(), "student acc", acc_s.item(), "agree", agree.item())
for red in ("none", "sum", "mean", "batchmean"):
    v = F.kl_div(torch.log_softmax(torch.tensor([[1.0, 2.0], [0.0, 0.0]]), 1),
                 torch.tensor([[0.3, 0.7], [0.5, 0.5]]), reduction=red)
    print("kl_div", red, v.tolist() if v.dim() else round(v.item(), 6))
