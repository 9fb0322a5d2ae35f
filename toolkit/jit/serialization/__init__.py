"""The archive format of ``toolkit.jit.save`` / ``load`` (``archive``): graphs printed as code (``code*``) and
parsed back (``code_parser``), checked before anything runs (``archive_check``, ``builtin_schema``,
``archive_types``), and the modules a load rebuilds (``loaded_modules``, ``archive_decode``, ``archive_globals``)."""
