-- One row per evaluated turn and epoch per partition file of either benchmark, typed, with the
-- benchmark it belongs to. Builds empty (with the same columns) when no result file exists yet:
-- read_parquet on a glob that matches nothing is an error, so the number of files is asked first
-- (the result_files sources, read_blobs that tolerate no match).
{%- set parts = [
    (var('paper_benchmark'), 'turn_results', source('memsql', 'turn_results'), source('memsql', 'result_files')),
    (var('extended_benchmark'), 'extended_turn_results', source('memsql', 'extended_turn_results'),
     source('memsql', 'extended_result_files')),
] %}
{%- set with_files = [] %}
{%- for benchmark, name, results, files in parts if has_files(files) %}
    {%- do with_files.append((benchmark, name, results)) %}
{%- endfor %}
with {{ source_ctes(with_files | map(attribute=1)) }}
renamed as (
{% for benchmark, name, results in with_files %}
    {#- Columns added in a later schema are absent when no file has them (union_by_name fills the
        rest): `epoch` (schema 3) is read as 1, one sample of every turn; others as null. #}
    {%- set present = [] %}
    {%- if execute %}
        {%- set present = run_query(
            "select column_name from (describe select * from " ~ results ~ ")"
        ).columns[0].values() | list %}
    {%- endif %}
    select
        '{{ benchmark }}' as benchmark,
        cast(model as varchar) as model,
        cast(condition as varchar) as condition,
        {%- for column, type in result_columns() %}
        cast({{ column if column in present else 'null' }} as {{ type }}) as {{ column }},
        {%- endfor %}
        {{ 'coalesce(cast(epoch as integer), 1)' if 'epoch' in present else '1' }} as epoch,
        filename as result_file
    from {{ name }}

    union all
{% endfor %}
    {#- No file yet: the same columns, no row. #}
    select
        cast(null as varchar) as benchmark,
        cast(null as varchar) as model,
        cast(null as varchar) as condition,
        {%- for column, type in result_columns() %}
        cast(null as {{ type }}) as {{ column }},
        {%- endfor %}
        cast(null as integer) as epoch,
        cast(null as varchar) as result_file
    where false
)

select * from renamed
