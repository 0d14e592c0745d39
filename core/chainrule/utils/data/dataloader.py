"""``DataLoader``: batches from a dataset through a sampler and a collate function
(``torch.utils.data.dataloader``).

Workers (``num_workers > 0``) run in the main process: Note [in-process workers]
in ``_worker.py``. Shuffling uses chainrule's generators, whose numbers differ from
torch's.
"""
import collections.abc
import math
import multiprocessing
import time
import warnings
from typing import Generic, TypeVar

from ... import _random
from ._collate import (_rebuild_mapping, _rebuild_sequence, default_collate,
                       default_convert)
from ._worker import Worker, get_worker_info, reraise_from_worker  # noqa: F401
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

T_co = TypeVar("T_co", covariant=True)


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler(Sampler):
    """None forever: the 'indices' of an IterableDataset, which ignores them."""

    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Iterates over ``dataset`` in batches.

    Map-style datasets are read at the indices of ``sampler`` (default: in order, or
    a ``RandomSampler`` with ``shuffle=True``, using ``generator``) grouped by
    ``batch_size`` (``drop_last`` drops a short last batch) or given by
    ``batch_sampler``; an ``IterableDataset`` is read in order, ``batch_size`` items
    at a time. ``collate_fn`` makes each batch (default ``default_collate``; with
    ``batch_size=None``, ``default_convert`` of each sample). ``len()`` is the number
    of batches.

    ``num_workers > 0`` runs workers in the main process, each with its own dataset
    copy, seed and ``worker_init_fn`` call (Note [in-process workers]): what a
    program sees matches the reference, including an IterableDataset replicated per
    worker. ``prefetch_factor``, ``timeout`` (checked after each batch),
    ``persistent_workers``, ``multiprocessing_context`` and ``in_order`` are
    validated and kept as the reference does (no warning about more workers than
    cores: no process is started). ``pin_memory=True`` pins tensors when CUDA is
    available and warns otherwise, as the reference does.

    Random order comes from chainrule's generators: the same seed gives the same
    batches run after run, but not torch's batches.

    >>> import chainrule as cr
    >>> from chainrule.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(cr.arange(10.).reshape(5, 2), cr.arange(5))
    >>> loader = DataLoader(ds, batch_size=2)
    >>> len(loader)
    3
    >>> for x, y in loader:
    ...     print(x.shape, y.tolist())
    chainrule.Size([2, 2]) [0, 1]
    chainrule.Size([2, 2]) [2, 3]
    chainrule.Size([1, 2]) [4]
    >>> sorted(int(y) for _, ys in DataLoader(ds, batch_size=2, shuffle=True) for y in ys)
    [0, 1, 2, 3, 4]
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None,
                 *, prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        prefetch_factor = _check_worker_options(num_workers, timeout, prefetch_factor,
                                                persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            _check_iterable_options(shuffle, sampler, batch_sampler)
        else:
            self._dataset_kind = _DatasetKind.Map
            shuffle = bool(shuffle)
        _check_sampling_options(batch_size, shuffle, sampler, batch_sampler, drop_last)
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        if sampler is None:
            sampler = self._default_sampler(shuffle, generator)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None

    def _default_sampler(self, shuffle, generator):
        if self._dataset_kind == _DatasetKind.Iterable:
            return _InfiniteConstantSampler()
        if shuffle:
            return RandomSampler(self.dataset, generator=generator)
        return SequentialSampler(self.dataset)

    @property
    def multiprocessing_context(self):
        """The multiprocessing context named at construction (kept, unused:
        workers run in the main process)."""
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            context = _resolve_context(context, self.num_workers)
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if not (self.persistent_workers and self.num_workers > 0):
            return self._get_iterator()
        if self._iterator is None:
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Map:
            return len(self._index_sampler)
        # The number of samples an IterableDataset reports: remembered to warn when
        # iteration yields more (Note: only a hint, the dataset decides).
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is None:
            return length
        if self.drop_last:
            return length // self.batch_size
        return math.ceil(length / self.batch_size)


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    """The reference's checks of the worker options; returns the prefetch factor
    (2 by default with workers)."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in "
                         "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                         "otherwise set prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_options(shuffle, sampler, batch_sampler):
    """An IterableDataset orders itself: no shuffle, sampler or batch_sampler."""
    if shuffle not in {False, None}:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                         f"option, but got shuffle={shuffle}")
    if sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                         f"option, but got sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                         f"batch_sampler option, but got batch_sampler={batch_sampler}")


def _check_sampling_options(batch_size, shuffle, sampler, batch_sampler, drop_last):
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
    elif batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually "
                         "exclusive with drop_last")


def _resolve_context(context, num_workers):
    """A start-method name or context object as a context, with the reference's errors."""
    if num_workers <= 0:
        raise ValueError(f"multiprocessing_context can only be used with multi-process "
                         f"loading (num_workers > 0), but got num_workers={num_workers}")
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start "
                             f"method in {methods!r}, but got "
                             f"multiprocessing_context={context!r}")
        context = multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(f"multiprocessing_context option should be a valid context object or "
                        f"a string specifying the start method, but got "
                        f"multiprocessing_context={context}")
    return context


def _pin(data):
    """``data`` with every tensor (or object with ``pin_memory``) pinned, through
    mappings, tuples and sequences."""
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: _pin(value) for key, value in data.items()})
    if isinstance(data, tuple):
        pinned = [_pin(item) for item in data]
        return type(data)(*pinned) if hasattr(data, "_fields") else type(data)(pinned)
    if isinstance(data, collections.abc.Sequence):
        return _rebuild_sequence(data, [_pin(item) for item in data])
    return data


class _Fetcher:
    """Reads one batch (or sample) of a dataset for the given indices and collates it."""

    def __init__(self, loader, dataset):
        self.dataset = dataset
        self.kind = loader._dataset_kind
        self.auto_collation = loader._auto_collation
        self.collate_fn = loader.collate_fn
        self.drop_last = loader.drop_last
        self.stream = iter(dataset) if self.kind == _DatasetKind.Iterable else None
        self.ended = False

    def fetch(self, index):
        if self.kind == _DatasetKind.Map:
            return self.collate_fn(self._read_map(index))
        return self.collate_fn(self._read_stream(index))

    def _read_map(self, index):
        if not self.auto_collation:
            return self.dataset[index]
        if getattr(self.dataset, "__getitems__", None):
            return self.dataset.__getitems__(index)
        return [self.dataset[i] for i in index]

    def _read_stream(self, index):
        """The next item, or batch of ``len(index)`` items; StopIteration at the end
        (or before a short batch with ``drop_last``)."""
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return next(self.stream)
        batch = []
        for _ in index:
            try:
                batch.append(next(self.stream))
            except StopIteration:
                self.ended = True
                break
        if not batch or (self.drop_last and len(batch) < len(index)):
            raise StopIteration
        return batch


class _BaseDataLoaderIter:
    """One pass over a DataLoader (or every pass, with ``persistent_workers``)."""

    def __init__(self, loader):
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(f"pin_memory_device is deprecated, the current accelerator will be "
                          f"used as the device,ignore pin_memory_device="
                          f"'{loader.pin_memory_device}'.", stacklevel=3)
        from ... import cuda, empty, int64
        if loader.pin_memory and not cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        if loader.num_workers == 0 and loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._loader = loader
        self._dataset = loader.dataset
        self._pin_memory = loader.pin_memory and cuda.is_available()
        self._base_seed = int(empty((), dtype=int64).random_(generator=loader.generator).item())
        self._workers = [Worker(i, loader.num_workers, self._base_seed, loader.dataset)
                         for i in range(loader.num_workers)]
        for worker in self._workers:
            if loader.worker_init_fn is not None:
                self._in_worker(worker, loader.worker_init_fn, worker.info.id)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(loader._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if not self._workers:
            self._fetchers = [_Fetcher(loader, self._dataset)]
            return
        self._fetchers = [self._in_worker(w, _Fetcher, loader, w.info.dataset)
                          for w in self._workers]
        self._active = list(range(len(self._workers)))
        self._turn = 0

    def _in_worker(self, worker, fn, *args):
        """``fn(*args)`` run as ``worker``: errors come back as the reference's main
        process re-raises them."""
        started = time.monotonic()
        with worker.running():
            try:
                result = fn(*args)
            except StopIteration:
                raise
            except Exception as error:
                reraise_from_worker(error, worker.info.id)
        timeout = self._loader.timeout
        if timeout > 0 and time.monotonic() - started > timeout:
            raise RuntimeError(f"DataLoader timed out after {timeout} seconds")
        return result

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader._index_sampler)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._loader._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            self._warn_too_many()
        return _pin(data) if self._pin_memory else data

    def _warn_too_many(self):
        message = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
        if self._workers:
            message += ("For multiprocessing data-loading, this could be caused by not "
                        "properly configuring the IterableDataset replica at each worker. "
                        "Please see https://pytorch.org/docs/stable/data.html"
                        "#torch.utils.data.IterableDataset for examples.")
        warnings.warn(message, stacklevel=3)

    def _next_data(self):
        if not self._workers:
            return self._fetchers[0].fetch(next(self._sampler_iter))
        # Batches go to the workers in turn; a worker whose IterableDataset replica
        # ran out leaves the rotation (the reference's in-order result stream).
        while self._active:
            index = next(self._sampler_iter)
            position = self._turn % len(self._active)
            worker_id = self._active[position]
            try:
                data = self._in_worker(self._workers[worker_id],
                                       self._fetchers[worker_id].fetch, index)
            except StopIteration:
                del self._active[position]
                self._turn = position          # its successor moved into its place
                continue
            self._turn = position + 1
            return data
        raise StopIteration

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", type(self).__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """A pass without workers (the reference's class name)."""


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """A pass with ``num_workers`` workers, run in the main process (Note [in-process
    workers]); named as the reference's class."""
