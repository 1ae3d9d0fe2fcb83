"""Aggregated and legacy discovery documents the emulator serves."""
