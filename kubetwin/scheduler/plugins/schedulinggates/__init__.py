"""SchedulingGates (``pkg/scheduler/framework/plugins/schedulinggates``): the default profile's
PreEnqueue plugin (:mod:`.scheduling_gates`)."""

NAME = "SchedulingGates"
