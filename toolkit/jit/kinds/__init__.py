"""What each node kind does, below both the runtime and code generation (the JIT's own kinds are declared in
``ir.kinds``, each once with its schema, effects and facts, as the op registry declares ops): ``steps`` (the
handler that runs a kind, shared by the interpreter and compiled plans), ``builtins`` (the kinds scripted code
adds: scalar arithmetic, lists, dicts, ``prim::Print``...) and ``effects`` (which nodes write, draw random
numbers or alias, read from the two registries).
"""
