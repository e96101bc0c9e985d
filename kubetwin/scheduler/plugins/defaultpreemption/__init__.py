"""DefaultPreemption (``pkg/scheduler/framework/plugins/defaultpreemption`` over
``pkg/scheduler/framework/preemption``): the PostFilter plugin (:mod:`.default_preemption`), the
preemption evaluator (:mod:`.preemption`), its args (:mod:`.args`) and the PodDisruptionBudgets
it honours (:mod:`.pdb`)."""

NAME = "DefaultPreemption"
