"""The extended benchmark's loader and generation: bad input, and each phenomenon on a hand-built session."""

from __future__ import annotations

import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from memsql_assets.lib.benchmark.extended import (
    EXTENDED_DIR,
    extended_violations,
    generate_extended_source,
    layout,
    load_extended_template,
    phrasing_index,
)
from memsql_assets.lib.errors import TemplateError
from memsql_assets.lib.vocabulary import CROSS_SESSION_TAGS, GUESS_FLOOR_MAX_PCT, PHENOMENA

SQL = "SELECT {a} AS a, {b} AS b"


def _turn(tag, refs=(), binds=None, overwrites=None, question="q {x}"):
    turn = {
        "tag": tag,
        "phrasings": [question, question + " please", "so: " + question],
        "output_requirements": "two columns a and b",
        "sql": SQL,
        "paraphrase": "SELECT {b} AS b2, {a} AS a2",
        "refs": list(refs),
    }
    if binds:
        turn["binds"] = binds
    if overwrites:
        turn["overwrites"] = overwrites
    return turn


def _session_turns():
    """A hand-built variant with one turn per phenomenon: a/b bound at turn 1, detours, back to b, a switch,
    a correction of b, a wording turn after it (stale ground truth) and a distractor."""
    return [
        {**_turn("baseline", binds={"a": "a0", "b": "b0"}, question="open {a0} {b0}"),
         "sql": "SELECT {a0} AS a, {b0} AS b", "paraphrase": "SELECT {b0} AS b2, {a0} AS a2"},
        {**_turn("detour", question="other {z}"), "sql": "SELECT {z} AS z", "paraphrase": "SELECT {z} AS z2"},
        {**_turn("detour", question="more {z}"), "sql": "SELECT {z} AS z", "paraphrase": "SELECT {z} AS z2"},
        {**_turn("long_range", refs=["a", "b"], question="back")},
        {**_turn("entity_switch", refs=["b"], binds={"a": "a1"}, question="now {a1}"),
         "sql": "SELECT {a1} AS a, {b} AS b", "paraphrase": "SELECT {b} AS b2, {a1} AS a2"},
        {**_turn("correction", refs=["a"], binds={"b": "b1"}, overwrites=["b"], question="I meant {b1}"),
         "sql": "SELECT {a} AS a, {b1} AS b", "paraphrase": "SELECT {b1} AS b2, {a} AS a2"},
        _turn("wording", refs=["a", "b"], question="again"),
        _turn("distractor", refs=["a", "b"], binds={"a": "a", "b": "b"}, question="both again"),
    ]


def _continuing_turns():
    """A hand-built variant continuing v0's session: a and b from last time (cross_session), b as the
    convention it taught (taught_convention), b changed to b0 (knowledge_update), then used again."""
    return [
        _turn("cross_session", refs=["a", "b"], question="picking up from last time: both"),
        _turn("taught_convention", refs=["a", "b"], question="both, as I defined b"),
        {**_turn("knowledge_update", refs=["a"], binds={"b": "b0"}, overwrites=["b"], question="from now on b is {b0}"),
         "sql": "SELECT {a} AS a, {b0} AS b", "paraphrase": "SELECT {b0} AS b2, {a} AS a2"},
        _turn("knowledge_update", refs=["a", "b"], question="both, with b as it is now"),
    ]


def _write(tmp_path: Path, source: str, turns, n_variants: int = 6, continuing=None, **top) -> Path:
    directory = tmp_path / "extended"
    directory.mkdir(exist_ok=True)
    doc = {
        "source": source,
        "profile": "p",
        "sessions": 4,
        "returning": 1,
        "continuing": 1,
        "variants": [{"id": f"v{i}", "turns": turns} for i in range(n_variants)]
        + [{"id": "vc", "continues": "v0", "turns": continuing or _continuing_turns()}],
        **top,
    }
    (directory / f"{source}.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return directory


PROFILES = {"p": [{"a0": 1, "b0": 2, "a1": 3, "b1": 4, "z": 5}, {"a0": 6, "b0": 7, "a1": 8, "b1": 9, "z": 10}]}


def test_each_phenomenon_on_a_hand_built_session(tmp_path):
    template = load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns()))
    sessions = generate_extended_source(template, PROFILES)
    first, twin = sessions[2], sessions[0]  # the returning session (profile 0), and its twin two before
    by_tag = {t.tag: t for t in first.turns}
    assert set(by_tag) == set(PHENOMENA) - set(CROSS_SESSION_TAGS)
    assert not by_tag["baseline"].memory_critical and not by_tag["detour"].memory_critical
    # long range: a and b were last stated at turn 1, three turns back (the detours do not restate them)
    assert by_tag["long_range"].recall_distance == 3 and by_tag["long_range"].memory_critical
    assert by_tag["long_range"].gt_sql == "SELECT 1 AS a, 2 AS b"
    # entity switch: the new entity is used from then on
    assert by_tag["entity_switch"].state_updates == {"a": 3}
    # correction: later turns use the new value and carry the ground truth with the overwritten one
    assert by_tag["wording"].gt_sql == "SELECT 3 AS a, 4 AS b"
    assert by_tag["wording"].stale_gt_sql == "SELECT 3 AS a, 2 AS b"
    assert by_tag["correction"].stale_gt_sql is None  # it states its new value
    # distractor: the twin session, earlier, is worded the same and is about another profile; only the
    # returning session asks the distractor turn
    assert [t.question for t in twin.turns] == [
        t.question.replace("1", "6").replace("2", "7").replace("3", "8").replace("4", "9").replace("5", "10")
        for t in first.turns[:-1]
    ]
    assert by_tag["distractor"].twin_session_id == twin.session_id == "SEC-X-001"
    assert [t.tag for s in sessions[:3] if s is not first for t in s.turns].count("distractor") == 0


def test_each_cross_session_tag_on_a_hand_built_continuing_session(tmp_path):
    """Session 4 continues session 2 (v0, profile 0, without its distractor: it ended with a=a1=3,
    b=b1=4), as the same analyst; its values come only from there, and the knowledge update makes the
    old convention the stale ground truth."""
    template = load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns()))
    sessions = generate_extended_source(template, PROFILES)
    continued, later = sessions[1], sessions[3]
    assert (continued.variant_id, later.variant_id) == ("v0", "vc")
    assert later.analyst == continued.analyst != sessions[0].analyst
    assert {t.continues_session_id for t in later.turns} == {continued.session_id}
    cross, taught, update, use = later.turns
    assert (cross.tag, taught.tag, update.tag, use.tag) == ("cross_session", "taught_convention", "knowledge_update", "knowledge_update")
    # turn 1 needs memory: its values were bound only by the continued session
    assert cross.memory_critical and cross.gt_sql == taught.gt_sql == "SELECT 3 AS a, 4 AS b"
    assert cross.fallback_sql == "SELECT 8 AS a, 9 AS b"  # the neighbouring profile's continuation
    assert update.gt_sql == "SELECT 3 AS a, 2 AS b" and update.stale_gt_sql is None
    assert use.gt_sql == "SELECT 3 AS a, 2 AS b" and use.stale_gt_sql == "SELECT 3 AS a, 4 AS b"
    assert extended_violations([dict(t.__dict__) for s in sessions for t in s.turns]) == []


def test_a_continuation_of_a_later_session_or_another_analyst_fails(tmp_path):
    template = load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns()))
    slots = layout(template)
    later = [*slots[:1], replace(slots[3], continues=2), slots[2], slots[1]]
    with pytest.raises(TemplateError, match=r"sec_edgar.yaml: variant vc, turn 1: SEC-X-002 refers to SEC-X-003, which comes later"):
        generate_extended_source(template, PROFILES, later)
    stranger = [*slots[:3], replace(slots[3], analyst=99)]
    with pytest.raises(TemplateError, match=r"variant vc, turn 1: SEC-X-004 \(SEC-A099\) refers to SEC-X-002 of another analyst"):
        generate_extended_source(template, PROFILES, stranger)


def test_last_time_outside_a_continuing_variant_fails_loading(tmp_path):
    turns = _session_turns()
    turns[3] = _turn("long_range", refs=["a", "b"], question="as last time")
    with pytest.raises(TemplateError, match=r"variant v0, turn 4.phrasings\[0\]: says 'as last time' but uses no key"):
        load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", turns))


def test_a_turn_without_a_tag_fails_naming_file_variant_and_turn(tmp_path):
    turns = _session_turns()
    del turns[3]["tag"]
    directory = _write(tmp_path, "sec_edgar", turns)
    with pytest.raises(TemplateError) as err:
        load_extended_template("sec_edgar", directory)
    message = str(err.value)
    assert "sec_edgar.yaml" in message and "variant v0, turn 4" in message and "tag" in message


def test_a_correction_of_a_key_never_bound_fails(tmp_path):
    turns = _session_turns()
    turns[5]["binds"] = {"c": "b1"}
    turns[5]["overwrites"] = ["c"]
    with pytest.raises(TemplateError, match="overwrites key 'c' that no earlier turn binds"):
        load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", turns))


def test_fewer_than_three_phrasings_or_six_variants_fail(tmp_path):
    turns = _session_turns()
    turns[6]["phrasings"] = turns[6]["phrasings"][:2]
    with pytest.raises(TemplateError, match="phrasings"):
        load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", turns))
    with pytest.raises(TemplateError, match=">= 6 variants"):
        load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns(), n_variants=5))


def test_a_long_range_turn_whose_value_is_restated_fails(tmp_path):
    turns = _session_turns()
    turns[2] = _turn("wording", refs=["a", "b"], question="restates")
    with pytest.raises(TemplateError, match="long_range, but its farthest value was last stated 1"):
        generate_extended_source(load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", turns)), PROFILES)


# b is the newer value until the correction replaces it with one below a (the switch set a to 3, or 7)
YEAR_PROFILES = {"p": [{"a0": 1, "b0": 5, "a1": 3, "b1": 2, "z": 0}, {"a0": 6, "b0": 9, "a1": 7, "b1": 4, "z": 0}]}
OLDER = {**_turn("wording", refs=["a"], question="the older of the two again"),
         "sql": "SELECT {a} AS a, 0 AS b", "paraphrase": "SELECT 0 AS b2, {a} AS a2"}


def test_the_wording_check_catches_the_older_of_two_after_a_correction(tmp_path):
    turns = _session_turns()
    turns[6] = OLDER  # after the correction of b to 2, a (3) is the newer one
    directory = _write(tmp_path, "sec_edgar", turns, ordered_pair=["a", "b"])
    template = load_extended_template("sec_edgar", directory)  # statically evaluable: it loads
    with pytest.raises(TemplateError) as err:
        generate_extended_source(template, YEAR_PROFILES)
    message = str(err.value)
    assert "sec_edgar.yaml" in message and "variant v0, turn 7" in message and "SEC-X-001" in message
    assert "calls a=7 the older one, but the pair holds {'a': 7, 'b': 4}" in message  # profile 1 opens


def test_the_same_turn_before_the_correction_passes_the_wording_check(tmp_path):
    turns = _session_turns()
    turns[5], turns[6] = OLDER, turns[5]
    directory = _write(tmp_path, "sec_edgar", turns, ordered_pair=["a", "b"])
    sessions = generate_extended_source(load_extended_template("sec_edgar", directory), YEAR_PROFILES)
    assert sessions[0].turns[5].question == "the older of the two again"


@pytest.mark.parametrize(
    ("question", "top", "expected"),
    [
        ("the value from before", {}, "relative wording 'before' that the wording check cannot evaluate"),
        ("the older one", {}, "ordered_pair (none declared)"),
        ("the first region again", {"ordered_pair": ["a", "b"]}, "does not use the template's anchor"),
    ],
)
def test_relative_wording_the_check_cannot_evaluate_fails_loading(tmp_path, question, top, expected):
    turns = _session_turns()
    turns[6] = _turn("wording", refs=["a", "b"], question=question)
    with pytest.raises(TemplateError) as err:
        load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", turns, **top))
    assert "variant v0, turn 7.phrasings[0]" in str(err.value) and expected in str(err.value)


def test_an_origin_phrase_is_checked_against_turn_one(tmp_path):
    turns = _session_turns()
    turns[7] = _turn("distractor", refs=["a", "b"], binds={"a": "a", "b": "b"}, question="the first one again")
    directory = _write(tmp_path, "sec_edgar", turns, anchor="a")
    with pytest.raises(TemplateError, match="calls a=3 where the session began, but turn 1 bound 1"):
        generate_extended_source(load_extended_template("sec_edgar", directory), PROFILES)


def test_phrasings_are_spread_evenly_over_a_turns_sessions():
    """Per shipped (variant, turn), the sessions using each phrasing differ in number by at most one."""
    for source in ("sec_edgar", "northwind", "bird_financial"):
        cells: dict[tuple[str, int], Counter] = {}
        for slot in layout(load_extended_template(source, EXTENDED_DIR)):
            for index, turn in enumerate(slot.variant.turns, start=1):
                phrasing = phrasing_index(slot.wording, turn, index)
                cells.setdefault((slot.variant.id, index), Counter({p: 0 for p in range(len(turn.phrasings))}))[
                    phrasing
                ] += 1
        assert all(max(c.values()) - min(c.values()) <= 1 for c in cells.values()), source


def test_every_distractor_turn_reaches_its_twin_up_to_w_32():
    """The shipped layout: each returning session's twin is 32 positions earlier, in an earlier wave at
    W = 1, 4, 8 and 32 (the runner's own waves), and only returning sessions ask a distractor turn."""
    from memsql_assets.lib.harness.schedule import twins_reachable_pct

    for source in ("sec_edgar", "northwind", "bird_financial"):
        template = load_extended_template(source, EXTENDED_DIR)
        slots = layout(template)
        turns = [
            {
                "session_id": f"S-X-{i + 1:03d}",
                "source": "S",
                "twin_session_id": None if slot.twin is None else f"S-X-{slot.twin + 1:03d}",
            }
            for i, slot in enumerate(slots)
        ]
        assert sum(slot.variant.turns[-1].tag == "distractor" for slot in slots) == template.returning
        gap = template.sessions - template.returning - template.continuing
        assert [t for t in turns if t["twin_session_id"]] == turns[gap : gap + template.returning]
        for w in (1, 4, 8, 32):
            assert twins_reachable_pct(turns, w) == 100.0, (source, w)
        assert twins_reachable_pct(turns, 33) < 90.0  # beyond the gap, a twin shares a wave


def test_shipped_templates_load_and_cover_every_phenomenon(tmp_path):
    for source in ("sec_edgar", "northwind", "bird_financial"):
        template = load_extended_template(source, EXTENDED_DIR)
        assert len(template.variants) >= 6
        assert {t.tag for v in template.variants for t in v.turns} == set(PHENOMENA)
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.slow
def test_extended_benchmark_on_embedded_data(embedded_dbs):
    """The wording check passes on every turn (the build raises otherwise), every memory-critical turn has
    its guess_rate and their mean stays under the guess-floor target, and most detours carry no marker."""
    from memsql_assets.lib.benchmark.answer_check import check_answers
    from memsql_assets.lib.benchmark.gt_check import check_ground_truth
    from memsql_assets.lib.benchmark.pipeline import build_measured_extended_sessions
    from memsql_assets.lib.benchmark.profiles import extract_profiles

    profiles = {s: extract_profiles(s, p, EXTENDED_DIR) for s, p in embedded_dbs.items()}
    turns = [dict(t.__dict__) for s in build_measured_extended_sessions(profiles, embedded_dbs) for t in s.turns]
    assert len({t["session_id"] for t in turns}) <= 300
    critical = [t for t in turns if t["memory_critical"]]
    assert sum(t["recall_distance"] > 5 for t in critical) >= 0.10 * len(critical)
    assert any(t["stale_gt_sql"] for t in turns)
    assert all(t["guess_rate"] is not None for t in critical)
    assert 100 * sum(t["guess_rate"] for t in critical) / len(critical) <= GUESS_FLOOR_MAX_PCT
    assert all(set(t["guess_values"]) == set(t["referenced_context_keys"]) for t in turns)
    detours = [t for t in turns if t["tag"] == "detour"]
    assert 0 < sum(t["explicit_marker"] for t in detours) < len(detours) / 2
    assert check_ground_truth(turns, embedded_dbs).ok
    assert check_answers(turns, embedded_dbs).ok


def test_contamination_counts_only_another_analysts_values(tmp_path):
    """Contamination by provenance compares a failed turn with its ground truth walked with the supplying
    session's profile: for the continued session (same analyst, same profile) that is the turn's own
    ground truth, which a failed result never equals; for another analyst's session it is that
    session's values."""
    from memsql_assets.lib.benchmark.other_profiles import extended_walk, other_profile_table

    directory = _write(tmp_path, "sec_edgar", _session_turns())
    sessions = generate_extended_source(load_extended_template("sec_edgar", directory), PROFILES)
    table = other_profile_table(sessions, extended_walk(directory)).to_pylist()
    continued, other, later = sessions[1], sessions[0], sessions[3]
    walked = {r["session_id"]: r["sql"] for r in table if r["variant_id"] == "vc" and r["turn_index"] == 1}
    assert walked[continued.session_id] == later.turns[0].gt_sql
    assert walked[other.session_id] == "SELECT 8 AS a, 9 AS b" != later.turns[0].gt_sql
    assert other.analyst != later.analyst
