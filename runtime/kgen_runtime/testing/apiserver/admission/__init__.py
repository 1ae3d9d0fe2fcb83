"""Admission: webhook calls (mutating, reinvocation, validating) as the stored webhook
configurations ask, in-tree pod admission, CRD version conversion, and the admitted write path."""
