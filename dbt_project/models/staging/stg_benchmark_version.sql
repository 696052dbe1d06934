-- The current version of each benchmark built, computed the way the harness does
-- (evaluate.benchmark_version): the first 16 hex digits of the SHA-256 of its turns.jsonl. One row
-- per benchmark.
with {{ source_ctes(['benchmark_file', 'extended_benchmark_file']) }}
renamed as (
    select
        '{{ var("paper_benchmark") }}' as benchmark,
        substr(sha256(content), 1, 16) as benchmark_version,
        size as turns_jsonl_bytes,
        last_modified as turns_jsonl_modified_at
    from benchmark_file

    union all

    select
        '{{ var("extended_benchmark") }}' as benchmark,
        substr(sha256(content), 1, 16) as benchmark_version,
        size as turns_jsonl_bytes,
        last_modified as turns_jsonl_modified_at
    from extended_benchmark_file
)

select * from renamed
