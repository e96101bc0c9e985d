"""Presentation of simulation results: terminal summary, JSON, Prometheus text, self-contained HTML."""
