-- One row per turn and epoch of every gold-history evaluation (lib/history.py) of either
-- benchmark: what the cascade needs of it. Builds empty when no gold-history file exists (read_parquet
-- on a glob that matches nothing is an error, so the files are counted first, and an empty relation
-- of the files' columns stands in for them; `renamed` types both).
with
{% if has_files(source('memsql', 'gold_history_result_files')) -%}
source as (
    select * from {{ source('memsql', 'gold_history_turn_results') }}
),
{%- else -%}
source as (
    select
        null as model,
        null as condition,
        null as session_id,
        null as turn_index,
        null as epoch,
        null as ex_strict,
        null as benchmark_version,
        null as filename
    where false
),
{%- endif %}

renamed as (
    select
        case
            when regexp_extract(filename, '/results_([a-z]+)_gold/', 1) = '' then '{{ var("paper_benchmark") }}'
            else regexp_extract(filename, '/results_([a-z]+)_gold/', 1)
        end as benchmark,
        cast(model as varchar) as model,
        cast(condition as varchar) as condition,
        cast(session_id as varchar) as session_id,
        cast(turn_index as integer) as turn_index,
        cast(epoch as integer) as epoch,
        cast(ex_strict as boolean) as ex_strict,
        cast(benchmark_version as varchar) as benchmark_version,
        cast(filename as varchar) as result_file
    from source
)

select * from renamed
