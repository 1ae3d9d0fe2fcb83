"""JSON merge and JSON patch, and strategic merge patch by the OpenAPI documents' patch
metadata (apimachinery's strategicpatch)."""
