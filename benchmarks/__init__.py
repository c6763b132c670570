"""The benchmark suite: `python -m benchmarks` prints every figure of issue 14 against its baseline and goal."""
