"""The run stage: options parsed once (config), collection, scheduling, recording items,
crashes, and the controller's and workers' hooks; it ends in ``finish.finish_run``."""
