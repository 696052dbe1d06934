-- What the reference models must score, next to what they scored: they are instruments, not LLMs,
-- so they are held to their own expectations instead of the paper's claims. One row per evaluated
-- reference-model partition (of either benchmark) with an expectation: gold and paraphrase (var('must_score_100')) score
-- 100 % EX under every condition; guess-probe scores the guess floor, at most
-- var('guess_floor_max_pct') % of memory-critical turns under A, and the same under every other
-- condition (it reads no memory). recall-probe and reader-probe measure conditions: no expectation.
with condition_summary as (
    select * from {{ ref('agg_condition_summary') }}
),

summary as (
    select benchmark, model, condition, ex_pct, ex_memory_critical_pct, guess_floor_pct
    from condition_summary
),

expected as (
    select
        benchmark, model, condition, 'ex_pct' as metric, ex_pct as value, 100.0 as low, 100.0 as high,
        'every turn correct: a miss is a harness, comparator or benchmark bug' as expectation
    from summary
    where model in ({{ "'" ~ var('must_score_100') | join("', '") ~ "'" }})
    union all
    select
        benchmark, model, condition, 'ex_memory_critical_pct', ex_memory_critical_pct, 0.0,
        {{ var('guess_floor_max_pct') }},
        'the guess floor: memory-critical turns are not guessable without memory'
    from summary
    where model = '{{ var("guess_probe") }}' and condition = '{{ var("floor_condition") }}'
    union all
    select
        benchmark, model, condition, 'ex_memory_critical_pct', ex_memory_critical_pct, guess_floor_pct, guess_floor_pct,
        'at the floor under every condition: it reads no memory'
    from summary
    where model = '{{ var("guess_probe") }}' and condition <> '{{ var("floor_condition") }}'
)

select
    *,
    case
        when value is null or low is null then 'not evaluated'
        when round(value, 1) between round(low, 1) and round(high, 1) then 'inside'
        else 'outside'
    end as verdict
from expected
