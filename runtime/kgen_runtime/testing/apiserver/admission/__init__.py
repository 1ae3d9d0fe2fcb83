"""Admission: webhook calls (mutating, reinvocation, validating), the stored webhook
configurations, in-tree pod admission, CRD version conversion, and the admitted write path."""
