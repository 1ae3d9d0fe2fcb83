"""The manager (controller-runtime's ``pkg/manager``): start-up and phased shutdown of a
controller process, its health, metrics and webhook servers, and the runnables it runs.

Imports the controller, events and leader election; nothing here imports the builder
(:mod:`.._builder` imports the manager). Public names are exported by
:mod:`kgen_runtime.controller`.
"""
