"""A custom map-style Dataset of dict samples with a custom collate_fn (padding), the
default collate of numbers, NumPy arrays, named tuples and strings, the dataset
combinators and samplers, and the reference's errors for conflicting options."""
import collections

import numpy as np
import torch
from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                              SequentialSampler, StackDataset, Subset,
                              WeightedRandomSampler, default_collate, default_convert)


class Sentences(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"ids": torch.arange(i % 4 + 1) + 10 * i, "label": i % 2, "text": f"s{i}"}


def pad_collate(batch):
    longest = max(len(s["ids"]) for s in batch)
    ids = torch.zeros(len(batch), longest, dtype=torch.long)
    for row, sample in enumerate(batch):
        ids[row, :len(sample["ids"])] = sample["ids"]
    return ids, torch.tensor([s["label"] for s in batch]), [s["text"] for s in batch]


loader = DataLoader(Sentences(7), batch_size=3, collate_fn=pad_collate)
for ids, labels, texts in loader:
    print(ids.tolist(), labels, texts)
print("len", len(loader))

Point = collections.namedtuple("Point", "x y")
print(default_collate([1, 2, 3]), default_collate([1.5, 2.5]), default_collate([True, False]))
print(default_collate([np.float32(1.0), np.float32(2.5)]), default_collate([np.int16(4), np.int16(5)]))
print(default_collate([np.arange(3), np.arange(3)]))
print(default_collate([Point(1, 2.0), Point(3, 4.0)]))
print(default_collate([{"a": [1, 2], "b": "x"}, {"a": [3, 4], "b": "y"}]))
print(default_collate([(torch.ones(2), "p"), (torch.zeros(2), "q")]))
print(default_convert({"x": np.array([1.0, 2.0]), "t": (np.int32(3), "a"), "s": np.array(["u"])}))
for bad in ([object(), object()], [[1, 2], [3]], [np.array(["a"]), np.array(["b"])],
            [torch.ones(2), torch.ones(3)]):
    try:
        default_collate(bad)
    except (TypeError, RuntimeError) as e:
        print(type(e).__name__, e)

data = torch.arange(10.0)
combined = ConcatDataset([Subset(data, [9, 8, 7]), data[:2]])
print(len(combined), combined.cumulative_sizes, [float(combined[i]) for i in range(-5, 5)])
stacked = StackDataset(x=data, y=data * 2)
print(next(iter(DataLoader(stacked, batch_size=4))))
print(list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)))
print(list(DataLoader(data, batch_sampler=BatchSampler(range(5), 2, True))))
print(list(DataLoader(data, sampler=[3, 1, 4], batch_size=2)))
print(list(WeightedRandomSampler([0.0, 0.0, 1.0], 3)))
print(list(WeightedRandomSampler(torch.tensor([0.0, 5.0]), 1, replacement=False)))

for kwargs in (dict(batch_sampler=[[0]], batch_size=2), dict(sampler=[0], shuffle=True),
               dict(batch_size=None, drop_last=True), dict(num_workers=-1), dict(timeout=-1),
               dict(prefetch_factor=2), dict(persistent_workers=True),
               dict(multiprocessing_context="fork")):
    try:
        DataLoader(data, **kwargs)
    except ValueError as e:
        print("ValueError:", e)
for args in ((range(3), 0, False), (range(3), 2, 1)):
    try:
        BatchSampler(*args)
    except ValueError as e:
        print("ValueError:", e)
try:
    WeightedRandomSampler([[1.0, 2.0]], 2)
except ValueError as e:
    print("ValueError:", e)
loader = DataLoader(data)
try:
    loader.batch_size = 4
except ValueError as e:
    print("ValueError:", e)
