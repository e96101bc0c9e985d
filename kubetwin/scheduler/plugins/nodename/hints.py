"""NodeName's ``EventsToRegister`` (``nodename/node_name.go``): Node Add."""

from __future__ import annotations

from ...framework import events as ev
from ...framework.events import Registration, node_event

EVENTS = (Registration(node_event(ev.ADD)),)
