-- Warns about result files the marts leave out or label: evaluated against another benchmark version
-- (re-evaluate the partition), cut short (left out), or a sample of whole sessions (labelled). The
-- reference agent's partitions are its fixed sample by design (its registry entry's `sessions`).
{{ config(severity='warn') }}
select model, condition, result_file, benchmark_version, current_benchmark_version, n_rows
from {{ ref('int_partitions') }}
where not is_current_benchmark or not (is_complete or (is_sample and model = '{{ var("reference_agent") }}'))
