-- One row per evaluated turn and epoch per partition file, typed. Builds empty (with the same columns) when no
-- result file exists yet: read_parquet on a glob that matches nothing is an error, so the number of
-- files is asked first (stg_result_files' source, a read_blob that tolerates no match).
{%- set results = source('memsql', 'turn_results') %}
{%- set files = source('memsql', 'result_files') %}
{%- set n_files = 0 %}
{%- set present = [] %}
{%- if execute %}
    {%- set n_files = run_query('select count(*) from ' ~ files).columns[0].values()[0] %}
    {%- if n_files > 0 %}
        {#- Columns added in a later schema are absent when no file has them (union_by_name fills
            the rest): `epoch` (schema 3) is read as 1, one sample of every turn; others as null. #}
        {%- set present = run_query(
            "select column_name from (describe select * from " ~ results ~ ")"
        ).columns[0].values() | list %}
    {%- endif %}
{%- endif %}
{%- if n_files > 0 %}
select
    cast(model as varchar) as model,
    cast(condition as varchar) as condition,
    {%- for name, type in result_columns() %}
    cast({{ name if name in present else 'null' }} as {{ type }}) as {{ name }},
    {%- endfor %}
    {{ 'coalesce(cast(epoch as integer), 1)' if 'epoch' in present else '1' }} as epoch,
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
