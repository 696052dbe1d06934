-- Result rows of usable partitions (evaluated against the current benchmark, and complete or a
-- labelled sample of whole sessions: a cut-short file never reaches the marts) joined to their
-- benchmark turn. The benchmark is the authority for a turn's attributes (source, tier, flags);
-- the test assert_results_agree_with_benchmark checks that the result files carry the same ones.
with turn_results as (
    select * from {{ ref('stg_turn_results') }}
),

partitions as (
    select * from {{ ref('int_partitions') }}
),

turns as (
    select * from {{ ref('stg_turns') }}
)

select
    r.model || '|' || r.condition || '|' || t.turn_key || '|' || cast(r.epoch as varchar) as turn_evaluation_id,
    r.benchmark,
    r.model,
    r.condition,
    r.session_id,
    r.turn_index,
    r.epoch,
    t.turn_key,
    t.source,
    t.tier,
    t.memory_critical,
    t.requires_prior_context,
    t.n_referenced_keys,
    t.fallback_sql is not null as has_fallback,
    r.ex_strict,
    r.ex_bag,
    r.ex_set,
    r.error_class,
    r.contaminated,
    r.contamination_source,
    r.fallback_match,
    r.stale_state,
    t.tag,
    t.recall_distance,
    t.variant_id,
    t.phrasing_index,
    -- Another session's episode supplied a resolved key (contamination by provenance needs one).
    coalesce(len(list_filter(
        from_json(r.supplying_sessions, '["VARCHAR"]'), lambda s: s <> r.session_id
    )), 0) > 0 as supplied_by_other_session,
    -- Another session's episode reached the prompt (retrieved, or supplied a key): only then can the
    -- turn be contaminated (by provenance or by value).
    coalesce(len(list_filter(
        list_concat(from_json(r.retrieved_sessions, '["VARCHAR"]'), from_json(r.supplying_sessions, '["VARCHAR"]')),
        lambda s: s <> r.session_id
    )), 0) > 0 as retrieved_other_session,
    r.gt_error,
    r.model_error_type,
    coalesce(r.prompt_tokens, 0) as prompt_tokens,
    coalesce(r.completion_tokens, 0) as completion_tokens,
    coalesce(r.prompt_tokens, 0) + coalesce(r.completion_tokens, 0) as total_tokens,
    r.reasoning_tokens,
    r.latency_s,
    coalesce(r.cost_usd, 0.0) as cost_usd,
    r.cache_hit,
    r.attempts,
    coalesce(r.retries, 0) as retries,  -- files before schema 4: never retried
    r.retrieval_ms,
    -- The agent's measures (conditions with tools); files before schema 5 read as 0 / null.
    coalesce(r.steps, 0) as steps,
    coalesce(r.tool_calls, 0) as tool_calls,
    coalesce(r.explore_share, 0.0) as explore_share,
    coalesce(r.execute_share, 0.0) as execute_share,
    coalesce(r.validate_share, 0.0) as validate_share,
    coalesce(r.composite_uses, 0) as composite_uses,
    r.trajectory_tables_used,
    r.agent_trace,
    r.extracted_sql,
    r.error_message,
    r.raw_output,
    r.resolved_keys,
    r.missing_keys,
    r.retrieved_sessions,
    r.supplying_sessions,
    r.request_key,
    r.benchmark_version,
    r.schema_version,
    p.result_file,
    p.partition_fingerprint,
    p.n_epochs,
    p.is_sample
from turn_results as r
inner join partitions as p
    on p.result_file = r.result_file
    and p.is_current_benchmark
    and (p.is_complete or p.is_sample)
inner join turns as t
    on t.benchmark = r.benchmark
    and t.session_id = r.session_id
    and t.turn_index = r.turn_index
