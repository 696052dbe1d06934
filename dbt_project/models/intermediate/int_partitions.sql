-- One row per result file = one evaluated model x condition partition: where it is, its identity
-- (partition_fingerprint, what the incremental fact table is keyed on), and whether it can be used
-- (evaluated against the current benchmark, complete).
with files as (
    select * from {{ ref('stg_result_files') }}
),

file_rows as (
    select
        result_file,
        count(*) as n_rows,
        count(distinct benchmark_version) as n_benchmark_versions,
        min(benchmark_version) as benchmark_version,
        max(schema_version) as schema_version
    from {{ ref('stg_turn_results') }}
    group by result_file
),

benchmark as (
    select
        v.benchmark_version,
        (select count(*) from {{ ref('stg_turns') }}) as n_benchmark_turns
    from {{ ref('stg_benchmark_version') }} as v
)

select
    f.model,
    f.condition,
    f.condition || '|' || f.model as dagster_partition_key,
    f.result_file,
    f.file_bytes,
    f.file_modified_at,
    coalesce(r.n_rows, 0) as n_rows,
    r.n_benchmark_versions,
    r.benchmark_version,
    r.schema_version,
    b.benchmark_version as current_benchmark_version,
    coalesce(r.benchmark_version = b.benchmark_version and r.n_benchmark_versions = 1, false)
        as is_current_benchmark,
    coalesce(r.n_rows, 0) = b.n_benchmark_turns as is_complete,
    md5(concat_ws('|',
        f.result_file,
        cast(f.file_bytes as varchar),
        cast(epoch_us(f.file_modified_at) as varchar),
        coalesce(r.benchmark_version, '')
    )) as partition_fingerprint
from files as f
left join file_rows as r on r.result_file = f.result_file
cross join benchmark as b
