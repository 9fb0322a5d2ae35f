"""Turning Python into graphs: tracing at the dispatcher (``trace``, ``_tracing``, ``_frames``, ``call_graphs``),
script mode's compiler (``script/``) and the ``is_scripting`` / ``is_tracing`` switches (``modes``)."""
