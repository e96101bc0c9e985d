"""``python -m kubetwin``: the command line. Not an upstream module: kubetwin's own entry point."""

from kubetwin.cli.main import main

if __name__ == "__main__":
    main()
