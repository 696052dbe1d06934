-- One row per evaluated turn and epoch per partition file, typed. Builds empty (with the same columns) when no
-- result file exists yet: read_parquet on a glob that matches nothing is an error, so the number of
-- files is asked first (stg_result_files' source, a read_blob that tolerates no match).
{%- set results = source('memsql', 'turn_results') %}
{%- set files = source('memsql', 'result_files') %}
{%- set n_files = 0 %}
{%- set has_epoch = 0 %}
{%- if execute %}
    {%- set n_files = run_query('select count(*) from ' ~ files).columns[0].values()[0] %}
    {%- if n_files > 0 %}
        {#- Files of schema 2 (before epochs) lack `epoch`: one sample of every turn, read as epoch 1. #}
        {%- set has_epoch = run_query(
            "select count(*) from (describe select * from " ~ results ~ ") where column_name = 'epoch'"
        ).columns[0].values()[0] %}
    {%- endif %}
{%- endif %}
{%- if n_files > 0 %}
select
    cast(model as varchar) as model,
    cast(condition as varchar) as condition,
    {%- for name, type in result_columns() %}
    cast({{ name }} as {{ type }}) as {{ name }},
    {%- endfor %}
    {{ 'coalesce(cast(epoch as integer), 1)' if has_epoch > 0 else '1' }} as epoch,
    filename as result_file
from {{ results }}
{%- else %}
select
    cast(null as varchar) as model,
    cast(null as varchar) as condition,
    {%- for name, type in result_columns() %}
    cast(null as {{ type }}) as {{ name }},
    {%- endfor %}
    cast(null as integer) as epoch,
    cast(null as varchar) as result_file
where false
{%- endif %}
