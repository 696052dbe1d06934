-- Extended benchmark: EX % per model x condition x template turn (variant_id, turn_index) x phrasing,
-- paired: each phrasing's EX beside the mean EX of the same template turn's phrasings (their
-- sessions differ only in profile and wording), so a gap is the wording's, not the turn's.
with turns as (
    select * from {{ ref('fct_turn_evaluations') }}
),

by_phrasing as (
    select
        model,
        condition,
        tag,
        variant_id,
        turn_index,
        phrasing_index,
        count(*) as n_turns,
        count(*) filter (where ex_strict) as n_correct,
        {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct
    from turns
    where benchmark = '{{ var("extended_benchmark") }}'
    group by model, condition, tag, variant_id, turn_index, phrasing_index
)

select
    *,
    count(*) over turn_cell as n_phrasings,
    avg(ex_pct) over turn_cell as turn_ex_pct,
    ex_pct - avg(ex_pct) over turn_cell as ex_gap_pp
from by_phrasing
window turn_cell as (partition by model, condition, variant_id, turn_index)
