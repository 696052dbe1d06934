-- Every result row of a current-benchmark partition is a benchmark turn, with the benchmark's
-- source, tier and memory-critical flag (the marts take those from the benchmark).
select r.model, r.condition, r.session_id, r.turn_index, 'no such benchmark turn' as problem
from {{ ref('stg_turn_results') }} as r
inner join {{ ref('int_partitions') }} as p on p.result_file = r.result_file and p.is_current_benchmark
left join {{ ref('stg_turns') }} as t on t.benchmark = r.benchmark and t.session_id = r.session_id and t.turn_index = r.turn_index
where t.session_id is null
union all
select r.model, r.condition, r.session_id, r.turn_index, 'source, tier or memory_critical differs' as problem
from {{ ref('stg_turn_results') }} as r
inner join {{ ref('int_partitions') }} as p on p.result_file = r.result_file and p.is_current_benchmark
inner join {{ ref('stg_turns') }} as t on t.benchmark = r.benchmark and t.session_id = r.session_id and t.turn_index = r.turn_index
where r.source is distinct from t.source
   or r.tier is distinct from t.tier
   or r.memory_critical is distinct from t.memory_critical
