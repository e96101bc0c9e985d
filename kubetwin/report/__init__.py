"""Presentation of simulation results: terminal summary, JSON, Prometheus text, self-contained HTML.

Not an upstream module: kubetwin's own reports."""
