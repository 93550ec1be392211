"""Benchmarks: run each as `python bench/NAME.py`."""
