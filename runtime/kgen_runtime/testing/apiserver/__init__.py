"""The API-server emulator behind :mod:`kgen_runtime.testing` (private: import the public
names from :mod:`kgen_runtime.testing`), split by concern into subpackages."""
