-- One row per completed partition of either benchmark: what its summary.json records beyond the rows
-- (the wave size; the memory implementation, its context mode and what its stores held after the partition).
{%- set parts = [
    (var('paper_benchmark'), source('memsql', 'partition_summaries')),
    (var('extended_benchmark'), source('memsql', 'extended_partition_summaries')),
] %}
{%- for benchmark, summaries in parts %}
select
    '{{ benchmark }}' as benchmark,
    regexp_extract(filename, '/model=([^/]+)/condition=[^/]+/[^/]+$', 1) as model,
    regexp_extract(filename, '/condition=([^/]+)/[^/]+$', 1) as condition,
    cast(json_extract(content, '$.wave_size') as integer) as wave_size,
    json_extract_string(content, '$.memory_implementation') as memory_implementation,
    coalesce(json_extract_string(content, '$.context_mode'), '{{ var("annotated_context_mode") }}') as context_mode,
    cast(json_extract(content, '$.memory_store_entries') as bigint) as memory_store_entries,
    cast(json_extract(content, '$.memory_store_bytes') as bigint) as memory_store_bytes
from {{ summaries }}
{{ 'union all' if not loop.last }}
{%- endfor %}
