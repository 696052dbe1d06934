-- Sample runs, apart from the full evaluations every other mart reports: labelled with their size
-- and interval, so that a quick look is never read as the partition's result.
with sample_summaries as (
    select * from {{ ref('stg_sample_summaries') }}
),

paper_version as (
    select * from {{ paper_only(ref('stg_benchmark_version')) }}
)

select
    model,
    condition,
    sample_sessions,
    epochs,
    n_turns,
    ex_strict,
    ex_ci_lo,
    ex_ci_hi,
    'sample of ' || sample_sessions || ' sessions x ' || epochs || ' epochs, EX '
        || round(ex_strict, 1) || ' % (95 % CI ' || round(ex_ci_lo, 1) || '–' || round(ex_ci_hi, 1) || ')' as label,
    benchmark_version = (select benchmark_version from paper_version) as current_benchmark
from sample_summaries
