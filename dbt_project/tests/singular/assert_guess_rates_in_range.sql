-- Every memory-critical turn of the paper benchmark has a guess_rate in [0, 1], and no other turn
-- has one (the extended benchmark does not measure it).
select benchmark, session_id, turn_index, memory_critical, guess_rate
from {{ ref('stg_turns') }}
where (
    benchmark = '{{ var("paper_benchmark") }}'
    and memory_critical
    and (guess_rate is null or guess_rate < 0 or guess_rate > 1)
)
    or (not memory_critical and guess_rate is not null)
    or (benchmark <> '{{ var("paper_benchmark") }}' and guess_rate is not null)
