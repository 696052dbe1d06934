-- AgentSM's measures per benchmark x model x condition x source, plus source = 'ALL' (grouping sets),
-- over the turns that ran through the agent loop (steps > 0: conditions with tools): EX % with its 95 %
-- Wilson interval over sessions, median and mean steps, tool calls and tokens per turn, phase shares
-- (the means with 95 % normal intervals, sessions as n), composite uses and the rate at which the
-- agent used the retrieved trajectory's tables.
with turns as (
    select * from {{ ref('fct_turn_evaluations') }}
    where steps > 0
),

agent as (
    select
        benchmark,
        model,
        condition,
        coalesce(source, '{{ var("all_sources") }}') as source,
        count(distinct session_id) as n_sessions,
        count(*) as n_turns,
        count(*) filter (where ex_strict) as n_correct,
        {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
        quantile_cont(steps, 0.5) as median_steps,
        avg(steps) as mean_steps,
        {{ mean_ci('steps', '-') }} as mean_steps_ci_lo,
        {{ mean_ci('steps', '+') }} as mean_steps_ci_hi,
        sum(tool_calls) / sum(steps) as mean_tool_calls_per_step,
        avg(tool_calls) as mean_tool_calls,
        {{ mean_ci('tool_calls', '-') }} as mean_tool_calls_ci_lo,
        {{ mean_ci('tool_calls', '+') }} as mean_tool_calls_ci_hi,
        avg(total_tokens) as mean_tokens,
        {{ mean_ci('total_tokens', '-') }} as mean_tokens_ci_lo,
        {{ mean_ci('total_tokens', '+') }} as mean_tokens_ci_hi,
        avg(explore_share) as explore_share,
        {{ mean_ci('explore_share', '-') }} as explore_share_ci_lo,
        {{ mean_ci('explore_share', '+') }} as explore_share_ci_hi,
        avg(execute_share) as execute_share,
        avg(validate_share) as validate_share,
        cast(sum(composite_uses) as bigint) as composite_uses,
        avg(composite_uses) as mean_composite_uses_per_turn,
        count(trajectory_tables_used) as n_with_trajectory,
        avg(cast(trajectory_tables_used as double)) as trajectory_tables_used_rate
    from turns
    group by grouping sets ((benchmark, model, condition, source), (benchmark, model, condition))
),

final as (
    select
        *,
        ex_ci_lo(n_correct, n_turns, n_sessions) as ex_ci_lo_pct,
        ex_ci_hi(n_correct, n_turns, n_sessions) as ex_ci_hi_pct
    from agent
)

select * from final
