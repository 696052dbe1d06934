-- One row per result file present, of either benchmark: its path, size and modification time (the
-- content is not read). model/condition are parsed from the Hive folders, the same way
-- read_parquet's hive_partitioning does.
{%- set parts = [
    (var('paper_benchmark'), 'result_files'),
    (var('extended_benchmark'), 'extended_result_files'),
] %}
with {{ source_ctes(parts | map(attribute=1)) }}
renamed as (
{% for benchmark, name in parts %}
    select
        '{{ benchmark }}' as benchmark,
        filename as result_file,
        regexp_extract(filename, '/model=([^/]+)/condition=[^/]+/[^/]+$', 1) as model,
        regexp_extract(filename, '/condition=([^/]+)/[^/]+$', 1) as condition,
        size as file_bytes,
        last_modified as file_modified_at
    from {{ name }}
    {% if not loop.last %}
    union all
    {% endif %}
{%- endfor %}
)

select * from renamed
