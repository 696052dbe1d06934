{{ config(materialized='table') }}
-- The bootstrap's epoch draws, a pure function of (replicate, draw_index, epoch_draw): v = first 8 hex
-- digits of md5('<seed>|<replicate>|<draw_index>|<epoch_draw>') / 2^32, for every replicate, session
-- draw and epoch draw up to the most epochs of any evaluated partition. Empty while every partition
-- has one epoch: nothing is drawn then (docs: bootstrap_method).
with

turn_evaluations as (
    select * from {{ ref('int_turn_evaluations') }}
),

draws as (
    select * from {{ ref('int_bootstrap_draws') }}
),

epoch_draws as (
    select epoch - 1 as epoch_draw
    from (select distinct epoch from turn_evaluations)
    where (select max(epoch) from turn_evaluations) > 1
)

select
    d.replicate,
    d.draw_index,
    e.epoch_draw,
    cast(('0x' || left(md5(
        '{{ var("bootstrap_seed") }}|' || cast(d.replicate as varchar) || '|' || cast(d.draw_index as varchar)
        || '|' || cast(e.epoch_draw as varchar)
    ), 8)) as ubigint) / 4294967296.0 as v
from draws as d
cross join epoch_draws as e
