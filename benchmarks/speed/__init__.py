"""Speed benchmarks: biotok against its baseline, side by side (``python -m benchmarks.speed.NAME``)."""
