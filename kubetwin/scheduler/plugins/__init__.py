"""The scheduler plugins, one folder each (``pkg/scheduler/framework/plugins``), listed by :mod:`.registry`."""

