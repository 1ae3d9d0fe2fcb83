"""metadata.managedFields: field sets, managers and server-side apply (structured-merge-diff
and apimachinery's fieldmanager)."""
