"""DataLoader workers (``num_workers > 0``), run in the main process.

Note [in-process workers]: chainrule does not start worker processes. Each worker
is simulated faithfully to what a program can observe of a worker process: it owns
a copy of the dataset (``copy.deepcopy``; the object itself when it cannot be
copied), its own random state (chainrule's default generator, Python's ``random``
and NumPy's global generator, seeded from ``base_seed + id`` at start), runs
``worker_init_fn`` once, sees itself in ``get_worker_info()``, and receives batches
in the reference's round-robin order; results come back in the reference's
(``in_order``) order. While a worker runs, the main process's random states are set
aside and restored afterwards. Loading is therefore not parallel: ``num_workers``
changes what a program sees (IterableDataset replicas, worker seeds) exactly as in
the reference, never its speed.
"""
import contextlib
import copy
import random
import traceback
from dataclasses import dataclass

import numpy as np

from ... import _random

_MASK32 = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a DataLoader worker: ``id`` (0 to
    ``num_workers - 1``), ``num_workers``, the worker's ``seed`` and its ``dataset``
    copy (read-only fields, like the reference's).

    >>> from chainrule.utils.data._utils.worker import WorkerInfo
    >>> WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
    WorkerInfo(id=0, num_workers=2, seed=7, dataset=None, rng=None, worker_method='multiprocessing')
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_current = [None]      # the WorkerInfo of the worker running now (None: main process)


def get_worker_info():
    """The ``WorkerInfo`` of the DataLoader worker calling it, None outside workers
    (Note [in-process workers]). An IterableDataset's ``__iter__`` or a
    ``worker_init_fn`` uses it to pick its part of the data.

    >>> import chainrule as cr
    >>> from chainrule.utils.data import DataLoader, get_worker_info
    >>> get_worker_info() is None
    True
    >>> ids = DataLoader(range(4), num_workers=2, collate_fn=lambda b: get_worker_info().id)
    >>> list(ids)
    [0, 1, 0, 1]
    """
    return _current[0]


def _capture_rng():
    return (_random.default_generator.get_state(), random.getstate(), np.random.get_state())


def _restore_rng(states):
    generator_state, python_state, numpy_state = states
    _random.default_generator.set_state(generator_state)
    random.setstate(python_state)
    np.random.set_state(numpy_state)


def _copy_dataset(dataset):
    """The worker's own dataset: a deep copy (what a worker process holds), or the
    object itself when it cannot be copied (open files, locks, ...)."""
    try:
        return copy.deepcopy(dataset)
    except Exception:
        return dataset


class Worker:
    """One in-process worker: its ``WorkerInfo`` and random states (Note [in-process
    workers]). ``with worker.running():`` makes it the current worker."""

    def __init__(self, worker_id, num_workers, base_seed, dataset):
        seed = base_seed + worker_id
        self.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                               dataset=_copy_dataset(dataset))
        main = _capture_rng()
        _random.default_generator.manual_seed(seed)
        random.seed(seed)
        entropy = [worker_id, base_seed & _MASK32, base_seed >> 32]
        np.random.seed(np.random.SeedSequence(entropy).generate_state(4))
        self._rng_states = _capture_rng()
        _restore_rng(main)

    @contextlib.contextmanager
    def running(self):
        main = _capture_rng()
        _restore_rng(self._rng_states)
        _current[0] = self.info
        try:
            yield
        finally:
            _current[0] = None
            self._rng_states = _capture_rng()
            _restore_rng(main)


class _KeyErrorMessage(str):
    """A message that KeyError shows as it is (KeyError shows its argument's repr)."""

    def __repr__(self):
        return self


def reraise_from_worker(error, worker_id):
    """Raise ``error`` (raised inside worker ``worker_id``) the way the reference's
    main process does: same type, message 'Caught <type> in DataLoader worker process
    <id>.' followed by the original traceback."""
    original = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    message = (f"Caught {type(error).__name__} in DataLoader worker process {worker_id}.\n"
               f"Original {original}")
    if type(error) is KeyError:
        message = _KeyErrorMessage(message)
    elif getattr(type(error), "message", None):
        raise type(error)(message=message) from None
    try:
        wrapped = type(error)(message)
    except Exception:
        raise RuntimeError(message) from None
    raise wrapped from None
