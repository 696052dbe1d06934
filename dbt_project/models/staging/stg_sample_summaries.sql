-- One row per sample run's published summary: its size, epochs and EX with the session bootstrap's interval.
with source as (
    select * from {{ source('memsql', 'sample_summaries') }}
),

renamed as (
    select
        regexp_extract(filename, '/model=([^/]+)/condition=[^/]+/sessions=[^/]+/[^/]+$', 1) as model,
        regexp_extract(filename, '/condition=([^/]+)/sessions=[^/]+/[^/]+$', 1) as condition,
        cast(regexp_extract(filename, '/sessions=([0-9]+)/[^/]+$', 1) as integer) as sample_sessions,
        cast(json_extract(content, '$.epochs') as integer) as epochs,
        cast(json_extract(content, '$.n_turns') as integer) as n_turns,
        cast(json_extract(content, '$.ex_strict') as double) as ex_strict,
        cast(json_extract(content, '$.ex_strict_ci95[0]') as double) as ex_ci_lo,
        cast(json_extract(content, '$.ex_strict_ci95[1]') as double) as ex_ci_hi,
        json_extract_string(content, '$.benchmark_version') as benchmark_version
    from source
)

select * from renamed
