-- One row per completed partition of either benchmark: every field its summary.json records, each
-- a column typed as the run summary model declares it (PartitionSummary, lib/harness/summary.py,
-- passed as the `summary_columns` var): a field added there is a column here, with no edit.
{%- set parts = [
    (var('paper_benchmark'), 'partition_summaries'),
    (var('extended_benchmark'), 'extended_partition_summaries'),
] %}
with {{ source_ctes(parts | map(attribute=1)) }}
renamed as (
{% for benchmark, name in parts %}
    select
        '{{ benchmark }}' as benchmark,
        regexp_extract(filename, '/model=([^/]+)/condition=[^/]+/[^/]+$', 1) as model,
        regexp_extract(filename, '/condition=([^/]+)/[^/]+$', 1) as condition,
        {%- for column, type in var('summary_columns') %}
        {%- if type == 'varchar' %}
        json_extract_string(content, '$.{{ column }}') as "{{ column }}"
        {%- elif type == 'json' %}
        json_extract(content, '$.{{ column }}') as "{{ column }}"
        {%- else %}
        cast(json_extract(content, '$.{{ column }}') as {{ type }}) as "{{ column }}"
        {%- endif %}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ name }}
    {% if not loop.last %}
    union all
    {% endif %}
{%- endfor %}
)

select * from renamed
