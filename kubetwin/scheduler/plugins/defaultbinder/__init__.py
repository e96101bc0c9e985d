"""DefaultBinder (``pkg/scheduler/framework/plugins/defaultbinder``): the default profile's Bind
plugin (:mod:`.default_binder`)."""

NAME = "DefaultBinder"
