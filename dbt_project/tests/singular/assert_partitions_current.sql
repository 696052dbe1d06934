-- Warns about result files the marts leave out or label: evaluated against another benchmark version
-- (re-evaluate the partition), cut short (left out), or a sample of whole sessions (labelled).
{{ config(severity='warn') }}
select model, condition, result_file, benchmark_version, current_benchmark_version, n_rows
from {{ ref('int_partitions') }}
where not is_current_benchmark or not is_complete
