"""Benchmarks: `python -m branchwise.bench.observe` measures observation latency and size (see BENCHMARKS.md)."""
