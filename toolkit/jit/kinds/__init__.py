"""What each node kind does, below both the runtime and code generation: ``steps`` (the handler that runs a
kind, shared by the interpreter and compiled plans), ``builtins`` (the kinds scripted code adds: scalar
arithmetic, lists, dicts, ``prim::Print``...) and ``effects`` (which kinds write, draw random numbers or alias).
"""
