-- One row per benchmark turn, typed; list/JSON fields reduced to what metrics need.
select
    session_id,
    turn_index,
    session_id || '#' || lpad(cast(turn_index as varchar), 2, '0') as turn_key,
    source,
    tier,
    question,
    gt_sql,
    fallback_sql,
    requires_prior_context,
    len(referenced_context_keys) as n_referenced_keys,
    memory_critical,
    variant_id,
    guess_rate
from {{ source('memsql', 'turns') }}
