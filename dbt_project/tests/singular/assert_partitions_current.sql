-- Warns about result files the marts leave out or that look truncated: evaluated against another
-- benchmark version (re-evaluate the partition), or not one row per benchmark turn.
{{ config(severity='warn') }}
select model, condition, result_file, benchmark_version, current_benchmark_version, n_rows
from {{ ref('int_partitions') }}
where not is_current_benchmark or not is_complete
