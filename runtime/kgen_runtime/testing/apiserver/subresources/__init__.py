"""Subresources beyond status: /scale and a pod's connect verbs (log, exec, attach, ...)."""
