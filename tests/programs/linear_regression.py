"""Linear regression with a hand-written SGD loop, then with nn.Linear + optim.SGD."""
import torch

X = torch.linspace(-2.0, 2.0, 40).reshape(20, 2)
true_w = torch.tensor([[2.0], [-3.4]])
y = X @ true_w + 4.2 + 0.01 * torch.sin(torch.arange(20.0)).reshape(20, 1)

w = torch.zeros(2, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.05
for epoch in range(30):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}, loss {loss.item():.6f}")
print("w", w.detach().flatten().tolist(), "b", round(b.item(), 5))

model = torch.nn.Linear(2, 1)
with torch.no_grad():
    model.weight.fill_(0.0)
    model.bias.fill_(0.0)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = torch.nn.MSELoss()
for epoch in range(40):
    opt.zero_grad()
    loss = loss_fn(model(X), y)
    loss.backward()
    opt.step()
print(f"nn loss {loss.item():.6f}")
print("weight", model.weight.data, "bias", model.bias.data)
