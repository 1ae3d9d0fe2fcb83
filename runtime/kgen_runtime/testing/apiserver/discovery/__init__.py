"""What the emulator says about itself: aggregated and legacy discovery documents and the
/openapi/v2 and /openapi/v3 endpoints."""
