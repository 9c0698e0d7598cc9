"""forge: reproducible, containerized source builds of ember for a version matrix."""

__version__ = "0.1.0"
