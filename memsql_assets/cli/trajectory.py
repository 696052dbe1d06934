"""`memsql trajectory`: search the AgentSM trajectory store, its coverage, and the θ × N sensitivity."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memsql_assets.cli.options import json_flag
from memsql_assets.lib.trajectories.phases import PHASES
from memsql_assets.lib.vocabulary import SOURCE_NAMES


@click.group("trajectory", help="the AgentSM trajectory store")
def command() -> None:
    pass


@command.command("search", help="the synthetic questions of DB most similar to QUESTION")
@click.argument("db", type=click.Choice(SOURCE_NAMES))
@click.argument("question")
@click.option("-k", type=int, default=3, show_default=True)
@click.option("--phase", type=click.Choice(PHASES), help="print only this phase")
def search(db: str, question: str, k: int, phase: str | None) -> int:
    from memsql_assets.lib.memory.chroma import chroma_client
    from memsql_assets.lib.paths import memsql_home
    from memsql_assets.lib.trajectories.store import retrieve
    from memsql_assets.lib.trajectories.store import search as search_store

    client = chroma_client(memsql_home())
    hits = search_store(client, db, question, k=k)
    if not hits:
        print(f"no trajectories for {db}: materialize trajectory_store (memsql run)")
        return 1
    for hit in hits:
        print(f"{hit.similarity:.3f}  {hit.question_id}  {hit.question}  ({hit.step_count} steps)")
    best = retrieve(client, db, question, phase=phase)
    if best is not None:
        print(f"\n--- trajectory of {best.question_id}{f' ({phase})' if phase else ''} ---\n")
        print(best.markdown)
    return 0


@command.command("coverage", help="share of benchmark questions whose top-1 trajectory reads their tables")
@json_flag()
def coverage(as_json: bool) -> int:
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.memory.chroma import chroma_client
    from memsql_assets.lib.paths import benchmark_dir, embeddings_cache_dir, memsql_home
    from memsql_assets.lib.trajectories.store import store_coverage

    home = memsql_home()
    turns = read_turns(benchmark_dir(home))
    report = store_coverage(chroma_client(home), turns, embeddings_store=embeddings_cache_dir(home))
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        print(f"coverage {report['coverage']:.1%} of {report['questions']} distinct benchmark questions")
        for db, share in report["by_source"].items():
            print(
                f"  {db:<15} {share:.1%}  mean Jaccard {report['mean_jaccard'][db]:.3f}  "
                f"mean similarity {report['mean_similarity'][db]:.3f}"
            )
    return 0 if report["meets_target"] else 1


class Numbers(click.ParamType):
    """A comma-separated list: of θ values ('3' a count of trajectories, '0.3' a fraction,
    trajectories/composites.py) or of integers."""

    name = "LIST"

    def __init__(self, integers: bool):
        self.integers = integers

    def convert(self, value: object, param: object, ctx: object) -> tuple[float | int, ...]:
        from memsql_assets.lib.harness.trajectory_sensitivity import theta_arg

        if isinstance(value, tuple):
            return value
        try:
            return tuple((int if self.integers else theta_arg)(v.strip()) for v in str(value).split(","))
        except ValueError:
            self.fail(f"{value!r}: expected comma-separated {'integers' if self.integers else 'numbers'}")


@command.command(
    "sensitivity",
    help="θ × N: build a store per pair and run the reference agent under E (and T) on a sample of sessions",
)
@click.option("--thetas", type=Numbers(integers=False), help="θ values, comma-separated (e.g. 3,0.5)")
@click.option("--budgets", type=Numbers(integers=True), help="N values, comma-separated (e.g. 30,90)")
@click.option("--sessions", type=int, help="the agent's sample of sessions")
@click.option("--max-len", type=int, default=3, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), help="also write the figures to this JSON file")
@json_flag()
def sensitivity(
    thetas: tuple[float | int, ...] | None, budgets: tuple[int, ...] | None, sessions: int | None, max_len: int, seed: int,
    out: Path | None, as_json: bool,
) -> int:  # fmt: skip
    import tempfile

    from memsql_assets.lib.atomic import write_text_atomic
    from memsql_assets.lib.harness import trajectory_sensitivity as ts
    from memsql_assets.lib.paths import benchmark_dir, memsql_home

    home = memsql_home()
    if not benchmark_dir(home).exists():
        print(f"memsql trajectory sensitivity: no benchmark in {home}: run `memsql run` first", file=sys.stderr)
        return 2
    spec = ts.Sweep(
        tuple(thetas or ts.DEFAULT_THETAS), tuple(budgets or ts.DEFAULT_BUDGETS), sessions or ts.DEFAULT_SESSIONS,
        max_len, seed,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="memsql-sensitivity-") as tmp:
        result = ts.sweep(home, Path(tmp), spec, say=lambda line: print(line, file=sys.stderr, flush=True))
    if out:
        write_text_atomic(out, json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2) if as_json else "\n".join(ts.table_lines(result)))
    return 0
