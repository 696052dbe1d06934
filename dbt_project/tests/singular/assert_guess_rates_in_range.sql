-- Every memory-critical turn of either benchmark has a guess_rate in [0, 1], and no other turn has one.
select benchmark, session_id, turn_index, memory_critical, guess_rate
from {{ ref('stg_turns') }}
where (memory_critical and (guess_rate is null or guess_rate < 0 or guess_rate > 1))
    or (not memory_critical and guess_rate is not null)
