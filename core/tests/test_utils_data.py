"""chainrule.utils.data: datasets, samplers, collate functions and DataLoader, with
the reference's results and error messages (checked against torch 2.13)."""
import collections
import dataclasses
import multiprocessing
import random
import time
import types
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader,
                                  Dataset, IterableDataset, RandomSampler, Sampler,
                                  SequentialSampler, StackDataset, Subset,
                                  SubsetRandomSampler, TensorDataset,
                                  WeightedRandomSampler, default_collate, default_convert,
                                  get_worker_info, random_split)
from chainrule.utils.data._utils.collate import collate, default_collate_fn_map
from chainrule.utils.data._utils.worker import WorkerInfo

Point = collections.namedtuple("Point", "x y")


class KeywordMapping(collections.abc.Mapping):
    """A read-only mapping that cannot be rebuilt from a dict (collate falls back to dict)."""

    def __init__(self, *, data):
        self._data = data

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


class Stream(IterableDataset):
    """Yields ``items``; splits them between workers when ``split``."""

    def __init__(self, items, length=None, split=False):
        self.items, self.length, self.split = list(items), length, split

    def __iter__(self):
        info = get_worker_info()
        if self.split and info is not None:
            return iter(self.items[info.id::info.num_workers])
        return iter(self.items)

    def __len__(self):
        if self.length is None:
            raise TypeError("no length")
        return self.length


class Picky(Exception):
    """An exception that cannot be built from one message."""

    def __init__(self, a, b):
        super().__init__(a, b)


class Squares(Dataset):
    def __init__(self, n=5):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * i


def _values(batches):
    return [b.tolist() for b in batches]


# --- datasets ---------------------------------------------------------------------------
def test_dataset_base_needs_getitem_and_adds_to_concat():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__."):
        Dataset()[0]
    both = Squares(2) + Squares(3)
    assert isinstance(both, ConcatDataset) and [both[i] for i in range(5)] == [0, 1, 0, 1, 4]
    assert Dataset[int] is not None                      # generic, like the reference


def test_iterable_dataset_is_abstract_and_adds_to_chain():
    with pytest.raises(TypeError, match="abstract method __iter__"):
        IterableDataset()
    chained = Stream([1]) + Stream([2, 3])
    assert isinstance(chained, ChainDataset) and list(chained) == [1, 2, 3]


def test_tensor_dataset():
    x, y = cr.arange(6.0).reshape(3, 2), cr.tensor([7, 8, 9])
    ds = TensorDataset(x, y)
    assert len(ds) == 3 and ds.tensors == (x, y)
    assert ds[2][0].tolist() == [4.0, 5.0] and ds[2][1].item() == 9
    assert ds[1:][0].shape == (2, 2)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(cr.zeros(3), cr.zeros(4))


def test_stack_dataset_tuple_and_dict():
    ds = StackDataset([1, 2, 3], "abc")
    assert len(ds) == 3 and ds[1] == (2, "b")
    keyed = StackDataset(n=[1, 2], s=Subset("xyz", [2, 0]))
    assert keyed[0] == {"n": 1, "s": "z"}
    assert keyed.__getitems__([1, 0]) == [{"n": 2, "s": "x"}, {"n": 1, "s": "z"}]
    assert ds.__getitems__([2]) == [(3, "c")]


def test_stack_dataset_errors():
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset([1], [1, 2])
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(a=[1], b=[1, 2])
    with pytest.raises(ValueError, match=r"^Supported either ``tuple``- \(via ``args``\) or``dict``"):
        StackDataset([1], b=[2])

    class Short(Dataset):
        def __len__(self):
            return 2

        def __getitems__(self, indices):
            return [0]
    with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 2, got 1"):
        StackDataset(Short()).__getitems__([0, 1])


def test_concat_dataset_indexing():
    ds = ConcatDataset([[1, 2, 3], (10, 20)])
    assert len(ds) == 5 and ds.cumulative_sizes == [3, 5]
    assert [ds[i] for i in range(-5, 5)] == [1, 2, 3, 10, 20] * 2
    assert ConcatDataset.cumsum([[1], [2, 3]]) == [1, 3]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ds[-6]
    with pytest.raises(IndexError):
        ds[5]
    with pytest.warns(FutureWarning, match="`cummulative_sizes` attribute is renamed"):
        assert ds.cummulative_sizes == [3, 5]


def test_concat_dataset_errors():
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([[1], Stream([2])])


def test_chain_dataset():
    ds = ChainDataset([Stream([1, 2], length=2), Stream([3], length=1)])
    assert list(ds) == [1, 2, 3] and len(ds) == 3
    bad = ChainDataset([Stream([1]), [2]])
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(bad)
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        len(ChainDataset([[2]]))


def test_subset():
    s = Subset("abcdef", [5, 1, 3])
    assert len(s) == 3 and s[0] == "f" and s.__getitems__([2, 0]) == ["d", "f"]
    data = cr.arange(10.0)
    assert Subset(data, [4, 2])[[1, 0]].tolist() == [2.0, 4.0]       # list index: one lookup
    nested = Subset(Subset(list("abcdef"), [5, 4, 3]), [2, 0])
    assert nested.__getitems__([0, 1]) == ["d", "f"]


def test_subset_subclass_must_override_getitems_with_getitem():
    class Doubled(Subset):
        def __getitem__(self, idx):
            return 2 * super().__getitem__(idx)
    with pytest.raises(NotImplementedError, match="Doubled overrides __getitem__ but not __getitems__"):
        Doubled([1, 2], [0])

    class Fine(Doubled):
        def __getitems__(self, indices):
            return [self[i] for i in indices]
    assert list(DataLoader(Fine([1, 2], [1, 0]), batch_size=2))[0].tolist() == [4, 2]


def test_random_split_counts_and_generator():
    parts = random_split(range(10), [3, 7], generator=cr.Generator().manual_seed(4))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(range(10), [3, 7], generator=cr.Generator().manual_seed(4))
    assert again[0].indices == parts[0].indices
    cr.manual_seed(2)
    first = random_split(range(10), [5, 5])[0].indices
    cr.manual_seed(2)
    assert random_split(range(10), [5, 5])[0].indices == first       # the default generator


@pytest.mark.parametrize("fractions, sizes", [
    ([0.5, 0.3, 0.2], [15, 9, 6]),
    ([0.33, 0.33, 0.34], [10, 10, 10]),
    ([0.1, 0.1, 0.8], [3, 3, 24]),
    ([1 / 3, 1 / 3, 1 / 3], [10, 10, 10]),
])
def test_random_split_fraction_sizes(fractions, sizes):
    assert [len(p) for p in random_split(range(30), fractions)] == sizes


def test_random_split_remainders_go_round_robin():
    assert [len(p) for p in random_split(range(7), [0.25, 0.25, 0.25, 0.25])] == [2, 2, 2, 1]


def test_random_split_errors_and_warning():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        random_split(range(7), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        random_split(range(7), [0.5, -0.5, 1.0])
    with pytest.warns(UserWarning, match="Length of split at index 0 is 0. This might result in an empty dataset."):
        parts = random_split(range(3), [0.0, 1.0])
    assert [len(p) for p in parts] == [0, 3]


# --- samplers ---------------------------------------------------------------------------
def test_namespace_is_the_reference_one():
    import chainrule.utils.data as data
    assert set(data.__all__) <= set(dir(data))
    assert data.dataloader.default_collate is default_collate
    assert data.dataloader.get_worker_info is get_worker_info


def test_sampler_base():
    with pytest.raises(NotImplementedError):
        iter(Sampler())
    assert Sampler[int] is not None


def test_sequential_sampler():
    s = SequentialSampler("abcd")
    assert list(s) == [0, 1, 2, 3] and len(s) == 4


def test_random_sampler_without_replacement():
    s = RandomSampler(range(5), generator=cr.Generator().manual_seed(0))
    assert sorted(s) == [0, 1, 2, 3, 4] and len(s) == 5
    longer = list(RandomSampler(range(3), num_samples=7, generator=cr.Generator().manual_seed(1)))
    assert len(longer) == 7 and sorted(longer[:3]) == sorted(longer[3:6]) == [0, 1, 2]


def test_random_sampler_with_replacement_and_seeds():
    s = RandomSampler(range(4), replacement=True, num_samples=70,
                      generator=cr.Generator().manual_seed(5))
    drawn = list(s)
    assert len(drawn) == 70 == len(s) and set(drawn) == {0, 1, 2, 3}
    cr.manual_seed(9)
    a = list(RandomSampler(range(20)))
    cr.manual_seed(9)
    assert list(RandomSampler(range(20))) == a                      # seeded by the default one
    assert list(RandomSampler(range(20))) != a                      # next pass: a new seed


def test_random_sampler_num_samples_follows_the_data_source():
    data = [1, 2]
    s = RandomSampler(data)
    data.append(3)
    assert s.num_samples == 3 and len(list(s)) == 3


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(range(3), replacement=1)
    for bad in (0, 2.0):
        with pytest.raises(ValueError, match=f"num_samples should be a positive integer value, but got num_samples={bad}"):
            RandomSampler(range(3), num_samples=bad)
    with pytest.raises(ValueError, match="but got num_samples=0"):
        RandomSampler([])


def test_subset_random_sampler():
    s = SubsetRandomSampler([10, 30, 20], generator=cr.Generator().manual_seed(0))
    assert sorted(s) == [10, 20, 30] and len(s) == 3


def test_weighted_random_sampler():
    s = WeightedRandomSampler([0.0, 2.0, 0.0], 5)
    assert list(s) == [1] * 5 and len(s) == 5
    assert s.weights.dtype == cr.float64 and s.replacement is True
    assert WeightedRandomSampler(cr.tensor([1.0, 2.0]), 1).weights.dtype == cr.float64
    once = list(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False,
                                      generator=cr.Generator().manual_seed(1)))
    assert sorted(once) == [0, 1, 2]


def test_weighted_random_sampler_errors():
    for bad in (0, True, 2.0):
        with pytest.raises(ValueError, match=f"num_samples should be a positive integer value, but got num_samples={bad}"):
            WeightedRandomSampler([1.0], bad)
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=1"):
        WeightedRandomSampler([1.0], 1, replacement=1)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(1, 2\)"):
        WeightedRandomSampler([[1.0, 2.0]], 2)


def test_batch_sampler():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert list(BatchSampler(range(6), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert list(BatchSampler([], 3, False)) == []
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2


def test_batch_sampler_errors():
    for bad in (0, True, 2.0):
        with pytest.raises(ValueError, match=f"batch_size should be a positive integer value, but got batch_size={bad}"):
            BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        BatchSampler(range(3), 2, 1)


# --- collate ----------------------------------------------------------------------------
def test_default_collate_leaves():
    stacked = default_collate([cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0])])
    assert stacked.shape == (2, 2) and stacked.dtype == cr.float32
    assert default_collate([1, 2]).dtype == cr.int64
    assert default_collate([1.5, 2.0]).dtype == cr.float64
    assert default_collate([True, False]).dtype == cr.bool
    assert default_collate(["a", "b"]) == ["a", "b"] and default_collate([b"a"]) == [b"a"]
    assert default_collate([np.int16(1), np.int16(2)]).dtype == cr.int16
    assert default_collate([np.float32(1), np.float32(2)]).dtype == cr.float32
    assert default_collate([np.bool_(True)]).dtype == cr.bool
    arrays = default_collate([np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)])
    assert arrays.shape == (2, 2, 3) and arrays.dtype == cr.float32
    assert default_collate([cr.nn.Parameter(cr.ones(2))] * 2).shape == (2, 2)


def test_default_collate_structures():
    assert _values(default_collate([(1, 2.0), (3, 4.0)])) == [[1, 3], [2.0, 4.0]]
    point = default_collate([Point(1, 2), Point(3, 4)])
    assert type(point) is Point and point.x.tolist() == [1, 3]
    mapping = default_collate([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])
    assert mapping["a"].tolist() == [1, 2] and mapping["b"] == ["x", "y"]
    ordered = default_collate([collections.OrderedDict(a=1)] * 2)
    assert type(ordered) is collections.OrderedDict
    proxied = default_collate([types.MappingProxyType({"a": 1})] * 2)    # rebuilt as such
    assert type(proxied) is types.MappingProxyType and proxied["a"].tolist() == [1, 1]
    keyword = default_collate([KeywordMapping(data={"a": 1})] * 2)    # not rebuildable
    assert type(keyword) is dict and keyword["a"].tolist() == [1, 1]
    nested = default_collate([[[1, 2], "p"], [[3, 4], "q"]])
    assert type(nested) is list and _values(nested[0]) == [[1, 3], [2, 4]]
    assert nested[1] == ("p", "q")


def test_default_collate_errors():
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, "
                                        "numbers, dicts or lists; found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got \[2\] at entry 0 and \[3\] at entry 1"):
        default_collate([cr.ones(2), cr.ones(3)])


def test_collate_with_custom_rules():
    rules = {**default_collate_fn_map, int: lambda batch, *, collate_fn_map: sum(batch)}
    assert collate([(1, 2.0), (3, 4.0)], collate_fn_map=rules)[0] == 4
    with pytest.raises(TypeError, match="found <class 'int'>"):
        collate([1, 2])                                    # no rules: no leaves known


def test_default_convert():
    assert default_convert(np.array([1, 2], np.int32)).dtype == cr.int32
    assert default_convert(np.float64(2.5)).dtype == cr.float64
    t = cr.ones(2)
    assert default_convert(t) is t
    assert default_convert(("a", 1)) == ["a", 1]                        # tuples become lists
    assert type(default_convert(Point(np.int64(1), 2))) is Point
    converted = default_convert({"x": [np.int16(1)], "s": np.array(["u"]), "k": "v"})
    assert converted["x"][0].dtype == cr.int16 and converted["s"].dtype.kind == "U"
    assert default_convert(range(3)) == [0, 1, 2]                       # range cannot be rebuilt
    assert default_convert("abc") == "abc" and default_convert(np.str_("s")) == "s"
    assert type(default_convert(types.MappingProxyType({"a": 1}))) is types.MappingProxyType
    assert default_convert(KeywordMapping(data={"a": np.int8(1)}))["a"].dtype == cr.int8


# --- DataLoader: options and errors -----------------------------------------------------
def test_dataloader_defaults_and_len():
    ds = TensorDataset(cr.arange(10.0), cr.arange(10))
    loader = DataLoader(ds, batch_size=4)
    assert isinstance(loader.sampler, SequentialSampler)
    assert isinstance(loader.batch_sampler, BatchSampler)
    assert loader.collate_fn is default_collate and loader.prefetch_factor is None
    assert len(loader) == 3 and len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    batches = list(loader)
    assert [y.tolist() for _, y in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(iter(loader)) == 3


def test_dataloader_shuffle_uses_generator():
    ds = list(range(12))
    order = lambda seed: [int(i) for b in DataLoader(ds, batch_size=5, shuffle=True,  # noqa: E731
                                                     generator=cr.Generator().manual_seed(seed))
                          for i in b]
    assert sorted(order(0)) == ds and order(0) == order(0) and order(0) != order(1)
    assert isinstance(DataLoader(ds, shuffle=True).sampler, RandomSampler)


def test_dataloader_without_batching_converts():
    loader = DataLoader([np.array([1.0]), np.array([2.0])], batch_size=None)
    assert loader.collate_fn is default_convert and loader.batch_sampler is None
    assert [t.tolist() for t in loader] == [[1.0], [2.0]] and len(loader) == 2


def test_dataloader_sampler_and_batch_sampler():
    assert _values(DataLoader(cr.arange(10.0), sampler=[3, 1, 4], batch_size=2)) == [[3.0, 1.0], [4.0]]
    loader = DataLoader(cr.arange(10.0), batch_sampler=[[0, 9], [5]])
    assert loader.batch_size is None and loader.drop_last is False and len(loader) == 2
    assert _values(loader) == [[0.0, 9.0], [5.0]]


def test_dataloader_uses_getitems():
    class Batched(Squares):
        def __getitems__(self, indices):
            return [-i for i in indices]
    assert _values(DataLoader(Batched(4), batch_size=3)) == [[0, -1, -2], [-3]]


def test_dataloader_custom_collate_fn():
    loader = DataLoader(Squares(5), batch_size=2, collate_fn=lambda batch: sum(batch))
    assert list(loader) == [1, 13, 16]


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_workers=-1), "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."),
    (dict(timeout=-1), "timeout option should be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0"),
    (dict(num_workers=1, prefetch_factor=-1), "prefetch_factor option should be non-negative"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    (dict(sampler=[0], shuffle=True), "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"),
    (dict(batch_sampler=[[0]], shuffle=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], sampler=[0]), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"),
    (dict(multiprocessing_context="fork"), "multiprocessing_context can only be used with multi-process loading \\(num_workers > 0\\), but got num_workers=0"),
    (dict(num_workers=1, multiprocessing_context="nope"), "multiprocessing_context option should specify a valid start method in \\["),
])
def test_dataloader_option_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(list(range(4)), **kwargs)


def test_dataloader_multiprocessing_context():
    with pytest.raises(TypeError, match="multiprocessing_context option should be a valid context object or a string specifying the start method, but got multiprocessing_context=5"):
        DataLoader([1], num_workers=1, multiprocessing_context=5)
    loader = DataLoader([1], num_workers=1, multiprocessing_context="spawn")
    assert isinstance(loader.multiprocessing_context, multiprocessing.context.BaseContext)
    assert loader.prefetch_factor == 2


@pytest.mark.parametrize("kwargs, option", [(dict(shuffle=True), "shuffle=True"),
                                            (dict(sampler=[0]), r"sampler=\[0\]"),
                                            (dict(batch_sampler=[[0]]), r"batch_sampler=\[\[0\]\]")])
def test_dataloader_iterable_dataset_option_errors(kwargs, option):
    with pytest.raises(ValueError, match=f"DataLoader with IterableDataset: expected unspecified .* option, but got {option}"):
        DataLoader(Stream([1]), **kwargs)
    DataLoader(Stream([1]), shuffle=False)


def test_dataloader_attributes_frozen_after_init():
    loader = DataLoader([1, 2])
    for attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
        with pytest.raises(ValueError, match=f"{attr} attribute should not be set after DataLoader is initialized"):
            setattr(loader, attr, None)
    loader.num_workers = 0                                         # others stay settable


def test_dataloader_timeout_without_workers_fails_on_iteration():
    loader = DataLoader([1], timeout=1)
    with pytest.raises(AssertionError, match="_SingleProcessDataLoaderIter requires timeout == 0"):
        iter(loader)


def test_dataloader_pin_memory_warnings_without_accelerator():
    loader = DataLoader([cr.ones(1)], pin_memory=True, pin_memory_device="cuda")
    with pytest.warns(UserWarning) as record:
        assert len(list(loader)) == 1
    messages = [str(w.message) for w in record]
    assert "pin_memory_device is deprecated, the current accelerator will be used as the device,ignore pin_memory_device='cuda'." in messages
    assert "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory won't be used." in messages


def test_dataloader_iterator_classes_are_named_as_the_reference():
    assert type(iter(DataLoader([1]))).__name__ == "_SingleProcessDataLoaderIter"
    assert type(iter(DataLoader([1], num_workers=1))).__name__ == "_MultiProcessingDataLoaderIter"


def test_dataloader_iterator_cannot_be_pickled():
    with pytest.raises(NotImplementedError):
        iter(DataLoader([1])).__getstate__()


def test_dataloader_draws_a_base_seed_from_its_generator():
    g = cr.Generator().manual_seed(0)
    state = g.get_state()
    iter(DataLoader([1], generator=g))
    assert not cr.equal(state, g.get_state())


# --- DataLoader over IterableDataset ----------------------------------------------------
def test_iterable_batches_and_drop_last():
    assert _values(DataLoader(Stream(range(7)), batch_size=3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert _values(DataLoader(Stream(range(7)), batch_size=3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(Stream("ab"), batch_size=None)) == ["a", "b"]
    assert list(DataLoader(Stream([]), batch_size=2)) == []


def test_iterable_len_and_overrun_warning():
    assert len(DataLoader(Stream(range(7), length=7), batch_size=3)) == 3
    assert len(DataLoader(Stream(range(7), length=7), batch_size=3, drop_last=True)) == 2
    with pytest.raises(TypeError, match="no length"):
        len(DataLoader(Stream([1])))
    loader = DataLoader(Stream(range(4), length=3), batch_size=None)
    assert len(loader) == 3
    with pytest.warns(UserWarning, match=r"Length of IterableDataset .* was reported to be 3\(when accessing len\(dataloader\)\), but 4 samples have been fetched. $"):
        assert list(loader) == [0, 1, 2, 3]


# --- workers (Note [in-process workers]) ------------------------------------------------
def test_workers_replicate_an_iterable_dataset_in_round_robin_order():
    assert _values(DataLoader(Stream([1, 2, 3]), batch_size=2, num_workers=2)) == [[1, 2], [1, 2], [3], [3]]
    split = DataLoader(Stream(range(7), split=True), batch_size=2, num_workers=3)
    assert _values(split) == [[0, 3], [1, 4], [2, 5], [6]]


def test_workers_that_finish_leave_the_rotation():
    class Uneven(IterableDataset):
        def __iter__(self):
            return iter([get_worker_info().id] * (1 + 2 * get_worker_info().id))
    assert list(DataLoader(Uneven(), batch_size=None, num_workers=3)) == [0, 1, 2, 1, 2, 1, 2, 2, 2]


def test_workers_of_a_map_dataset_keep_the_sampler_order():
    class WhoReads(Squares):
        def __getitem__(self, i):
            return (i * i, get_worker_info().id)
    batches = list(DataLoader(WhoReads(7), batch_size=2, num_workers=3))
    assert [b[0].tolist() for b in batches] == [[0, 1], [4, 9], [16, 25], [36]]
    assert [b[1].tolist() for b in batches] == [[0, 0], [1, 1], [2, 2], [0]]


def test_worker_info_and_worker_init_fn():
    def init(worker_id):
        info = get_worker_info()
        info.dataset.items = [(worker_id, info.id, info.num_workers, info.seed, x)
                              for x in info.dataset.items]
    ds = Stream([1, 2])
    rows = list(DataLoader(ds, batch_size=None, num_workers=2, worker_init_fn=init))
    assert [row[:3] + row[4:] for row in rows] == [[0, 0, 2, 1], [1, 1, 2, 1],
                                                   [0, 0, 2, 2], [1, 1, 2, 2]]
    assert rows[1][3] == rows[0][3] + 1                                # base seed + worker id
    assert ds.items == [1, 2] and get_worker_info() is None            # the main copy untouched


def test_worker_info_is_frozen():
    info = WorkerInfo(id=0, num_workers=1, seed=3, dataset=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.id = 1
    assert repr(info) == ("WorkerInfo(id=0, num_workers=1, seed=3, dataset=None, rng=None, "
                          "worker_method='multiprocessing')")


def test_worker_random_states_are_their_own():
    class Noise(Squares):
        def __getitem__(self, i):
            return (cr.rand(()).item(), random.random(), float(np.random.rand()))
    cr.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    main = (cr.get_rng_state(), random.getstate(), np.random.get_state()[1].copy())
    cr.manual_seed(0)
    loader = DataLoader(Noise(4), batch_size=None, num_workers=2)
    first = list(loader)
    assert cr.equal(cr.get_rng_state(), cr.get_rng_state())
    cr.manual_seed(0)
    assert list(DataLoader(Noise(4), batch_size=None, num_workers=2)) == first   # reproducible
    assert random.getstate() == main[1] and (np.random.get_state()[1] == main[2]).all()
    assert len({row[0] for row in first}) == 4                        # workers' streams differ


def test_worker_errors_are_reraised_with_the_worker_named():
    class Failing(Squares):
        def __getitem__(self, i):
            raise ValueError(f"bad index {i}")
    with pytest.raises(ValueError, match=r"^Caught ValueError in DataLoader worker process 0.\nOriginal Traceback"):
        list(DataLoader(Failing(2), num_workers=1))

    class Missing(Squares):
        def __getitem__(self, i):
            raise KeyError(i)
    with pytest.raises(KeyError) as caught:
        list(DataLoader(Missing(2), num_workers=1))
    assert repr(caught.value).startswith("KeyError(Caught KeyError in DataLoader worker process 0.")

    class Odd(Squares):
        def __getitem__(self, i):
            raise Picky(1, 2)
    with pytest.raises(RuntimeError, match="Caught Picky in DataLoader worker process 0."):
        list(DataLoader(Odd(2), num_workers=1))


def test_worker_timeout():
    class Slow(Squares):
        def __getitem__(self, i):
            time.sleep(0.05)
            return i
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.01 seconds"):
        list(DataLoader(Slow(2), num_workers=1, timeout=0.01))
    assert list(DataLoader(Slow(1), num_workers=1, timeout=10)) == [cr.tensor([0])]


class Epochs(IterableDataset):
    """Counts the passes over this copy of the dataset."""

    def __init__(self):
        self.epochs = 0

    def __iter__(self):
        self.epochs += 1
        return iter([self.epochs])


def _add_worker_offset(worker_id):
    info = get_worker_info()
    info.dataset.items = [x + 100 * (worker_id + 1) for x in info.dataset.items]


def test_persistent_workers_keep_their_iterator_and_dataset_copies():
    loader = DataLoader(Epochs(), batch_size=None, num_workers=2, persistent_workers=True)
    first = iter(loader)
    assert list(first) == [1, 1]
    assert list(loader) == [2, 2]                                      # same worker copies
    assert iter(loader) is first                                       # (a third pass)
    fresh = DataLoader(loader.dataset, batch_size=None, num_workers=2)
    assert list(fresh) == [1, 1] and list(fresh) == [1, 1]            # new copies each pass
    assert loader.dataset.epochs == 0


def test_persistent_workers_run_worker_init_fn_once():
    loader = DataLoader(Stream([1, 2, 3]), batch_size=2, num_workers=2,
                        persistent_workers=True, worker_init_fn=_add_worker_offset)
    once = [[101, 102], [201, 202], [103], [203]]
    assert _values(loader) == once and _values(loader) == once


def test_uncopyable_dataset_is_shared_with_workers():
    class Locked(Squares):
        def __init__(self):
            super().__init__(2)
            self.lock = __import__("threading").Lock()
    ds = Locked()
    assert _values(DataLoader(ds, num_workers=2)) == [[0], [1]]


def test_training_loop_over_a_dataloader():
    cr.manual_seed(0)
    x = cr.randn(32, 3)
    y = x @ cr.tensor([[1.0], [-2.0], [0.5]])
    model = cr.nn.Linear(3, 1)
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    for _ in range(30):
        for xb, yb in loader:
            opt.zero_grad()
            loss = cr.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
    assert loss.item() < 1e-3
