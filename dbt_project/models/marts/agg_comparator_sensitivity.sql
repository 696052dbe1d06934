-- How much the headline EX depends on the comparator, per model x condition: strict (the paper's:
-- stringified multisets), bag (numbers compared with tolerance) and set (bag without duplicates);
-- each EX with its 95 % Wilson interval over sessions (docs: interval_method).
{%- set verdicts = ['strict', 'bag', 'set'] %}
with turns as (
    select * from {{ paper_only(ref('fct_turn_evaluations')) }}
)

select
    model,
    condition,
    count(*) as n_turns,
    {%- for v in verdicts %}
    {{ pct('count(*) filter (where ex_' ~ v ~ ')', 'count(*)') }} as ex_{{ v }}_pct,
    {%- endfor %}
    {%- for v in verdicts %}
    ex_ci_lo(count(*) filter (where ex_{{ v }}), count(*), count(distinct session_id)) as ex_{{ v }}_ci_lo_pct,
    ex_ci_hi(count(*) filter (where ex_{{ v }}), count(*), count(distinct session_id)) as ex_{{ v }}_ci_hi_pct,
    {%- endfor %}
    {{ pct('count(*) filter (where ex_bag)', 'count(*)') }}
        - {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as bag_minus_strict_pp,
    {{ pct('count(*) filter (where ex_set)', 'count(*)') }}
        - {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as set_minus_strict_pp,
    count(*) filter (where ex_strict <> ex_bag) as n_strict_bag_disagree,
    count(*) filter (where ex_strict <> ex_set) as n_strict_set_disagree,
    count(*) filter (where ex_bag <> ex_set) as n_bag_set_disagree
from turns
group by model, condition
