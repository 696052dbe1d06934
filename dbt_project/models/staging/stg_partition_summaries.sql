-- One row per completed partition of either benchmark: every field its summary.json records, each
-- a column typed as the run summary model declares it (PartitionSummary, lib/harness/summary.py,
-- passed as the `summary_columns` var): a field added there is a column here, with no edit.
{%- set parts = [
    (var('paper_benchmark'), source('memsql', 'partition_summaries')),
    (var('extended_benchmark'), source('memsql', 'extended_partition_summaries')),
] %}
{%- for benchmark, summaries in parts %}
select
    '{{ benchmark }}' as benchmark,
    regexp_extract(filename, '/model=([^/]+)/condition=[^/]+/[^/]+$', 1) as model,
    regexp_extract(filename, '/condition=([^/]+)/[^/]+$', 1) as condition,
    {%- for name, type in var('summary_columns') %}
    {%- if type == 'varchar' %}
    json_extract_string(content, '$.{{ name }}') as "{{ name }}"
    {%- elif type == 'json' %}
    json_extract(content, '$.{{ name }}') as "{{ name }}"
    {%- else %}
    cast(json_extract(content, '$.{{ name }}') as {{ type }}) as "{{ name }}"
    {%- endif %}{{ ',' if not loop.last }}
    {%- endfor %}
from {{ summaries }}
{{ 'union all' if not loop.last }}
{%- endfor %}
