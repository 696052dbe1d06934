-- One row per benchmark session of each benchmark built.
{%- set with_extended = has_files(source('memsql', 'extended_turn_files')) %}
with sessions as (
    select * from {{ source('memsql', 'sessions') }}
),

{% if with_extended -%}
extended_sessions as (
    select * from {{ source('memsql', 'extended_sessions') }}
),

{% endif -%}
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
