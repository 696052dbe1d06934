-- One row per result file present: its path, size and modification time (the content is not read).
-- model/condition are parsed from the Hive folders, the same way read_parquet's hive_partitioning does.
select
    filename as result_file,
    regexp_extract(filename, '/model=([^/]+)/condition=[^/]+/[^/]+$', 1) as model,
    regexp_extract(filename, '/condition=([^/]+)/[^/]+$', 1) as condition,
    size as file_bytes,
    last_modified as file_modified_at
from {{ source('memsql', 'result_files') }}
