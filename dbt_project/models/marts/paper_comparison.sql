-- This run next to the figures the paper states (seed paper_claims), one row per claim x evaluated
-- model it applies to x condition x source. The paper's claims are about LLMs, so they are never
-- checked against the reference models (var('reference_models'); their own expectations are in
-- reference_expectations). A claim names its models as 'any' (every evaluated model that is not a
-- reference model: the turn-1 level, the stateless collapse, MBS at turn 1), 'paper' (each of the
-- paper's five models) or one paper model; registry keys
-- map to paper models through the paper_models seed (reasoning-mode entries). Its condition may be
-- 'each' (the paper's five) or 'memory' (all but A); its source 'each' (every source of var('sources')).
-- is_inside: round(value, decimals) within [low, high], at the precision the paper states.
with paper_claims as (
    select * from {{ ref('paper_claims') }}
),

registry_models as (
    select * from {{ ref('paper_models') }}
),

condition_summary as (
    select * from {{ paper_only(ref('agg_condition_summary')) }}
),

ex_by_source as (
    select * from {{ paper_only(ref('agg_ex_by_source')) }}
),

ex_by_turn_depth as (
    select * from {{ paper_only(ref('agg_ex_by_turn_depth')) }}
),

turns as (
    select * from {{ paper_only(ref('fct_turn_evaluations')) }}
),

mbs as (
    select * from {{ ref('agg_mbs') }}
),

ablation as (
    select * from {{ ref('agg_ablation') }}
),

error_taxonomy as (
    select * from {{ ref('agg_error_taxonomy') }}
),

reasoning_vs_standard as (
    select * from {{ ref('agg_reasoning_vs_standard') }}
),

claims as (
    select
        * exclude (condition, minus_model),
        nullif(condition, '') as condition,
        nullif(minus_model, '') as minus_model
    from paper_claims
),

paper_models as (
    select * from registry_models where reasoning_mode = 'reasoning'
),

evaluated as (
    select distinct model from condition_summary
    where model not in ({{ "'" ~ var('reference_models') | join("', '") ~ "'" }})
),

claim_models as (
    select c.claim_id, e.model
    from claims as c
    cross join evaluated as e
    where c.models = 'any'
    union all
    select c.claim_id, p.model
    from claims as c
    inner join paper_models as p
        on c.models = 'paper' or c.models = p.paper_model
    inner join evaluated as e
        on e.model = p.model
),

by_condition as (
    select
        c.*,
        unnest(case
            when c.condition = 'each' then {{ var('paper_conditions') }}
            when c.condition = 'memory' then list_filter({{ var('paper_conditions') }}, lambda x: x <> 'A')
            else [c.condition]
        end) as run_condition
    from claims as c
),

expanded as (
    select
        c.*,
        unnest(case when c.source = 'each' then {{ var('sources') }} else [c.source] end) as run_source
    from by_condition as c
),

-- Every number a claim can be about, in one long table (metric, model, condition, source, depth).
run_values as (
    select 'ex_pct' as metric, model, condition, source, null::integer as turn_depth, ex_pct as value
    from ex_by_source
    union all
    select 'ex_pct_at_turn', model, condition, 'ALL', turn_depth, ex_pct
    from ex_by_turn_depth
    union all
    select 'ex_memory_critical_pct_at_turn', model, condition, 'ALL', turn_depth, ex_memory_critical_pct
    from ex_by_turn_depth
    union all
    select 'ex_memory_critical_pct_from_turn', t.model, t.condition, 'ALL', d.depth,
        {{ pct('count(*) filter (where t.ex_strict)', 'count(*)') }}
    from turns as t
    inner join (select unnest(range(1, 11)) as depth) as d
        on t.turn_index >= d.depth
    where t.memory_critical
    group by t.model, t.condition, d.depth
    union all
    select 'mbs_pp', model, condition, 'ALL', turn_depth, mbs_pp
    from mbs
    union all
    select 'ep_pp', model, null, source, null, ep_pp from ablation
    union all
    select 'sem_pp', model, null, source, null, sem_pp from ablation
    union all
    select 'net_pp', model, null, source, null, net_pp from ablation
    union all
    select error_class || '_pct', model, condition, 'ALL', null, share_pct
    from error_taxonomy
    union all
    select 'reasoning_gain_pp', reasoning_model, condition, source, null, reasoning_gain_pp
    from reasoning_vs_standard
),

compared as (
    select
        e.claim_id,
        e.metric,
        e.models as claim_models,
        cm.model,
        p.model as minus_model,
        e.run_condition as condition,
        e.turn_depth,
        e.run_source as source,
        e.low,
        e.high,
        e.decimals,
        case
            when e.metric = 'ex_gap_pp' then a.value - b.value
            else v.value
        end as value,
        e.section,
        e.sentence
    from expanded as e
    inner join claim_models as cm
        on cm.claim_id = e.claim_id
    left join paper_models as p
        on p.paper_model = e.minus_model
    left join run_values as v
        on v.metric = e.metric
        and v.model = cm.model
        and v.condition is not distinct from e.run_condition
        and v.source = e.run_source
        and v.turn_depth is not distinct from e.turn_depth
    left join run_values as a
        on e.metric = 'ex_gap_pp'
        and a.metric = 'ex_pct'
        and a.model = cm.model
        and a.condition = e.run_condition
        and a.source = e.run_source
    left join run_values as b
        on e.metric = 'ex_gap_pp'
        and b.metric = 'ex_pct'
        and b.model = p.model
        and b.condition = e.run_condition
        and b.source = e.run_source
)

select
    *,
    round(value, decimals) between low and high as is_inside,
    case
        when value is null then 'not evaluated'
        when round(value, decimals) between low and high then 'inside'
        else 'outside'
    end as verdict
from compared
