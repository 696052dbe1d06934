-- One row per result file present, of either benchmark: its path, size and modification time (the
-- content is not read). model/condition are parsed from the Hive folders, the same way
-- read_parquet's hive_partitioning does.
{%- set parts = [
    (var('paper_benchmark'), source('memsql', 'result_files')),
    (var('extended_benchmark'), source('memsql', 'extended_result_files')),
] %}
{%- for benchmark, files in parts %}
select
    '{{ benchmark }}' as benchmark,
    filename as result_file,
    regexp_extract(filename, '/model=([^/]+)/condition=[^/]+/[^/]+$', 1) as model,
    regexp_extract(filename, '/condition=([^/]+)/[^/]+$', 1) as condition,
    size as file_bytes,
    last_modified as file_modified_at
from {{ files }}
{%- if not loop.last %}
union all
{%- endif %}
{%- endfor %}
