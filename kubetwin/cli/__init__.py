"""The ``kubetwin`` command line: thin shells over library calls, one module per command.

Not an upstream module: kubetwin's own command line."""
