-- One row per completed partition: what its summary.json records beyond the rows (the wave size).
select
    regexp_extract(filename, '/model=([^/]+)/condition=[^/]+/[^/]+$', 1) as model,
    regexp_extract(filename, '/condition=([^/]+)/[^/]+$', 1) as condition,
    cast(json_extract(content, '$.wave_size') as integer) as wave_size
from {{ source('memsql', 'partition_summaries') }}
