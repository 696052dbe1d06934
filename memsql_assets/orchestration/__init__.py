"""What `memsql` orchestrates, below the command line and above the Dagster definitions: which
partitions `memsql run` evaluates (selection), the main job's rounds (dagster_jobs), one partition's
run and its decoded outcome (partition, outcome), planning and concurrent partitions (evaluations),
the cost budget (budget), the metrics (metrics), the run's summary (run_summary), the console's log
file (logs) and the servers' ports and commands (servers). Nothing here imports the CLI."""
