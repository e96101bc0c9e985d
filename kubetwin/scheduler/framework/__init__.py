"""The scheduling framework (``pkg/scheduler/framework``): extension points, runtime, cycle state and node info."""

