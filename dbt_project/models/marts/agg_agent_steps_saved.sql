-- The agent baseline against AgentSM per benchmark x model x source (and 'ALL'), once for each pair of
-- agent conditions (var agent_pairs: T against E without the schema in the prompt, T_schema against
-- E_schema with it): EX % of each with its Wilson interval, median and mean steps, tool calls and
-- tokens per turn of each (the means with their intervals), the steps the retrieved trajectory saved
-- (median T - median E, and in % of T's) and who earned them (the scripted reference agent or a model),
-- the exploration share of each, and on the paper benchmark Traj = E - T with its paired
-- session-bootstrap interval (agg_ablation: the pair without the schema). Only models evaluated under
-- both conditions of a pair have its row.
{%- set t = var('agent_baseline_condition') %}
{%- set measures = ['mean_steps', 'mean_tool_calls', 'mean_tokens', 'explore_share'] %}
with steps as (
    select * from {{ ref('agg_agent_steps') }}
),

ablation as (
    select * from {{ ref('agg_ablation') }}
),

compared as (
    {%- for pair in var('agent_pairs') %}
    select
        b.benchmark,
        b.model,
        {{ 'true' if pair.schema_in_prompt else 'false' }} as schema_in_prompt,
        b.source,
        b.condition as condition_t,
        a.condition as condition_e,
        b.n_sessions as n_sessions_t,
        a.n_sessions as n_sessions_e,
        b.n_turns as n_turns_t,
        a.n_turns as n_turns_e,
        b.ex_pct as ex_t_pct,
        b.ex_ci_lo_pct as ex_t_ci_lo_pct,
        b.ex_ci_hi_pct as ex_t_ci_hi_pct,
        a.ex_pct as ex_e_pct,
        a.ex_ci_lo_pct as ex_e_ci_lo_pct,
        a.ex_ci_hi_pct as ex_e_ci_hi_pct,
        b.median_steps as median_steps_t,
        a.median_steps as median_steps_e,
        {%- for m in measures %}
        b.{{ m }} as {{ m }}_t,
        b.{{ m }}_ci_lo as {{ m }}_t_ci_lo,
        b.{{ m }}_ci_hi as {{ m }}_t_ci_hi,
        a.{{ m }} as {{ m }}_e,
        a.{{ m }}_ci_lo as {{ m }}_e_ci_lo,
        a.{{ m }}_ci_hi as {{ m }}_e_ci_hi,
        {%- endfor %}
        b.median_steps - a.median_steps as steps_saved,
        {{ pct('b.median_steps - a.median_steps', 'b.median_steps') }} as steps_saved_pct,
        a.trajectory_tables_used_rate as trajectory_tables_used_rate_e
    from steps as b
    inner join steps as a
        on a.benchmark = b.benchmark
        and a.model = b.model
        and a.source = b.source
        and a.condition = '{{ pair.agentsm }}'
    where b.condition = '{{ pair.baseline }}'
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
),

final as (
    select
        c.*,
        case
            when c.model = '{{ var("reference_agent") }}' then 'reference agent (scripted)' else 'model'
        end as steps_saved_by,
        x.traj_pp,
        x.traj_ci_lo_pp,
        x.traj_ci_hi_pp
    from compared as c
    left join ablation as x
        on c.benchmark = '{{ var("paper_benchmark") }}'
        and c.condition_t = '{{ t }}'
        and x.model = c.model
        and x.source = c.source
)

select * from final
