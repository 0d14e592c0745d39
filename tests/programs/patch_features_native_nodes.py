"""A patch-feature model (unfold -> linear -> fold, as in a patch-based denoiser) trained
a few steps with a double-backward penalty: losses, gradient norms and the grad_fn names
of the layers, which must be the reference's nodes (Im2Col/Col2Im, circular padding's CopySlices, ...)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PatchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = nn.Linear(2 * 9, 2 * 9)
        self.head = nn.Linear(4, 3)
        self.bag = nn.EmbeddingBag(7, 3, mode="max", padding_idx=0)
        self.words = torch.tensor([3, 1, 0, 6, 2, 2, 5, 0, 4])

    def forward(self, img, trace=None):
        steps = []
        cols = F.unfold(img, 3, padding=1, stride=(1, 2)); steps.append(("unfold", cols))
        mixed = self.mix(cols.transpose(1, 2)).transpose(1, 2)
        back = F.fold(torch.tanh(mixed), (5, 6), 3, padding=1, stride=(1, 2))
        steps.append(("fold", back))
        d = F.unfold(back[0], (2, 3), dilation=(2, 1)); steps.append(("unfold unbatched", d))
        wrap = F.pad(back, (1, 2, 2, -1), mode="circular"); steps.append(("circular", wrap))
        pooled, idx = F.max_pool2d(wrap, 2, return_indices=True)
        up = F.max_unpool2d(pooled, idx, 2, output_size=wrap.shape[-2:]); steps.append(("unpool2d", up))
        p1, i1 = F.max_pool1d(up.flatten(2), 3, return_indices=True)
        up1 = F.max_unpool1d(p1 * 2, i1, 3, output_size=(up.shape[2] * up.shape[3],))
        steps.append(("unpool1d", up1))
        rows = up1.flatten(1)
        # (on weights: the reference has no double backward through pdist, and the
        # penalty below differentiates the gradient with respect to the image)
        dists = F.pdist(self.mix.weight[:5], 1.5); steps.append(("pdist", dists))
        near = F.pairwise_distance(rows, rows.flip(0), p=3, eps=0.1, keepdim=True)
        steps.append(("pairwise_distance", near))
        theta = torch.cat([torch.eye(2).expand(3, 2, 2) * 0.9, self.head.weight[:, :1, None]
                           .expand(3, 2, 1) * 0.1], 2)
        grid = F.affine_grid(theta, (3, 2, 4, 5), align_corners=False)
        steps.append(("affine_grid", grid))
        warped = F.grid_sample(back, grid, align_corners=False)
        bags = self.bag(self.words, torch.tensor([0, 4, 4]))        # (the middle bag: empty)
        summed = F.embedding_bag(self.words, self.bag.weight, torch.tensor([0, 2, 6]),
                                 mode="sum", per_sample_weights=torch.linspace(0.5, 1.5, 9))
        steps += [("embedding_bag max", bags), ("embedding_bag sum", summed)]
        if trace is not None:
            trace.extend((name, type(t.grad_fn).__name__) for name, t in steps)
        feats = torch.stack([back.mean((1, 2, 3)), back.std((1, 2, 3)),
                             cols.amax((1, 2)) + wrap.std((1, 2, 3)) + up1.mean((1, 2)),
                             d.mean() + 0.1 * torch.tanh(dists.mean() - near[:, 0])
                             + (bags + summed).mean(1) + warped.mean((1, 2, 3))], 1)
        return self.head(feats)


net = PatchNet()
opt = torch.optim.SGD(net.parameters(), lr=0.3, momentum=0.9)
img = torch.randn(3, 2, 5, 6)
target = torch.tensor([0, 2, 1])
for step in range(3):
    trace = []
    img_in = img.clone().requires_grad_()
    logits = net(img_in, trace if step == 0 else None)
    loss = F.cross_entropy(logits, target)
    g, = torch.autograd.grad(loss, img_in, create_graph=True)
    # hinge losses outside the penalty: the reference has no double backward for them
    hinges = [F.multi_margin_loss(logits, target, p=2, margin=0.5, weight=torch.tensor([1., 2., 1.5])),
              F.multilabel_margin_loss(logits, torch.tensor([[0, -1, 1], [2, 1, -1], [1, 0, 2]])),
              F.soft_margin_loss(logits, torch.tensor([[1., -1, 1], [-1, 1, -1], [1, 1, -1]])),
              F.multilabel_soft_margin_loss(logits, (target[:, None] == torch.arange(3)).float())]
    if step == 0:
        print("hinges", [type(h.grad_fn).__name__ for h in hinges], [f"{h.item():.5f}" for h in hinges])
    total = loss + 0.1 * g.pow(2).sum() + 0.1 * sum(hinges)
    opt.zero_grad()
    total.backward()
    grads = [f"{p.grad.norm().item():.4g}" for p in net.parameters()]
    opt.step()
    if step == 0:
        for name, node in trace:
            print(name, node)
    print(f"step {step} loss {loss.item():.5f} penalty {g.pow(2).sum().item():.5g} grads {grads}")
with torch.no_grad():
    print("eval", [f"{v:.4g}" for v in net(img)[0].tolist()])
