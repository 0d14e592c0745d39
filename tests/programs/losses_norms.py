"""Losses and normalizations with their gradients."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
logits = torch.tensor([[1.0, 2.0, 0.5, -1.0], [0.1, -0.3, 2.2, 0.0], [-1.0, 0.0, 1.0, 3.0]], requires_grad=True)
target = torch.tensor([1, 2, 3])
probs_t = torch.softmax(torch.tensor([[0.0, 1.0, 0.0, 2.0]] * 3), dim=1)
reg_pred = torch.linspace(-1, 2, 6, requires_grad=True)
reg_target = torch.tensor([0.0, 0.5, 0.5, 1.0, 3.0, -1.0])

losses = {
    "ce": F.cross_entropy(logits, target),
    "ce_smooth": F.cross_entropy(logits, target, label_smoothing=0.1),
    "ce_weight": F.cross_entropy(logits, target, weight=torch.tensor([1.0, 2.0, 0.5, 1.0])),
    "ce_probs": F.cross_entropy(logits, probs_t),
    "ce_sum": nn.CrossEntropyLoss(reduction="sum")(logits, target),
    "nll": F.nll_loss(F.log_softmax(logits, 1), target),
    "bce": F.binary_cross_entropy(torch.sigmoid(reg_pred), (reg_target > 0.4).double()),
    "bce_logits": F.binary_cross_entropy_with_logits(reg_pred, (reg_target > 0.4).double(), pos_weight=torch.tensor(2.0)),
    "mse": F.mse_loss(reg_pred, reg_target),
    "l1": F.l1_loss(reg_pred, reg_target, reduction="sum"),
    "smooth_l1": F.smooth_l1_loss(reg_pred, reg_target, beta=0.5),
    "huber": nn.HuberLoss(delta=0.8)(reg_pred, reg_target),
    "kl": F.kl_div(F.log_softmax(logits, 1), probs_t, reduction="batchmean"),
    "cosine": F.cosine_similarity(logits[0], logits[1], dim=0),
    "margin": F.margin_ranking_loss(reg_pred[:3], reg_pred[3:], torch.tensor([1.0, -1.0, 1.0])),
}
for name, value in losses.items():
    (g,) = torch.autograd.grad(value, logits if name.startswith("ce") or name in ("nll", "kl", "cosine") else reg_pred)
    print(f"{name:10s} {value.item():.10f} grad-sum {g.sum().item():.10f} grad-norm {g.norm().item():.10f}")

x = torch.linspace(-2, 3, 2 * 3 * 4).reshape(2, 3, 4).requires_grad_()
ln = F.layer_norm(x, (4,), weight=torch.tensor([1.0, 0.5, 2.0, 1.0]), bias=torch.zeros(4))
bn_mean, bn_var = torch.zeros(3), torch.ones(3)
bn = F.batch_norm(x, bn_mean, bn_var, training=True, momentum=0.1)
gn = F.group_norm(x, 3)
inn = F.instance_norm(x)
nrm = F.normalize(x, dim=-1)
print("running stats", bn_mean, bn_var)
total = (ln ** 3).sum() + (bn * x).sum() + gn[:, 0].sum() + (inn ** 2).mean() + nrm[0, 0].sum()
total.backward()
print("norm grads", x.grad)
ln_mod = nn.LayerNorm([3, 4], elementwise_affine=False)
print("layernorm module", ln_mod(x.detach())[1, 2])
rms = x.detach().pow(2).mean(-1, keepdim=True).add(1e-6).rsqrt() * x.detach()
print("rms", rms[0])
