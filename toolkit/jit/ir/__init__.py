"""The JIT's IR: ``graph`` (Graph, Block, Node, Value), ``types``, ``printer``, ``verify`` and ``propagate`` (the
shape and dtype a node's outputs get). It imports nothing else of the JIT."""
