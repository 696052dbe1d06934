"""Per-turn cost of the harness with a zero-latency model, by condition, against the SQL floor.

Not a test. Runs the real `evaluate_partition` (services, agent, runner, gateway, scorer, stores)
with the `gold` built-in (answers the ground truth, no latency; called in-process by the gateway,
so the litellm column below is 0) at concurrency 1, on a reduced benchmark home (every 10th session: 30 sessions, all
sources and tiers), and times the pieces around the real calls by wrapping methods in this process
(no library code is changed):

    retrieval   Agent.assemble minus prompt assembly (Redis recall, episodic / semantic /
                trajectory lookups, context resolution)
    prompt      build_messages + prompt_hash
    model       ModelGateway.acomplete minus the request-store write (key, store lookup, litellm)
      litellm     of which litellm.acompletion itself (0 for built-ins, which never reach litellm)
    sql         run_query calls inside score_turn (ground truth when not cached, generated, fallback)
    compare     score_turn minus sql (extraction, the three comparators, taxonomy, summary)
    persist     Agent.persist + request-store write + the per-session work (checkpoint, memory
                upkeep, Redis identity check), the latter spread evenly over the session's turns
    other       the rest of the turn (thread hand-offs, building the row)

The floor of a turn is executing its ground-truth SQL and the generated SQL alone (run_query on a
read-only connection of its own, no cache; median of 3), measured right after each turn, so that a
turn and its floor see the same machine load.
Overhead = turn cost - floor, per turn; the table shows medians. Targets: median overhead
<= 1x the floor for A, B, B_wm5 and <= 10 ms for C, D, E. Partition setup (Redis start, embedding
the questions, schema text) is reported apart: it is paid once per partition, not per turn.

    .venv/bin/python bench/harness.py [--rounds 2] [--every 10] [--conditions A B ...] [--profile D]
    .venv/bin/python bench/harness.py --floor-vs REV   # the floor alone: REV's sandbox vs today's
    .venv/bin/python bench/harness.py --conditions A B B_wm5 --what-if no-store-write in-process-window

`--what-if` prices what the pieces above cannot separate, by removing it in this process (a
measurement, never a configuration): `no-store-write` skips the request store's file write,
`in-process-window` keeps working memory in a dict (the same validation and JSON, no Redis round
trip, no server-identity check); `a+b` removes both. Each condition also runs once per what-if,
interleaved in every round, and shows as its own row ("B - in-process-window").

`--floor-vs REV` runs no partition: it imports `open_readonly` and `run_query` as of git revision
REV beside today's and measures the floor of every turn with both, alternating query by query
(median of 3 each), so that a change to the SQL sandbox is judged on the same load.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import functools
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _common as c
import litellm

import memsql_assets.lib.agent.agent as agent_mod
import memsql_assets.lib.harness.runner as runner_mod
import memsql_assets.lib.memory.builtin as builtin_mod
import memsql_assets.lib.sql.result_cache as result_cache_mod
import memsql_assets.lib.trajectories.lookup as lookup_mod
from memsql_assets.lib.agent.agent import Agent
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.evaluate import EvalSettings, evaluate_partition
from memsql_assets.lib.memory.episodic import EpisodicMemory
from memsql_assets.lib.memory.working import WorkingMemory, validate_payload
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import benchmark_dir, source_db_path
from memsql_assets.lib.sql.execute import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S, run_query
from memsql_assets.lib.sql.result_cache import RESULTS, bare_sql
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.vocabulary import CONDITION_NAMES, SOURCE_BY_PREFIX

CONDITIONS = CONDITION_NAMES
MODEL = "gold-seq"
REGISTRY_YAML = f"""models:
  {MODEL}:
    description: the gold built-in at concurrency 1 (benchmark registry)
    litellm_model: memsql/gold
    kind: builtin
    reasoning: {{type: none}}
    max_concurrency: 1
    price_per_mtok: {{input: 0, output: 0}}
    enabled: true
"""
SESSION_KEYS = ("checkpoint", "wm_clear", "ep_forget", "ep_flush", "total")
PIECES = ("retrieval", "prompt", "model", "litellm", "sql", "compare", "persist", "other")

CURRENT: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar("bench_turn", default=None)
SESSION: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar(
    "bench_session", default=None
)


def _add(var: contextvars.ContextVar, key: str, dt: float) -> None:
    rec = var.get()
    if rec is not None:
        rec[key] = rec.get(key, 0.0) + dt


def _timed_sync(fn: Any, key: str, var: contextvars.ContextVar = CURRENT) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _add(var, key, time.perf_counter() - t0)

    return wrapper


def _timed_async(fn: Any, key: str) -> Any:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            _add(CURRENT, key, time.perf_counter() - t0)

    return wrapper


@contextlib.contextmanager
def instrumented(
    turn_log: list[dict[str, Any]], session_log: list[dict[str, Any]], commit_log: dict[str, dict[str, float]]
) -> Iterator[None]:
    """Wrap the real calls; everything is restored on exit."""
    patches: list[tuple[Any, str, Any]] = []

    def patch(obj: Any, name: str, new: Any) -> None:
        patches.append((obj, name, getattr(obj, name)))
        setattr(obj, name, new)

    orig_turn = runner_mod.PartitionRunner.run_turn
    orig_session = runner_mod.PartitionRunner.run_session
    orig_commit = runner_mod.PartitionRunner.commit

    async def run_turn(self: Any, turn: Any, sent: Any = None) -> dict[str, Any]:
        rec: dict[str, float] = {}
        token = CURRENT.set(rec)
        t0 = time.perf_counter()
        try:
            row = await orig_turn(self, turn, sent)
        finally:
            rec["total"] = time.perf_counter() - t0
            CURRENT.reset(token)
        f0 = time.perf_counter()
        rec["floor"] = floor_of(self.db_paths[turn["source"]], turn["gt_sql"], row["extracted_sql"])
        rec["floor_wall"] = time.perf_counter() - f0  # not part of the session's own time
        turn_log.append(
            {
                "session_id": turn["session_id"],
                "turn_index": turn["turn_index"],
                "cache_hit": row["cache_hit"],
                **rec,
            }
        )
        return row

    async def run_session(self: Any, turns: Any, stats: Any, sent: Any = None) -> list[dict[str, Any]]:
        rec: dict[str, float] = {}
        token = SESSION.set(rec)
        t0 = time.perf_counter()
        try:
            rows = await orig_session(self, turns, stats, sent)
        finally:
            rec["total"] = time.perf_counter() - t0
            SESSION.reset(token)
        session_log.append({"session_id": turns[0]["session_id"], "turns": len(rows), **rec})
        return rows

    async def commit(self: Any, sessions: Any) -> None:
        """The per-session durability work, done after the session (for C/D every few sessions):
        its time and its parts are spread over the sessions it covers, by their turns."""
        rec: dict[str, float] = {}
        token = SESSION.set(rec)
        t0 = time.perf_counter()
        try:
            await orig_commit(self, sessions)
        finally:
            rec["total"] = time.perf_counter() - t0
            SESSION.reset(token)
        turns = sum(len(rows) for _, rows in sessions)
        for sid, rows in sessions:
            commit_log[sid] = {k: v * len(rows) / turns for k, v in rec.items()}

    patch(runner_mod.PartitionRunner, "run_turn", run_turn)
    patch(runner_mod.PartitionRunner, "run_session", run_session)
    patch(runner_mod.PartitionRunner, "commit", commit)
    patch(Agent, "assemble", _timed_async(Agent.assemble, "assemble"))
    patch(Agent, "persist", _timed_sync(Agent.persist, "persist_agent"))
    patch(agent_mod, "build_messages", _timed_sync(agent_mod.build_messages, "prompt"))
    patch(agent_mod, "prompt_hash", _timed_sync(agent_mod.prompt_hash, "prompt"))
    patch(ModelGateway, "acomplete", _timed_async(ModelGateway.acomplete, "acomplete"))
    patch(litellm, "acompletion", _timed_async(litellm.acompletion, "litellm"))
    patch(RequestStore, "get", _timed_sync(RequestStore.get, "store_get"))
    patch(RequestStore, "put", _timed_sync(RequestStore.put, "store_put"))
    patch(runner_mod, "score_turn", _timed_sync(runner_mod.score_turn, "score"))
    patch(result_cache_mod, "run_query", _timed_sync(result_cache_mod.run_query, "sql"))
    # per-session work (outside any turn): checkpoint and memory upkeep
    patch(
        runner_mod,
        "write_session_checkpoint",
        _timed_sync(runner_mod.write_session_checkpoint, "checkpoint", SESSION),
    )
    patch(WorkingMemory, "clear", _timed_sync(WorkingMemory.clear, "wm_clear", SESSION))
    patch(EpisodicMemory, "forget_session", _timed_sync(EpisodicMemory.forget_session, "ep_forget", SESSION))
    patch(EpisodicMemory, "flush", _timed_sync(EpisodicMemory.flush, "ep_flush", SESSION))
    try:
        yield
    finally:
        for obj, name, old in reversed(patches):
            setattr(obj, name, old)


class InProcessWindow(WorkingMemory):
    """Working memory without Redis, for `--what-if in-process-window`: the entries are the same
    JSON, kept in a dict (only this process's one session writes each key)."""

    def __init__(self, client: Any, run_id: str, **_: Any):
        self.run_id = run_id
        self._lists: dict[str, list[str]] = {}

    def append(self, session_id: str, payload: dict[str, Any], window: int) -> list[dict[str, Any]]:
        validate_payload(payload, session_id)
        entries = self._lists.setdefault(session_id, [])
        entries.insert(0, json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str))
        del entries[window:]
        return [json.loads(e) for e in entries]

    def recall(self, session_id: str, window: int) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self._lists.get(session_id, [])[:window]]

    def clear(self, session_id: str) -> None:
        self._lists.pop(session_id, None)

    def clear_run(self) -> int:
        n = len(self._lists)
        self._lists.clear()
        return n


WHAT_IFS = ("no-store-write", "in-process-window")


@contextlib.contextmanager
def what_if(names: tuple[str, ...]) -> Iterator[None]:
    """Remove the named pieces (WHAT_IFS) for one partition run; restored on exit."""
    saved = [
        (RequestStore, "put", RequestStore.put),
        (builtin_mod, "WorkingMemory", builtin_mod.WorkingMemory),
        (builtin_mod.Window, "identity", builtin_mod.Window.identity),
    ]
    if "no-store-write" in names:
        RequestStore.put = lambda self, key, record: self.path_for(key)  # type: ignore[method-assign]
    if "in-process-window" in names:
        builtin_mod.WorkingMemory = InProcessWindow  # type: ignore[misc]
        builtin_mod.Window.identity = lambda self: "in-process"  # type: ignore[method-assign]
    try:
        yield
    finally:
        for obj, name, old in saved:
            setattr(obj, name, old)


def pieces_of(rec: dict[str, float], session_share: float) -> dict[str, float]:
    """Split one turn's measured times into the reported pieces (seconds)."""
    g = rec.get
    prompt = g("prompt", 0.0)
    retrieval = g("assemble", 0.0) - prompt
    model = g("acomplete", 0.0) - g("store_put", 0.0)
    sql = g("sql", 0.0)
    compare = g("score", 0.0) - sql
    persist = g("persist_agent", 0.0) + g("store_put", 0.0) + session_share
    other = (
        g("total", 0.0) - g("assemble", 0.0) - g("acomplete", 0.0) - g("score", 0.0) - g("persist_agent", 0.0)
    )
    return {
        "retrieval": retrieval,
        "prompt": prompt,
        "model": model,
        "litellm": g("litellm", 0.0),
        "sql": sql,
        "compare": compare,
        "persist": persist,
        "other": other,
        "cost": g("total", 0.0) + session_share,
    }


_FLOOR_CONNS: dict[Path, Any] = {}


def floor_of(db_path: Path, gt_sql: str, generated_sql: str | None, repeats: int = 3) -> float:
    """Seconds to execute the turn's GT SQL and its generated SQL alone (run_query, own read-only
    connection, no cache; median of 3), measured right after the turn so both see the same load.
    Generated SQL with the GT's text is the same query: the floor executes it once."""
    conn = _FLOOR_CONNS.get(db_path)
    if conn is None:
        conn = _FLOOR_CONNS[db_path] = open_readonly(db_path)
    queries = [gt_sql]
    if generated_sql and bare_sql(generated_sql) != bare_sql(gt_sql):
        queries.append(generated_sql)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for sql in queries:
            run_query(conn, sql, DEFAULT_TIMEOUT_S, DEFAULT_ROW_CAP)
        samples.append(time.perf_counter() - t0)
    return c.median(samples)


def sandbox_at(rev: str, work: Path) -> tuple[Any, Any]:
    """`open_readonly` and `run_query` as of git revision `rev`, imported beside today's modules
    (their own imports of memsql modules, if any, resolve to today's)."""
    modules = {}
    for name, rel in (("sandbox", _sandbox_path(rev)), ("execute", "memsql_assets/lib/sql/execute.py")):
        path = work / f"{name}_{rev}.py"
        path.write_text(
            subprocess.run(
                ["git", "-C", str(c.REPO), "show", f"{rev}:{rel}"], capture_output=True, text=True, check=True
            ).stdout
        )
        spec = importlib.util.spec_from_file_location(f"floor_{name}_{rev}", path)
        assert spec and spec.loader
        modules[name] = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    return modules["sandbox"].open_readonly, modules["execute"].run_query


def _sandbox_path(rev: str) -> str:
    """Where `open_readonly` lives at `rev`: lib/sql since the sandbox left lib/sources."""
    moved = "memsql_assets/lib/sql/sandbox.py"
    found = subprocess.run(["git", "-C", str(c.REPO), "cat-file", "-e", f"{rev}:{moved}"], capture_output=True)
    return moved if found.returncode == 0 else "memsql_assets/lib/sources/sqlite_db.py"


def _query_worker(db_paths: dict[str, Path], pipe: Any) -> None:
    """A scoring worker process: (source, sql) in, QueryResult out, until None arrives."""
    conns = {p: open_readonly(path) for p, path in db_paths.items()}
    while (job := pipe.recv()) is not None:
        pipe.send(run_query(conns[job[0]], job[1], DEFAULT_TIMEOUT_S, DEFAULT_ROW_CAP))


def floor_vs(rev: str, base: Path, turns: list[dict[str, Any]], work: Path, repeats: int = 3) -> int:
    """The per-turn floor (the GT query, as floor_of runs it) with REV's sandbox and today's, side by
    side, and today's sandbox in a worker process (the alternative bound: RLIMIT_AS / RLIMIT_CPU on
    a process pool) to price the round trip such a pool adds to every query."""
    import multiprocessing

    old_open, old_run = sandbox_at(rev, work)
    db_paths = {prefix: source_db_path(base, name) for prefix, name in SOURCE_BY_PREFIX.items()}
    here, there = multiprocessing.Pipe()
    worker = multiprocessing.get_context("fork").Process(target=_query_worker, args=(db_paths, there))
    worker.start()

    def in_worker(source: str, sql: str, *_: Any) -> Any:
        here.send((source, sql))
        return here.recv()

    sources = {p: p for p in db_paths}
    sides = {
        rev: ({p: old_open(path) for p, path in db_paths.items()}, old_run),
        "today": ({p: open_readonly(path) for p, path in db_paths.items()}, run_query),
        "today, worker process": (sources, in_worker),
    }
    floors: dict[str, list[float]] = {side: [] for side in sides}
    for turn in turns:
        samples: dict[str, list[float]] = {side: [] for side in sides}
        for i in range(repeats):
            order = list(sides.items()) if i % 2 == 0 else list(sides.items())[::-1]
            for side, (conns, run) in order:  # alternating, the order flipped: the same load for all
                t0 = time.perf_counter()
                result = run(conns[turn["source"]], turn["gt_sql"], DEFAULT_TIMEOUT_S, DEFAULT_ROW_CAP)
                samples[side].append(time.perf_counter() - t0)
                assert result.ok, (side, turn["session_id"], result.error)
        for side in sides:
            floors[side].append(c.median(samples[side]))
    here.send(None)
    worker.join()
    opens: dict[str, list[float]] = {rev: [], "today": []}
    for _ in range(20):  # opening a pooled connection (its pragmas and warm-ups), once per worker
        for side, opener in ((rev, old_open), ("today", open_readonly)):
            path = next(iter(db_paths.values()))
            t0 = time.perf_counter()
            opener(path, check=False).close()
            opens[side].append(time.perf_counter() - t0)
    med = {side: c.median(v) for side, v in floors.items()}
    total = {side: sum(v) for side, v in floors.items()}
    rows = [
        [
            side,
            c.ms(med[side]),
            c.ms(c.quantile(floors[side], 0.9)),
            c.ms(total[side] / len(turns)),
            c.ms(c.median(opens[side])) if side in opens else "",
        ]
        for side in sides
    ]
    print(f"\nSQL floor per turn, {len(turns)} turns x {repeats} runs per side, alternating (ms)\n")
    print(c.table(["sandbox", "median", "p90", "mean", "open connection"], rows))
    ratio = med["today"] / med[rev]
    print(f"\ntoday / {rev}: median {ratio:.3f}, mean {total['today'] / total[rev]:.3f}")
    pool = med["today, worker process"] / med[rev]
    paired = c.median(t / o for t, o in zip(floors["today"], floors[rev], strict=True))
    print(f"today / {rev}, median of the per-turn ratios: {paired:.3f}")
    print(f"today in a worker process / {rev}: median {pool:.3f}")
    info = c.machine()
    path = c.write_json(
        f"harness_floor_vs_{rev}",
        {
            "machine": info,
            "settings": {"rev": rev, "turns": len(turns), "repeats": repeats},
            "median_ms": {side: c.ms(v) for side, v in med.items()},
            "p90_ms": {side: c.ms(c.quantile(v, 0.9)) for side, v in floors.items()},
            "mean_ms": {side: c.ms(total[side] / len(turns)) for side in sides},
            "open_connection_median_ms": {side: c.ms(c.median(v)) for side, v in opens.items()},
            "median_ratio_today_over_rev": round(ratio, 3),
            "mean_ratio_today_over_rev": round(total["today"] / total[rev], 3),
            "median_ratio_worker_process_over_rev": round(pool, 3),
            "median_of_per_turn_ratios_today_over_rev": round(paired, 3),
            "loadavg_at_end": c.load_now(),
        },
    )
    print(f"written {path}", file=sys.stderr)
    return 0


def run_condition(
    base: Path, work: Path, condition: str, registry: Any, without: tuple[str, ...] = ()
) -> dict[str, Any]:
    home = c.fresh_copy(base, work / f"home-{condition}")
    turn_log: list[dict[str, Any]] = []
    session_log: list[dict[str, Any]] = []
    commit_log: dict[str, dict[str, float]] = {}
    RESULTS.clear()  # a cold partition: each GT query runs once here (`memsql run` shares them across partitions)
    t0 = time.perf_counter()
    with instrumented(turn_log, session_log, commit_log), what_if(without):
        outcome = evaluate_partition(
            home,
            MODEL,
            condition,
            settings=EvalSettings(),
            registry=registry,
            trajectory_factory=lookup_mod.trajectory_lookup,
        )
    wall = time.perf_counter() - t0
    if outcome.summary["ex_strict"] != 100.0:
        raise SystemExit(
            f"{condition}: gold scored {outcome.summary['ex_strict']} %: harness bug, not benchmarking"
        )
    shares = {}
    for s in session_log:
        turn_sum = sum(r["total"] + r["floor_wall"] for r in turn_log if r["session_id"] == s["session_id"])
        committed = commit_log.get(s["session_id"], {})
        for key, value in committed.items():
            if key != "total":
                s[key] = s.get(key, 0.0) + value
        s["total"] += committed.get("total", 0.0)
        shares[s["session_id"]] = (s["total"] - turn_sum) / max(1, s["turns"])
    return {
        "turn_log": turn_log,
        "session_log": session_log,
        "shares": shares,
        "wall_s": wall,
        "setup_s": wall - sum(s["total"] for s in session_log),  # session totals include their commits
        "floor_wall_s": sum(r["floor_wall"] for r in turn_log),
        "ex_strict": outcome.summary["ex_strict"],
    }


def measure(base: Path, work: Path, registry: Any, args: Any) -> Any:
    run_condition(base, work, "A", registry)  # warm-up: imports, litellm's first call, schema cache
    samples: dict[str, list[dict[str, float]]] = defaultdict(list)
    meta: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"wall_s": [], "setup_s": [], "turns": 0, "hits": 0}
    )
    runs = [(cond, ()) for cond in args.conditions]
    runs += [(cond, tuple(names.split("+"))) for names in args.what_if for cond in args.conditions]
    labels = [" - ".join((cond, *without)) for cond, without in runs]  # "B - in-process-window"
    for rnd in range(args.rounds):
        for label, (cond, without) in zip(labels, runs, strict=True):
            res = run_condition(base, work, cond, registry, without)
            for r in res["turn_log"]:
                p = pieces_of(r, res["shares"][r["session_id"]])
                p["floor"] = r["floor"]
                p["overhead"] = p["cost"] - p["floor"]
                p["cache_hit"] = float(r["cache_hit"])
                samples[label].append(p)
            meta[label]["wall_s"].append(round(res["wall_s"], 3))
            meta[label]["setup_s"].append(round(res["setup_s"], 3))
            meta[label]["turns"] = len(res["turn_log"])
            meta[label]["hits"] += sum(1 for r in res["turn_log"] if r["cache_hit"])
            for key in SESSION_KEYS:
                meta[label].setdefault(f"session_{key}", []).extend(
                    x.get(key, 0.0) for x in res["session_log"]
                )
            meta[label].setdefault("session_share", []).extend(res["shares"].values())
            print(
                f"round {rnd + 1}: {label} {len(res['turn_log'])} turns in {res['wall_s']:.1f} s",
                file=sys.stderr,
            )
    return samples, meta, labels


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=10, help="every k-th session of the 300 (10 -> 30 sessions)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds over the conditions")
    ap.add_argument("--conditions", nargs="+", default=list(CONDITIONS))
    ap.add_argument("--profile", default=None, help="profile one condition's partition with pyinstrument")
    ap.add_argument("--out", default="harness", help="results/<out>.json")
    ap.add_argument(
        "--floor-vs", default=None, metavar="REV", help="only the floor: REV's sandbox vs today's"
    )
    ap.add_argument(
        "--what-if",
        nargs="+",
        default=[],
        metavar="NAME[+NAME]",
        help=f"also run without: {', '.join(WHAT_IFS)}",
    )
    args = ap.parse_args(argv)
    for names in args.what_if:
        if unknown := set(names.split("+")) - set(WHAT_IFS):
            ap.error(f"--what-if {names}: unknown {sorted(unknown)}; expected names from {list(WHAT_IFS)}")

    info = c.machine()
    base = c.bench_home(every=args.every, trajectories=True)
    turns = read_turns(benchmark_dir(base))
    with tempfile.TemporaryDirectory(prefix="memsql-bench-harness-") as tmp:
        work = Path(tmp)
        reg_path = work / "models.yaml"
        reg_path.write_text(REGISTRY_YAML)
        registry = load_registry(reg_path)
        if args.floor_vs:
            return floor_vs(args.floor_vs, base, turns, work)
        if args.profile:
            return profile_condition(base, work, args.profile, registry)
        samples, meta, labels = measure(base, work, registry, args)

    rows, out = [], {}
    for label in labels:
        cond = label.split(" - ")[0]
        s = samples[label]
        med = {k: c.median(x[k] for x in s) for k in (*PIECES, "cost", "floor", "overhead")}
        miss = [x for x in s if not x["cache_hit"]]
        model_miss = c.median(x["model"] for x in miss) if miss else float("nan")
        ratio = med["overhead"] / med["floor"] if med["floor"] else float("nan")
        target = (
            ("<= 1x floor", ratio <= 1.0)
            if cond in ("A", "B", "B_wm5")
            else ("<= 10 ms", med["overhead"] <= 0.010)
        )
        shown = f"{target[0]}: {'met' if target[1] else 'MISSED'}" if label == cond else "(what-if)"
        out[label] = {
            "turns_per_round": meta[label]["turns"],
            "samples": len(s),
            "median_ms": {k: c.ms(v) for k, v in med.items()},
            "p90_ms": {k: c.ms(c.quantile([x[k] for x in s], 0.9)) for k in ("cost", "floor", "overhead")},
            "mean_ms": {
                k: c.ms(sum(x[k] for x in s) / len(s)) for k in (*PIECES, "cost", "floor", "overhead")
            },
            "model_ms_median_cache_miss": c.ms(model_miss),
            "cache_hits": meta[label]["hits"],
            "overhead_over_floor": round(ratio, 3),
            "per_session_median_ms": {k: c.ms(c.median(meta[label][f"session_{k}"])) for k in SESSION_KEYS},
            "session_share_per_turn_median_ms": c.ms(c.median(meta[label]["session_share"])),
            "partition_wall_s": meta[label]["wall_s"],
            "partition_setup_s": meta[label]["setup_s"],
            "target": target[0],
            "target_met": bool(target[1]),
            "what_if": label.split(" - ")[1:],
        }
        rows.append(
            [
                label,
                *(c.ms(med[k]) for k in PIECES),
                c.ms(med["cost"]),
                c.ms(med["floor"]),
                c.ms(med["overhead"]),
                f"{ratio:.1f}x",
                shown,
                f"{c.median(meta[label]['setup_s']):.2f}",
            ]
        )
    header = ["cond", *PIECES, "turn", "floor", "overhead", "ovh/floor", "target", "setup s"]
    print(
        f"\nPer-turn harness cost, medians in ms (gold built-in, concurrency 1, {args.rounds} round(s) of "
        f"{len({t['session_id'] for t in turns})} sessions / {len(turns)} turns each; litellm is part of model)\n"
    )
    print(c.table(header, rows))
    info["loadavg_at_end"] = c.load_now()
    info["disk_write_ms_at_end"] = c.disk_write_ms()
    print(
        f"\ndisk: a 7 KB record written in {info['disk_write_ms_at_start']} ms at the start, "
        f"{info['disk_write_ms_at_end']} ms at the end (median of 200; the request store writes one a turn)"
    )
    path = c.write_json(
        args.out,
        {
            "machine": info,
            "settings": {
                "every": args.every,
                "rounds": args.rounds,
                "model": "gold (memsql/gold), concurrency 1",
                "sessions": len({t["session_id"] for t in turns}),
                "turns": len(turns),
            },
            "pieces": list(PIECES),
            "conditions": out,
        },
    )
    print(f"\nwritten {path}", file=sys.stderr)
    return 0


def profile_condition(base: Path, work: Path, condition: str, registry: Any) -> int:
    from pyinstrument import Profiler

    run_condition(base, work, condition, registry)  # warm-up
    home = c.fresh_copy(base, work / f"home-prof-{condition}")
    profiler = Profiler(interval=0.0005, async_mode="disabled")
    profiler.start()
    evaluate_partition(
        home, MODEL, condition, registry=registry, trajectory_factory=lookup_mod.trajectory_lookup
    )
    profiler.stop()
    report = c.RESULTS_DIR / f"harness_profile_{condition}.txt"
    report.write_text(profiler.output_text(unicode=False, color=False, show_all=False))
    print(profiler.output_text(unicode=False, color=False))
    print(f"written {report}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
