"""The memory plan of a launch (weights per GPU, KV cache, budget): :mod:`.plan` is the entry point,
:mod:`.model` the shapes and result types."""
