-- error_class = 'correct' exactly when ex_strict (taxonomy.py precedence rule 1), and only failed
-- turns with a fallback can be contaminated.
select turn_evaluation_id, error_class, ex_strict, contaminated, has_fallback
from {{ ref('fct_turn_evaluations') }}
where (error_class = 'correct') <> ex_strict
   or (contaminated and (ex_strict or not has_fallback))
