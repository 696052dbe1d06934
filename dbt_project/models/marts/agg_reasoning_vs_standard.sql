-- Reasoning against standard mode per model (the paper's Tables 9 and 14): EX of the registry entry
-- with the paper's reasoning configuration next to the same model without it (paper_models seed),
-- per condition x source (and 'ALL'). A side that was not evaluated is null, and so is the gain.
-- Each EX carries its n and 95 % Wilson interval (docs: interval_method), and the gain its paired
-- interval (the pair's row of agg_model_pair_gaps, turned to reasoning - standard; docs:
-- bootstrap_method). Each side's recorded reasoning tokens per turn show whether it did reason.
with ex as (
    select * from {{ paper_only(ref('agg_ex_by_source')) }}
),

turns as (
    select * from {{ ref('fct_turn_evaluations') }}
),

paper_models as (
    select * from {{ ref('paper_models') }}
),

model_pair_gaps as (
    select * from {{ ref('agg_model_pair_gaps') }}
),

reasoning as (
    select
        model,
        condition,
        coalesce(source, '{{ var("all_sources") }}') as source,
        avg(reasoning_tokens) as mean_reasoning_tokens
    from turns
    group by grouping sets ((model, condition, source), (model, condition))
),

pairs as (
    select
        r.paper_model,
        r.model as reasoning_model,
        s.model as standard_model
    from paper_models as r
    inner join paper_models as s
        on s.paper_model = r.paper_model
        and s.reasoning_mode = 'standard'
    where r.reasoning_mode = 'reasoning'
),

cells as (
    select distinct p.paper_model, p.reasoning_model, p.standard_model, e.condition, e.source
    from pairs as p
    inner join ex as e
        on e.model in (p.reasoning_model, p.standard_model)
)

select
    c.paper_model,
    c.condition,
    c.source,
    c.reasoning_model,
    c.standard_model,
    r.n_turns as n_turns_reasoning,
    r.ex_pct as ex_reasoning_pct,
    r.ex_ci_lo_pct as ex_reasoning_ci_lo_pct,
    r.ex_ci_hi_pct as ex_reasoning_ci_hi_pct,
    rt.mean_reasoning_tokens as mean_reasoning_tokens_reasoning,
    s.n_turns as n_turns_standard,
    s.ex_pct as ex_standard_pct,
    s.ex_ci_lo_pct as ex_standard_ci_lo_pct,
    s.ex_ci_hi_pct as ex_standard_ci_hi_pct,
    st.mean_reasoning_tokens as mean_reasoning_tokens_standard,
    r.ex_pct - s.ex_pct as reasoning_gain_pp,
    g.gap_se_pp as reasoning_gain_se_pp,
    case when g.model_a = c.reasoning_model then g.gap_ci_lo_pp else -g.gap_ci_hi_pp end
        as reasoning_gain_ci_lo_pp,
    case when g.model_a = c.reasoning_model then g.gap_ci_hi_pp else -g.gap_ci_lo_pp end
        as reasoning_gain_ci_hi_pp
from cells as c
left join ex as r
    on r.model = c.reasoning_model
    and r.condition = c.condition
    and r.source = c.source
left join ex as s
    on s.model = c.standard_model
    and s.condition = c.condition
    and s.source = c.source
left join reasoning as rt
    on rt.model = c.reasoning_model
    and rt.condition = c.condition
    and rt.source = c.source
left join reasoning as st
    on st.model = c.standard_model
    and st.condition = c.condition
    and st.source = c.source
left join model_pair_gaps as g
    on g.model_a = least(c.reasoning_model, c.standard_model)
    and g.model_b = greatest(c.reasoning_model, c.standard_model)
    and g.condition = c.condition
    and g.source = c.source
