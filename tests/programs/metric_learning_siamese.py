"""Metric learning: a small embedding net (PReLU, GLU) trained with triplet, custom-distance
triplet and cosine-embedding losses; distances with cdist / pairwise_distance."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CLASSES, PER, DIM = 4, 6, 10
# float64 draws: float32 normals of 16+ elements go through vectorized float32 math
centers = 2.0 * torch.randn(CLASSES, DIM, dtype=torch.float64)
data = centers.repeat_interleave(PER, 0) + 0.7 * torch.randn(CLASSES * PER, DIM, dtype=torch.float64)
labels = torch.arange(CLASSES).repeat_interleave(PER)


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM, 32)
        self.act = nn.PReLU(num_parameters=32, init=0.2)
        self.gate = nn.Sequential(nn.Linear(32, 16), nn.GLU(dim=-1))
        self.fc2 = nn.Linear(8, 4)

    def forward(self, x):
        return F.normalize(self.fc2(self.gate(self.act(self.fc1(x)))), p=2, dim=1)


def triplets(step):
    a = (torch.arange(8) * 5 + step) % data.size(0)
    same = labels[a] * PER + (a + 1 + step) % PER
    other = ((labels[a] + 1 + step % (CLASSES - 1)) % CLASSES) * PER + (a + step) % PER
    return data[a], data[same], data[other]


net = Embed().double()
print(net)
triplet = nn.TripletMarginLoss(margin=0.5, p=2, swap=True)
l1_dist = lambda x, y: (x - y).abs().sum(-1)  # noqa: E731
custom = nn.TripletMarginWithDistanceLoss(distance_function=l1_dist, margin=0.3)
cosine = nn.CosineEmbeddingLoss(margin=0.1)
print(triplet, custom, cosine, sep="\n")
opt = torch.optim.Rprop(net.parameters(), lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-5, 1.0))
opt2 = torch.optim.Adamax(net.act.parameters(), lr=0.05)
for step in range(20):
    a, pos, neg = (net(t) for t in triplets(step))
    sign = torch.where(torch.arange(8) % 2 == 0, 1, -1)
    l_cos = cosine(a, torch.where(sign[:, None] > 0, pos, neg), sign)
    # the L2 term keeps gradients away from 0, where Rprop's signs would follow roundoff
    l2 = sum(p.pow(2).sum() for p in net.parameters())
    loss = triplet(a, pos, neg) + custom(a, pos, neg) + 0.5 * l_cos + 1e-3 * l2
    opt.zero_grad()
    opt2.zero_grad()
    loss.backward()
    opt.step()
    opt2.step()
    if step % 4 == 0 or step == 19:
        print(f"step {step:2d} loss {loss.item():.6f} cos {l_cos.item():.6f}")
print("prelu weight[:4]:", [f"{w:.5f}" for w in net.act.weight[:4].tolist()])
print("rprop state keys:", sorted(opt.state[net.fc1.weight].keys()))
print("adamax state keys:", sorted(opt2.state[net.act.weight].keys()))

with torch.no_grad():
    emb = net(data)
for p in (1.0, 2.0, float("inf")):
    d = torch.cdist(emb, emb, p=p)
    print(f"cdist p={p}: shape {tuple(d.shape)} diag {d.diagonal().abs().max().item():.2e}"
          f" sum {d.sum().item():.5f}")
for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist"):
    print(mode, f"{torch.cdist(emb[:5], emb[5:9], compute_mode=mode).sum().item():.6f}")
batched = torch.cdist(emb.reshape(4, 6, 4), emb.reshape(4, 6, 4)[:, :3])
print("batched cdist", tuple(batched.shape), f"{batched.mean().item():.6f}")
within = batched.reshape(4, -1).mean(1)
print("within-class mean distances:", [f"{v:.4f}" for v in within.tolist()])
nearest = torch.cdist(emb, F.normalize(emb.reshape(4, 6, 4).mean(1), dim=1)).argmin(1)
print("nearest-center accuracy:", (nearest == labels).float().mean().item())
pd = F.pairwise_distance(emb[:6], emb[6:12], p=1.5, eps=1e-6, keepdim=True)
print("pairwise_distance", tuple(pd.shape), [f"{v:.5f}" for v in pd.flatten().tolist()])
print("cosine_similarity", [f"{v:.5f}" for v in F.cosine_similarity(emb[:3], emb[3:6]).tolist()])

# gradients of cdist, including coincident points (zero distance)
x = data[:5, :3].clone().requires_grad_()
y = torch.cat([data[:2, :3], data[10:12, :3]]).requires_grad_()
for p in (1.0, 2.0, 3.0, float("inf")):
    gx, gy = torch.autograd.grad(torch.cdist(x, y, p=p).sum(), (x, y))
    print(f"p={p} gx[0] {[round(v, 5) for v in gx[0].tolist()]} gy sum {gy.sum().item():.5f}")
print("grad_fn:", type(torch.cdist(x, y).grad_fn).__name__)
print("functional losses:",
      f"{F.triplet_margin_loss(emb[:4], emb[4:8], emb[8:12], margin=1.0, p=1, reduction='sum').item():.5f}",
      [f"{v:.5f}" for v in F.cosine_embedding_loss(emb[:3], emb[3:6], torch.tensor([1, -1, 1]),
                                                   reduction="none").tolist()],
      f"{F.triplet_margin_with_distance_loss(emb[:4], emb[4:8], emb[8:12], swap=True).item():.5f}")
try:
    torch.cdist(emb, emb[:, :3])
except RuntimeError as e:
    print("RuntimeError:", e)
