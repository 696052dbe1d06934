-- How guessable the memory-critical turns are without memory, per benchmark x source x turn depth and
-- over each source and the whole benchmark (rows with turn_depth null): the mean guess_rate (docs:
-- guess_rate), its maximum, and how many turns some other profile's values answer at all.
with turns as (
    select * from {{ ref('stg_turns') }}
),

critical as (
    select benchmark, source, turn_index as turn_depth, guess_rate
    from turns
    where memory_critical
),

grouped as (
    select
        benchmark,
        coalesce(source, 'ALL') as source,
        turn_depth,
        count(*) as n_memory_critical,
        count(*) filter (where guess_rate > 0) as n_guessable,
        100.0 * avg(guess_rate) as mean_guess_rate_pct,
        100.0 * max(guess_rate) as max_guess_rate_pct
    from critical
    group by grouping sets ((benchmark, source, turn_depth), (benchmark, source), (benchmark))
)

select * from grouped
