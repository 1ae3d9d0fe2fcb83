"""A hand-written API for `kgen crd` tests: Widget v1 and v2, Gadget v1alpha1."""
