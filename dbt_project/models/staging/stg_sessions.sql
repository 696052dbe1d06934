-- One row per benchmark session of each benchmark built.
{%- set with_extended = has_files(source('memsql', 'extended_turn_files')) %}
with {{ source_ctes(['sessions', 'extended_sessions'] if with_extended else ['sessions']) }}
renamed as (
    select '{{ var("paper_benchmark") }}' as benchmark, session_id, source, source_name, tier, n_turns, variant_id
    from sessions
    {%- if with_extended %}

    union all

    select '{{ var("extended_benchmark") }}' as benchmark, session_id, source, source_name, tier, n_turns, variant_id
    from extended_sessions
    {%- endif %}
)

select * from renamed
