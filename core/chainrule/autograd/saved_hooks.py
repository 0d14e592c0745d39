"""State for saved-tensor hooks and allow_mutation_on_saved_tensors.

Note [saved-tensor hooks]
    While ``saved_tensors_hooks(pack, unpack)`` is active in a thread, every tensor
    saved for backward (by built-in ops and custom Functions) is replaced by
    ``pack(tensor)``; backward calls ``unpack`` on it. The per-op cost when no hook is
    active is one read of a module-level counter.
"""
import threading


class _State(threading.local):
    def __init__(self):
        self.stack = []                   # (pack, unpack) pairs, innermost last
        self.disabled_message = None
        self.mutation_contexts = []       # allow_mutation_on_saved_tensors contexts


STATE = _State()
ACTIVE = [0]        # any hook or mutation context active in any thread (cheap check)


def current_hooks():
    return STATE.stack[-1] if STATE.stack else None


def current_mutation_context():
    return STATE.mutation_contexts[-1] if STATE.mutation_contexts else None
