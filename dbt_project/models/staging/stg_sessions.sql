-- One row per benchmark session of each benchmark built.
select '{{ var("paper_benchmark") }}' as benchmark, session_id, source, source_name, tier, n_turns, variant_id
from {{ source('memsql', 'sessions') }}
{%- if has_files(source('memsql', 'extended_turn_files')) %}
union all
select '{{ var("extended_benchmark") }}' as benchmark, session_id, source, source_name, tier, n_turns, variant_id
from {{ source('memsql', 'extended_sessions') }}
{%- endif %}
