"""What the benchmark scripts share: the trained model and its step (training), workloads
and their throughput (workload, throughput, shapestream), and the reports' tables and goal
checks (runreport, devicereport). No entry points here."""
