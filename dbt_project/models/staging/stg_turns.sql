-- One row per benchmark turn of each benchmark built, typed; list/JSON fields reduced to what metrics
-- need. The extended benchmark's turns carry their phenomenon tag, stale ground truth and recall
-- distance and phrasing index (null on the paper benchmark's turns).
{%- set columns = [
    'session_id', 'turn_index', 'source', 'tier', 'question', 'gt_sql', 'fallback_sql',
    'requires_prior_context', 'memory_critical', 'variant_id', 'guess_rate'
] %}
{%- set with_extended = has_files(source('memsql', 'extended_turn_files')) %}
with {{ source_ctes(['turns', 'extended_turns'] if with_extended else ['turns']) }}
renamed as (
    select
        '{{ var("paper_benchmark") }}' as benchmark,
        {{ columns | join(', ') }},
        session_id || '#' || lpad(cast(turn_index as varchar), 2, '0') as turn_key,
        len(referenced_context_keys) as n_referenced_keys,
        cast(null as varchar) as tag,
        cast(null as varchar) as stale_gt_sql,
        cast(null as integer) as recall_distance,
        cast(null as integer) as phrasing_index
    from turns
    {%- if with_extended %}

    union all

    select
        '{{ var("extended_benchmark") }}' as benchmark,
        {{ columns | join(', ') }},
        session_id || '#' || lpad(cast(turn_index as varchar), 2, '0') as turn_key,
        len(referenced_context_keys) as n_referenced_keys,
        tag,
        stale_gt_sql,
        recall_distance,
        phrasing_index
    from extended_turns
    {%- endif %}
)

select * from renamed
