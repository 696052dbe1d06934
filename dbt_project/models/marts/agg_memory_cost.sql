-- What each condition's memory costs, per benchmark x model x condition (the "marginal cost" of the
-- paper's RQ2, measured): the prompt tokens memory adds to A's prompt for the same turns, how long
-- retrieval takes per turn, and what the memory's stores held (from the partition's summary.json).
-- Tokens added: each turn's prompt_tokens under the condition minus the same model's prompt_tokens
-- for the same session, turn and epoch under A (the prompt without memory); null without an A result.
with turns as (
    select * from {{ ref('fct_turn_evaluations') }}
),

partition_summaries as (
    select * from {{ ref('stg_partition_summaries') }}
),

stateless as (
    select benchmark, model, session_id, turn_index, epoch, prompt_tokens as prompt_tokens_a
    from turns
    where condition = '{{ var("floor_condition") }}'
),

paired as (
    select t.*, s.prompt_tokens_a, t.prompt_tokens - s.prompt_tokens_a as memory_prompt_tokens
    from turns as t
    left join stateless as s
        on s.benchmark = t.benchmark
        and s.model = t.model
        and s.session_id = t.session_id
        and s.turn_index = t.turn_index
        and s.epoch = t.epoch
),

per_condition as (
    select
        benchmark,
        model,
        condition,
        count(*) as n_turns,
        {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
        avg(prompt_tokens) as mean_prompt_tokens,
        avg(prompt_tokens_a) as mean_prompt_tokens_a,
        avg(memory_prompt_tokens) as mean_memory_prompt_tokens,
        cast(sum(memory_prompt_tokens) as bigint) as memory_prompt_tokens,
        100.0 * sum(memory_prompt_tokens) / nullif(sum(prompt_tokens_a), 0) as memory_prompt_tokens_pct,
        avg(retrieval_ms) as mean_retrieval_ms,
        quantile_cont(retrieval_ms, 0.5) as p50_retrieval_ms,
        quantile_cont(retrieval_ms, 0.95) as p95_retrieval_ms,
        count(*) filter (where error_class = 'memory_error') as n_memory_errors
    from paired
    group by benchmark, model, condition
)

select
    c.*,
    p.memory_implementation,
    p.memory_store_entries,
    p.memory_store_bytes
from per_condition as c
left join partition_summaries as p
    on p.benchmark = c.benchmark
    and p.model = c.model
    and p.condition = c.condition
