-- Tokens, latency and cost per model x condition (sums over the partition's turns; latency per turn).
with turns as (
    select * from {{ paper_only(ref('fct_turn_evaluations')) }}
)

select
    model,
    condition,
    count(*) as n_turns,
    count(*) filter (where ex_strict) as n_correct,
    cast(coalesce(sum(attempts), 0) as bigint) as n_model_calls,
    count(*) filter (where cache_hit) as n_cache_hits,
    cast(sum(prompt_tokens) as bigint) as prompt_tokens,
    cast(sum(completion_tokens) as bigint) as completion_tokens,
    cast(sum(total_tokens) as bigint) as total_tokens,
    avg(total_tokens) as mean_tokens_per_turn,
    cast(sum(reasoning_tokens) as bigint) as reasoning_tokens,
    avg(reasoning_tokens) as mean_reasoning_tokens_per_turn,
    count(*) filter (where reasoning_tokens > 0) as n_turns_with_reasoning,
    avg(latency_s) as mean_latency_s,
    quantile_cont(latency_s, 0.5) as p50_latency_s,
    quantile_cont(latency_s, 0.95) as p95_latency_s,
    sum(cost_usd) as total_cost_usd,
    avg(cost_usd) as cost_per_turn_usd,
    sum(cost_usd) / nullif(count(*) filter (where ex_strict), 0) as cost_per_correct_turn_usd,
    avg(retrieval_ms) as mean_retrieval_ms
from turns
group by model, condition
