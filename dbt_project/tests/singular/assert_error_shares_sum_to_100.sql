-- The six error-class shares of each partition sum to 100 %, and the share of `correct` is its EX %.
with sums as (
    select model, condition, sum(share_pct) as total_pct,
           max(share_pct) filter (where error_class = 'correct') as correct_pct
    from {{ ref('agg_error_taxonomy') }}
    group by model, condition
)
select s.*, c.ex_pct
from sums as s
inner join {{ paper_only(ref('agg_condition_summary')) }} as c using (model, condition)
where abs(s.total_pct - 100) > 1e-9 or abs(s.correct_pct - c.ex_pct) > 1e-9
