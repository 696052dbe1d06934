-- How much the headline EX depends on the comparator, per model x condition: strict (the paper's:
-- stringified multisets), bag (numbers compared with tolerance) and set (bag without duplicates).
select
    model,
    condition,
    count(*) as n_turns,
    {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_strict_pct,
    {{ pct('count(*) filter (where ex_bag)', 'count(*)') }} as ex_bag_pct,
    {{ pct('count(*) filter (where ex_set)', 'count(*)') }} as ex_set_pct,
    {{ pct('count(*) filter (where ex_bag)', 'count(*)') }}
        - {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as bag_minus_strict_pp,
    {{ pct('count(*) filter (where ex_set)', 'count(*)') }}
        - {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as set_minus_strict_pp,
    count(*) filter (where ex_strict <> ex_bag) as n_strict_bag_disagree,
    count(*) filter (where ex_strict <> ex_set) as n_strict_set_disagree,
    count(*) filter (where ex_bag <> ex_set) as n_bag_set_disagree
from {{ ref('fct_turn_evaluations') }}
group by model, condition
