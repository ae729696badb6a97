"""Branchwise: a browser agent that plans with tree search over your real, logged-in Chrome."""

__version__ = "0.1.0"
