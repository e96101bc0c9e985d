"""The ``kubetwin`` command line: thin shells over library calls, one module per command."""
