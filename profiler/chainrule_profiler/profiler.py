"""``chainrule.profiler``: the newer profiler API (activities, schedules, trace
handlers), over the same recording as ``chainrule.autograd.profiler``.

It records every thread (like the reference's Kineto-based profiler), one track per
thread in the trace; only CPU activity exists here.
"""
import enum
import os
import socket
import time

from . import _state
from .profile import build_events, record_function

__all__ = ["profile", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "record_function", "supported_activities"]


class ProfilerActivity(enum.Enum):
    """What a profile records; chainrule has CPU activity only."""

    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """The activities this profiler records: ``{ProfilerActivity.CPU}``."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What a schedule asks for at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A schedule for ``profile(schedule=...)``: after ``skip_first`` steps, cycles of
    ``wait`` idle steps, ``warmup`` steps and ``active`` recorded steps (the last of
    which saves the trace), ``repeat`` times (0: forever).

    >>> from chainrule.profiler import schedule
    >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(step).name for step in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and step < wait:
            return ProfilerAction.NONE
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each recorded cycle's Chrome trace into
    ``dir_name`` as ``<worker_name>.<nanoseconds>.pt.trace.json[.gz]``.

    >>> import os, tempfile, chainrule as cr
    >>> from chainrule.profiler import profile, tensorboard_trace_handler
    >>> folder = tempfile.mkdtemp()
    >>> with profile(on_trace_ready=tensorboard_trace_handler(folder, "w")):
    ...     y = cr.ones(2) * 2
    >>> [name.split(".")[0] for name in os.listdir(folder)]
    ['w']
    """
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json"
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        if use_gzip:
            _gzip(path)
    return handler


def _gzip(path):
    import gzip
    import shutil
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path)


class profile:
    """Profiler context manager with schedules: records the ops, backward nodes and
    ``record_function`` ranges of every thread during the steps ``schedule`` marks
    active (every step without one), and hands each finished cycle to
    ``on_trace_ready``. Call ``.step()`` at the end of each step.

    >>> import chainrule as cr
    >>> from chainrule.profiler import profile, ProfilerActivity, schedule
    >>> seen = []
    >>> x = cr.ones(3, requires_grad=True)
    >>> with profile(activities=[ProfilerActivity.CPU],
    ...              schedule=schedule(wait=1, warmup=0, active=1, repeat=2),
    ...              on_trace_ready=lambda p: seen.append(len(p.events()))) as prof:
    ...     for _ in range(4):
    ...         (x * 2).sum().backward()
    ...         prof.step()
    >>> seen      # ProfilerStep*, mul, sum, 3 nodes and their evaluate_function ranges
    [9, 9]
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        self.experimental_config = experimental_config
        self.acc_events = acc_events
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._collector = None
        self._step_range = None
        self._events = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Begin at step 0 of the schedule."""
        self.current_action = self.schedule(self.step_num)
        self._enter(self.current_action)

    def stop(self):
        """End the profile; a cycle being recorded is finished and handed over."""
        self._leave(self.current_action, finishing=True)
        self.current_action = ProfilerAction.NONE

    def step(self):
        """Mark the end of a step: the schedule decides what the next one does."""
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        same_cycle = previous in (ProfilerAction.WARMUP, ProfilerAction.RECORD) and \
            self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if same_cycle and previous is ProfilerAction.RECORD:
            self._next_step_range()
            return
        self._leave(previous, finishing=False)
        self._enter(self.current_action)

    def _enter(self, action):
        if action is ProfilerAction.NONE:
            return
        self._collector = _state.Collector(
            record_shapes=self.record_shapes, profile_memory=self.profile_memory,
            with_stack=self.with_stack, with_flops=self.with_flops, all_threads=True)
        _state.activate(self._collector)
        self._next_step_range()

    def _leave(self, action, finishing):
        """Stop recording; a recorded (not warm-up) cycle is handed to on_trace_ready."""
        if self._collector is None:
            return
        self._end_step_range()
        _state.deactivate(self._collector)
        collector, self._collector = self._collector, None
        if action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE) and \
                (finishing or action is ProfilerAction.RECORD_AND_SAVE):
            self._events = build_events(collector)
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def _next_step_range(self):
        self._end_step_range()
        step = record_function(f"ProfilerStep#{self.step_num}")
        step.__enter__()
        self._step_range = step

    def _end_step_range(self):
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def events(self):
        """The events of the last finished cycle (an EventList)."""
        return self._events

    def _finished_events(self):
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The last cycle's events averaged per name (EventList.key_averages)."""
        return self._finished_events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Write the last cycle as Chrome trace-event JSON."""
        self._finished_events().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write the last cycle's collapsed stacks (needs ``with_stack=True``)."""
        self._finished_events().export_stacks(path, metric)
