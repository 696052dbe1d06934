-- One row per result file = one evaluated benchmark x model x condition partition: where it is, its identity
-- (partition_fingerprint), and whether it can be used (evaluated against the current benchmark, and
-- complete, or a sample run of whole sessions). A file holds one or more epochs (independent samples
-- of every turn, numbered 1 … n_epochs); each epoch must cover the same turns.
with files as (
    select * from {{ ref('stg_result_files') }}
),

turn_results as (
    select * from {{ ref('stg_turn_results') }}
),

turns as (
    select * from {{ ref('stg_turns') }}
),

benchmark_versions as (
    select * from {{ ref('stg_benchmark_version') }}
),

file_rows as (
    select
        result_file,
        count(*) as n_rows,
        count(distinct epoch) as n_epochs,
        min(epoch) = 1 and max(epoch) = count(distinct epoch) as epochs_numbered,
        count(distinct benchmark_version) as n_benchmark_versions,
        min(benchmark_version) as benchmark_version,
        max(schema_version) as schema_version
    from turn_results
    group by result_file
),

-- Files whose epochs do not all hold the same number of rows (an epoch cut short).
uneven_epochs as (
    select result_file
    from (
        select result_file, epoch, count(*) as n_rows
        from turn_results
        group by result_file, epoch
    )
    group by result_file
    having count(distinct n_rows) > 1
),

session_rows as (
    select result_file, epoch, session_id, count(*) as n_rows
    from turn_results
    group by result_file, epoch, session_id
),

benchmark_sessions as (
    select session_id, count(*) as n_turns
    from turns
    group by session_id
),

-- Sessions of a file that lack turns (or are not in the benchmark): a cut-short run, not a sample.
partial_sessions as (
    select s.result_file, count(*) as n_partial_sessions
    from session_rows as s
    left join benchmark_sessions as b on b.session_id = s.session_id
    where b.n_turns is distinct from s.n_rows
    group by s.result_file
),

benchmark as (
    select
        v.benchmark,
        v.benchmark_version,
        (select count(*) from turns as t where t.benchmark = v.benchmark) as n_benchmark_turns
    from benchmark_versions as v
)

select
    f.benchmark,
    f.model,
    f.condition,
    f.condition || '|' || f.model as dagster_partition_key,
    f.result_file,
    f.file_bytes,
    f.file_modified_at,
    coalesce(r.n_rows, 0) as n_rows,
    coalesce(r.n_epochs, 0) as n_epochs,
    r.n_benchmark_versions,
    r.benchmark_version,
    r.schema_version,
    b.benchmark_version as current_benchmark_version,
    coalesce(r.benchmark_version = b.benchmark_version and r.n_benchmark_versions = 1, false)
        as is_current_benchmark,
    coalesce(r.n_rows = b.n_benchmark_turns * r.n_epochs and r.epochs_numbered, false)
        and ue.result_file is null as is_complete,
    coalesce(r.n_rows between 1 and b.n_benchmark_turns * r.n_epochs - 1 and r.epochs_numbered, false)
        and ue.result_file is null and ps.n_partial_sessions is null as is_sample,
    md5(concat_ws('|',
        f.result_file,
        cast(f.file_bytes as varchar),
        cast(epoch_us(f.file_modified_at) as varchar),
        coalesce(r.benchmark_version, '')
    )) as partition_fingerprint
from files as f
left join file_rows as r on r.result_file = f.result_file
left join partial_sessions as ps on ps.result_file = f.result_file
left join uneven_epochs as ue on ue.result_file = f.result_file
left join benchmark as b on b.benchmark = f.benchmark
