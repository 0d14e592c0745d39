"""Train a small convolutional network on scikit-learn's digits (8x8 images) with
chainrule.nn and chainrule.optim: the way torch programs are written.

Run: ./bazelw run //examples:train_digits_cnn   (or: python examples/train_digits_cnn.py)

Conv2d -> ReLU -> MaxPool2d, twice, then Dropout and two Linear layers; Adam with a
cosine learning-rate schedule; a progress bar per epoch; the test accuracy after each
epoch (above 0.97 at the end).
"""
import argparse

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import chainrule as cr
from chainrule import nn, optim


def load_data(seed):
    """Images as (N, 1, 8, 8) float32 in [0, 1], labels as int64; a stratified split."""
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    return train_test_split(x, digits.target.astype(np.int64), test_size=0.25,
                            random_state=seed, stratify=digits.target)


class DigitsCNN(nn.Module):
    """Two conv blocks (8x8 -> 4x4 -> 2x2), then a small classifier head."""

    def __init__(self, dropout=0.25):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Dropout(dropout), nn.Linear(32 * 2 * 2, 64), nn.ReLU(),
            nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def accuracy(model, x, y):
    model.eval()
    with cr.no_grad():
        predictions = model(cr.from_numpy(x)).numpy().argmax(axis=1)
    model.train()
    return float((predictions == y).mean())


def train_epoch(model, optimizer, loss_fn, x, y, batch_size, rng, desc):
    order = rng.permutation(len(x))
    bar = tqdm(range(0, len(order), batch_size), desc=desc, unit="batch", leave=True)
    total = 0.0
    for start in bar:
        idx = order[start:start + batch_size]
        optimizer.zero_grad()
        loss = loss_fn(model(cr.from_numpy(x[idx])), cr.from_numpy(y[idx]))
        loss.backward()
        optimizer.step()
        total += loss.item() * len(idx)
        bar.set_postfix(loss=f"{loss.item():.4f}", refresh=False)
    bar.close()
    return total / len(x)


def train(epochs, batch_size, lr, seed):
    x_train, x_test, y_train, y_test = load_data(seed)
    cr.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = DigitsCNN()
    optimizer = optim.Adam(model.parameters(), lr=lr)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, epochs + 1):
        loss = train_epoch(model, optimizer, loss_fn, x_train, y_train, batch_size, rng,
                           f"epoch {epoch:2d}/{epochs}")
        scheduler.step()
        print(f"epoch {epoch:2d}: train loss {loss:.4f}, lr {scheduler.get_last_lr()[0]:.5f}, "
              f"test accuracy {accuracy(model, x_test, y_test):.4f}")
    return accuracy(model, x_test, y_test)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=0.97,
                        help="exit with status 1 if the final test accuracy is lower")
    args = parser.parse_args()
    acc = train(args.epochs, args.batch_size, args.lr, args.seed)
    print(f"final test accuracy: {acc:.4f}")
    if acc < args.min_accuracy:
        raise SystemExit(f"test accuracy {acc:.4f} is below {args.min_accuracy}")


if __name__ == "__main__":
    main()
