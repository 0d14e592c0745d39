"""A graph neural network without torch.sparse: GCN and GraphSAGE-style message passing
with index_add_, scatter_add, scatter_reduce (mean/amax) and degree normalisation,
trained for node classification, then a graph-level readout."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N, D, C = 10, 6, 3
src = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 2, 4, 6, 8, 1])
dst = torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 5, 7, 9, 1, 3, 6])
edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])  # undirected
x = torch.randn(N, D)
y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])
train_mask = torch.zeros(N, dtype=torch.bool)
train_mask[:7] = True
print("edges", edge_index.shape, edge_index.dtype, "nodes", x.shape)


def gcn_norm(edge_index, num_nodes):
    loops = torch.arange(num_nodes)
    row = torch.cat([edge_index[0], loops])
    col = torch.cat([edge_index[1], loops])
    deg = torch.zeros(num_nodes).index_add_(0, col, torch.ones(col.numel()))
    dinv = deg.pow(-0.5)
    dinv.masked_fill_(dinv == float("inf"), 0.0)
    return row, col, dinv[row] * dinv[col], deg


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, x, row, col, w):
        h = self.lin(x)
        msg = h.index_select(0, row) * w.unsqueeze(-1)
        out = torch.zeros_like(h).index_add(0, col, msg)
        return out + self.bias


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out, aggr):
        super().__init__()
        self.aggr = aggr
        self.lin_self = nn.Linear(d_in, d_out)
        self.lin_neigh = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x, edge_index):
        row, col = edge_index
        idx = col.unsqueeze(-1).expand(-1, x.size(1))
        msgs = x[row]
        if self.aggr == "sum":
            agg = torch.zeros_like(x).scatter_add(0, idx, msgs)
        else:
            agg = torch.zeros_like(x).scatter_reduce(0, idx, msgs, reduce=self.aggr, include_self=False)
        return self.lin_self(x) + self.lin_neigh(agg)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gcn = GCNLayer(D, 8)
        self.sage = SAGELayer(8, 8, "mean")
        self.sage_max = SAGELayer(8, 8, "amax")
        self.out = nn.Linear(8, C)
        self.drop = nn.Dropout(0.0)

    def forward(self, x, edge_index, norm):
        h = F.relu(self.gcn(x, *norm))
        h = self.drop(F.elu(self.sage(h, edge_index)))
        h = F.leaky_relu(self.sage_max(h, edge_index), 0.1)
        return self.out(h)


row, col, w, deg = gcn_norm(edge_index, N)
print("degree", deg.tolist())
print("norm weights", w.shape, round(w.sum().item(), 6))
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
for epoch in range(25):
    model.train()
    opt.zero_grad()
    logits = model(x, edge_index, (row, col, w))
    loss = F.cross_entropy(logits[train_mask], y[train_mask])
    loss.backward()
    opt.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch} loss {loss.item():.6f} grad_fn {type(loss.grad_fn).__name__}")

model.eval()
with torch.no_grad():
    pred = model(x, edge_index, (row, col, w)).argmax(dim=1)
acc_train = (pred[train_mask] == y[train_mask]).float().mean().item()
acc_test = (pred[~train_mask] == y[~train_mask]).float().mean().item()
print("pred", pred.tolist(), "train acc", acc_train, "test acc", acc_test)

# graph-level readout: two graphs in one batch, mean and max pooling per graph
batch = torch.tensor([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
h = model.gcn(x, row, col, w)
counts = torch.bincount(batch, minlength=2).to(h.dtype)
mean_pool = torch.zeros(2, h.size(1)).index_add_(0, batch, h) / counts.unsqueeze(1)
max_pool = torch.full((2, h.size(1)), float("-inf")).scatter_reduce(
    0, batch.unsqueeze(1).expand_as(h), h, reduce="amax", include_self=True)
readout = torch.cat([mean_pool, max_pool], dim=1)
g = readout.square().sum()
g.backward()
print("readout", readout.shape, round(g.item(), 5), type(readout.grad_fn).__name__)
print("gcn weight grad norm", round(model.gcn.lin.weight.grad.norm().item(), 5))
prod_pool = torch.ones(2, 3).scatter_reduce(0, torch.tensor([[0, 1, 0], [1, 0, 1]]), torch.tensor([[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]]), "prod")
print("prod pool", prod_pool.tolist())
params = sum(p.numel() for p in model.parameters())
print("params", params, "norm", round(torch.cat([p.detach().flatten() for p in model.parameters()]).norm().item(), 5))
