{{ config(materialized='table') }}
-- The bootstrap's draws, a pure function of (replicate, draw_index): u = first 8 hex digits of
-- md5('<seed>|<replicate>|<draw_index>') / 2^32, for every replicate and every position up to the
-- benchmark's number of sessions (docs: bootstrap_method).
with

turns as (
    select * from {{ ref('stg_turns') }}
),

positions as (
    select row_number() over (order by session_id) - 1 as draw_index
    from (select distinct session_id from turns)
)

select
    r.replicate,
    p.draw_index,
    cast(('0x' || left(md5(
        '{{ var("bootstrap_seed") }}|' || cast(r.replicate as varchar) || '|' || cast(p.draw_index as varchar)
    ), 8)) as ubigint) / 4294967296.0 as u
from range(1, {{ var('bootstrap_replicates') }} + 1) as r(replicate)
cross join positions as p
