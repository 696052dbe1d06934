-- One row per evaluated turn and epoch per partition file of either benchmark, typed, with the
-- benchmark it belongs to. Builds empty (with the same columns) when no result file exists yet:
-- read_parquet on a glob that matches nothing is an error, so the number of files is asked first
-- (the result_files sources, read_blobs that tolerate no match).
{%- set parts = [
    (var('paper_benchmark'), source('memsql', 'turn_results'), source('memsql', 'result_files')),
    (var('extended_benchmark'), source('memsql', 'extended_turn_results'), source('memsql', 'extended_result_files')),
] %}
{%- set present = [] %}
{%- for benchmark, results, files in parts if has_files(files) %}
    {%- do present.append((benchmark, results)) %}
{%- endfor %}
{%- for benchmark, results in present %}
{#- Files of schema 2 (before epochs) lack `epoch`: one sample of every turn, read as epoch 1; files
    of schemas 2 and 3 lack `stale_state`: not measured, null. #}
{%- set has = {} %}
{%- if execute %}
    {%- for name in ['epoch', 'stale_state'] %}
        {%- do has.update({name: run_query(
            "select count(*) from (describe select * from " ~ results ~ ") where column_name = '" ~ name ~ "'"
        ).columns[0].values()[0] > 0}) %}
    {%- endfor %}
{%- endif %}
select
    '{{ benchmark }}' as benchmark,
    cast(model as varchar) as model,
    cast(condition as varchar) as condition,
    {%- for name, type in result_columns() %}
    cast({{ name }} as {{ type }}) as {{ name }},
    {%- endfor %}
    {{ 'coalesce(cast(epoch as integer), 1)' if has.get('epoch') else '1' }} as epoch,
    {{ 'cast(stale_state as boolean)' if has.get('stale_state') else 'cast(null as boolean)' }} as stale_state,
    filename as result_file
from {{ results }}
union all
{%- endfor %}
select
    cast(null as varchar) as benchmark,
    cast(null as varchar) as model,
    cast(null as varchar) as condition,
    {%- for name, type in result_columns() %}
    cast(null as {{ type }}) as {{ name }},
    {%- endfor %}
    cast(null as integer) as epoch,
    cast(null as boolean) as stale_state,
    cast(null as varchar) as result_file
where false
