-- One row per benchmark session.
select
    session_id,
    source,
    source_name,
    tier,
    n_turns,
    variant_id
from {{ source('memsql', 'sessions') }}
