"""PrioritySort (``pkg/scheduler/framework/plugins/queuesort``): the default profile's QueueSort
plugin (:mod:`.priority_sort`)."""

NAME = "PrioritySort"
