-- Every unordered pair of models (model_a < model_b) compared on EX per source (and 'ALL') and
-- condition: gap_pp = EX(model_a) - EX(model_b), with its 95 % interval by the session bootstrap,
-- paired (both models resampled with the same sessions, each one's epochs from its own; docs:
-- bootstrap_method). Flagged when the
-- interval excludes 0. Finds the paper's "EDGAR regression" kind of result.
with ex_by_source as (
    select * from {{ paper_only(ref('agg_ex_by_source')) }}
),

turns as (
    select * from {{ ref('fct_turn_evaluations') }}
),

ex as (
    select model, condition, source, n_turns, ex_pct
    from ex_by_source
),

per_session as (
    {{ session_ex_counts('turns', "benchmark = '" ~ var('paper_benchmark') ~ "'") }}
),

pairs as (
    select distinct a.model as model_a, b.model as model_b, a.condition
    from ex as a
    inner join ex as b on b.condition = a.condition and a.model < b.model
),

paired as (
    select p.model_a, p.model_b, s.condition, s.source, s.session_id, s.epoch, 'x' as side, s.n, s.c
    from pairs as p
    inner join per_session as s on s.model = p.model_a and s.condition = p.condition
    union all
    select p.model_a, p.model_b, s.condition, s.source, s.session_id, s.epoch, 'y' as side, s.n, s.c
    from pairs as p
    inner join per_session as s on s.model = p.model_b and s.condition = p.condition
),

intervals as (
    select * from {{ session_bootstrap('paired', ['model_a', 'model_b', 'condition', 'source']) }}
)

select
    a.model as model_a,
    b.model as model_b,
    a.condition,
    a.source,
    a.n_turns as n_turns_a,
    b.n_turns as n_turns_b,
    a.ex_pct as ex_a_pct,
    b.ex_pct as ex_b_pct,
    a.ex_pct - b.ex_pct as gap_pp,
    abs(a.ex_pct - b.ex_pct) as abs_gap_pp,
    i.se_pp as gap_se_pp,
    i.ci_lo_pp as gap_ci_lo_pp,
    i.ci_hi_pp as gap_ci_hi_pp,
    case
        when a.ex_pct < b.ex_pct then a.model
        when b.ex_pct < a.ex_pct then b.model
    end as lower_model,
    coalesce(i.ci_lo_pp > 0 or i.ci_hi_pp < 0, false) as is_flagged,
    (a.model in {{ "('" ~ var('reference_models') | join("', '") ~ "')" }}
        or b.model in {{ "('" ~ var('reference_models') | join("', '") ~ "')" }}) as involves_reference_model
from ex as a
inner join ex as b
    on a.condition = b.condition
    and a.source = b.source
    and a.model < b.model
left join intervals as i
    on i.model_a = a.model
    and i.model_b = b.model
    and i.condition = a.condition
    and i.source = a.source
