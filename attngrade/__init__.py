"""attngrade: automatic grading for transformer and attention homework."""

__version__ = "0.1.0"
