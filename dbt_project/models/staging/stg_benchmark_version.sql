-- The current benchmark version, computed the way the harness does (evaluate.benchmark_version):
-- the first 16 hex digits of the SHA-256 of benchmark/turns.jsonl. One row.
select
    substr(sha256(content), 1, 16) as benchmark_version,
    size as turns_jsonl_bytes,
    last_modified as turns_jsonl_modified_at
from {{ source('memsql', 'benchmark_file') }}
