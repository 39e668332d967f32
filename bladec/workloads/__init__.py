"""Real workloads for the benchmarks: data pipelines that feed the training listings."""
