"""GraphTask: the state of one backward pass (one call of backward or grad).

It owns the dependency counts, the input buffers and, when only some inputs are
wanted (``inputs=``), which nodes must run and where gradients are captured.
Nothing here recurses over the graph (Note [no recursion]).

Note [no recursion]
    Graphs can be 100,000+ nodes deep. Every walk over the graph uses an explicit
    stack. Freeing a long chain (node -> edge tuple -> node ...) relies on CPython's
    deallocation "trashcan", which unwinds nested container deallocation
    iteratively; test_engine and test_lifetime free 100,000-node chains (the C++
    engine's tests, 1,000,000).
"""
from .node import AccumulateGrad


class GraphTask:
    __slots__ = ("keep_graph", "create_graph", "accumulate_grad", "dependencies",
                 "buffers", "should_run", "captures", "captured", "pending_accumulations",
                 "reachable", "hook_state")

    def __init__(self, keep_graph, create_graph, accumulate_grad):
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.accumulate_grad = accumulate_grad
        self.dependencies = {}
        self.buffers = {}
        self.should_run = None          # None: every reachable node runs
        self.captures = {}              # (node, slot) -> index into captured
        self.captured = []
        self.pending_accumulations = []
        self.reachable = None           # nodes that will receive a gradient
        self.hook_state = {}            # per-pass state of multi-grad hooks

    def compute_dependencies(self, root_nodes):
        """Count, for every node, the edges that will deliver a gradient to it."""
        deps = self.dependencies
        seen = set(root_nodes)
        stack = list(seen)
        should_run = self.should_run
        while stack:
            node = stack.pop()
            if should_run is not None and node not in should_run:
                continue
            for edge in node._next:
                if edge is None:
                    continue
                child = edge[0]
                if should_run is not None and child not in should_run and \
                        (child, edge[1]) not in self.captures:
                    continue
                deps[child] = deps.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        self.reachable = seen

    def init_to_execute(self, root_nodes, targets):
        """Restrict the pass to nodes on a path from the roots to a target.

        targets: (node, slot) pairs whose incoming gradient is wanted. A node runs when
        some target lies below it; a target itself runs only when it is an
        AccumulateGrad in a backward() call (it then accumulates) or leads on to
        another target.
        """
        for index, target in enumerate(targets):
            self.captures.setdefault(target, index)
        target_nodes = {node for node, _ in targets}
        leads_to_target = _nodes_leading_to(root_nodes, target_nodes)
        run = set()
        for node in leads_to_target:
            if isinstance(node, AccumulateGrad):
                if self.accumulate_grad:
                    run.add(node)
            elif any(e is not None and e[0] in leads_to_target for e in node._next):
                run.add(node)
        self.should_run = run
        self.captured = [None] * len(targets)


def _nodes_leading_to(root_nodes, target_nodes):
    """Nodes from which some target node is reachable (targets included), found with
    an iterative post-order walk."""
    leads = set()
    visited = set()
    for root in root_nodes:
        if root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(root._next))]
        while stack:
            node, children = stack[-1]
            advanced = False
            for edge in children:
                if edge is None:
                    continue
                child = edge[0]
                if child not in visited:
                    visited.add(child)
                    stack.append((child, iter(child._next)))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            if node in target_nodes or any(
                    e is not None and e[0] in leads for e in node._next):
                leads.add(node)
    return leads
