-- error_class = 'correct' exactly when ex_strict (taxonomy.py precedence rule 1); only failed turns
-- that another session's episode reached can be contaminated, and only failed turns with a fallback
-- match it.
select turn_evaluation_id, error_class, ex_strict, contaminated, fallback_match, has_fallback
from {{ ref('fct_turn_evaluations') }}
where (error_class = 'correct') <> ex_strict
   or (contaminated and (ex_strict or not retrieved_other_session or contamination_source is null))
   or (fallback_match and (ex_strict or not has_fallback))
