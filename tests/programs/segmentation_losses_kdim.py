"""Per-pixel and per-timestep classification: a tiny fully-convolutional segmenter and
a 1-d tagger trained with K-dimensional cross_entropy (ignore_index=255 borders, class
weights, label smoothing), the loss graph they record, Dice + CE, and soft targets."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fill_(module, scale):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.7 + i)
                    .reshape(p.shape) * scale)


def chain(t, n=4):
    names, node = [], t.grad_fn
    while node is not None and len(names) < n:
        names.append(node.name().split("::")[-1])
        node = next((f for f, _ in node.next_functions if f is not None), None)
    return names


seg = nn.Sequential(nn.Conv2d(2, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 4, 1))
fill_(seg, 0.2)
images = torch.sin(torch.arange(2 * 2 * 6 * 6, dtype=torch.float32) * 0.37).reshape(2, 2, 6, 6)
masks = (torch.arange(2 * 6 * 6).reshape(2, 6, 6) * 7 % 4)
masks[:, 0, :] = 255                          # unlabeled border rows
masks[:, :, -1] = 255
weights = torch.tensor([0.5, 1.0, 2.0, 1.5])

logits = seg(images)
for kw in [dict(ignore_index=255), dict(ignore_index=255, weight=weights),
           dict(ignore_index=255, label_smoothing=0.1),
           dict(ignore_index=255, reduction="none")]:
    loss = F.cross_entropy(logits, masks, **kw)
    shown = loss if loss.dim() == 0 else loss.sum()
    print(sorted(kw), f"{shown.item():.6f}", tuple(loss.shape), chain(loss))

opt = torch.optim.Adam(seg.parameters(), lr=0.05)
criterion = nn.CrossEntropyLoss(weight=weights, ignore_index=255, label_smoothing=0.05)


def dice_loss(logits, target, eps=1.0):
    valid = (target != 255).unsqueeze(1)
    probs = logits.softmax(1) * valid
    onehot = F.one_hot(target.clamp(max=3), 4).permute(0, 3, 1, 2).float() * valid
    inter = (probs * onehot).sum((0, 2, 3))
    return 1 - ((2 * inter + eps) / (probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3)) + eps)).mean()


for step in range(5):
    opt.zero_grad()
    out = seg(images)
    ce = criterion(out, masks)
    dice = dice_loss(out, masks)
    (ce + dice).backward()
    opt.step()
    pred = out.argmax(1)
    labeled = masks != 255
    acc = (pred[labeled] == masks[labeled]).float().mean()
    print(f"step {step} ce {ce.item():.6f} dice {dice.item():.6f} acc {acc.item():.4f}")

# a 1-d tagger: (N, C, T) logits, (N, T) tags, padding marked with -100
tagger = nn.Conv1d(3, 5, kernel_size=3, padding=1)
fill_(tagger, 0.3)
seq = torch.cos(torch.arange(2 * 3 * 7, dtype=torch.float32) * 0.5).reshape(2, 3, 7)
tags = torch.tensor([[0, 1, 4, 2, 3, -100, -100], [2, 2, 1, 0, 4, 3, 1]])
tag_logits = tagger(seq)
loss = F.cross_entropy(tag_logits, tags)
print("tagger", f"{loss.item():.6f}", chain(loss, 3))
per_step = F.cross_entropy(tag_logits, tags, reduction="none")
print("per step", tuple(per_step.shape), chain(per_step, 3),
      [round(v, 5) for v in per_step[0].tolist()])
loss.backward()
print("tagger grad", f"{tagger.weight.grad.norm().item():.6f}", f"{tagger.bias.grad.sum().item():.6f}")

# same loss through log_softmax + NLLLoss, and volumetric (5-d) logits
nll = nn.NLLLoss()(F.log_softmax(tag_logits, 1), tags)
print("nll matches", torch.allclose(nll, loss))
vol = torch.linspace(-1, 1, 2 * 3 * 2 * 2 * 3).reshape(2, 3, 2, 2, 3).requires_grad_()
vol_t = torch.arange(2 * 2 * 2 * 3).reshape(2, 2, 2, 3) % 3
vloss = F.cross_entropy(vol, vol_t, weight=torch.tensor([1.0, 0.2, 3.0]))
vloss.backward()
print("volume", f"{vloss.item():.6f}", chain(vloss, 3), f"{vol.grad.abs().sum().item():.6f}")

# soft targets (probabilities per pixel) with label smoothing
soft = F.softmax(torch.linspace(-2, 2, 2 * 4 * 6 * 6).reshape(2, 4, 6, 6), 1)
soft_loss = F.cross_entropy(seg(images), soft, label_smoothing=0.2)
print("soft", f"{soft_loss.item():.6f}", chain(soft_loss, 3))

# what the loss node keeps for backward
packed = []
with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(tuple(t.shape)) or t,
                                              lambda t: t):
    loss = F.cross_entropy(tag_logits.detach().requires_grad_(), tags)
print("packed", packed)
try:
    F.cross_entropy(tag_logits, tags[:, :5])
except RuntimeError as e:
    print("RuntimeError:", e)
