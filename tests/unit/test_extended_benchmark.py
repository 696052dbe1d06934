"""The extended benchmark's loader and generation: bad input, and each phenomenon on a hand-built session."""

from __future__ import annotations

import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from memsql_assets.lib.benchmark.extended.build import generate_extended_source
from memsql_assets.lib.benchmark.extended.checks import extended_violations
from memsql_assets.lib.benchmark.extended.layout import layout, stride
from memsql_assets.lib.benchmark.extended.load import load_extended_template
from memsql_assets.lib.benchmark.extended.template import EXTENDED_DIR
from memsql_assets.lib.benchmark.extended.walk import phrasing_index
from memsql_assets.lib.benchmark.wording import Claim
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
    a correction of b, a wording turn after it (stale ground truth) and a distractor; a later session
    re-uses the switch's query as the result r."""
    return [
        {**_turn("baseline", binds={"a": "a0", "b": "b0"}, question="open {a0} {b0}"),
         "sql": "SELECT {a0} AS a, {b0} AS b", "paraphrase": "SELECT {b0} AS b2, {a0} AS a2"},
        {**_turn("detour", question="other {z}"), "sql": "SELECT {z} AS z", "paraphrase": "SELECT {z} AS z2"},
        {**_turn("detour", question="more {z}"), "sql": "SELECT {z} AS z", "paraphrase": "SELECT {z} AS z2"},
        {**_turn("long_range", refs=["a", "b"], question="back")},
        {**_turn("entity_switch", refs=["b"], binds={"a": "a1"}, question="now {a1}"),
         "sql": "SELECT {a1} AS a, {b} AS b, 0 AS s", "paraphrase": "SELECT {b} AS b2, {a1} AS a2, 0 AS s2", "returns": "r"},
        {**_turn("correction", refs=["a"], binds={"b": "b1"}, overwrites=["b"], question="I meant {b1}"),
         "sql": "SELECT {a} AS a, {b1} AS b", "paraphrase": "SELECT {b1} AS b2, {a} AS a2"},
        _turn("wording", refs=["a", "b"], question="again"),
        _turn("distractor", refs=["a", "b"], binds={"a": "a", "b": "b"}, question="both again"),
    ]


def _continuing_turns():
    """A hand-built variant continuing v0's session: a as taught last time (taught_convention), then b
    changed to b0 (knowledge_update): each needs a key its own session has not stated."""
    return [
        {**_turn("taught_convention", refs=["a"], question="a as I said last time"),
         "sql": "SELECT {a} AS a", "paraphrase": "SELECT {a} AS a2"},
        {**_turn("knowledge_update", refs=["b"], binds={"b": "b0"}, overwrites=["b"], question="from now on b is {b0}"),
         "sql": "SELECT {b} AS was, {b0} AS b", "paraphrase": "SELECT {b0} AS b2, {b} AS was2"},
    ]


RESULT_TURN = {**_turn("earlier_result", refs=["r"], question="a of what came out on top last time"),
               "sql": "SELECT a FROM ({r})", "paraphrase": "WITH x AS ({r}) SELECT x.a AS a2 FROM x"}


def _chain_turns():
    """A hand-built third session, continuing vc's: a from last time, then a (v0's) with b as vc changed it,
    then the result r that v0 returned (earlier_result)."""
    return [
        {**_turn("cross_session", refs=["a"], question="picking up from last time: a"),
         "sql": "SELECT {a} AS a", "paraphrase": "SELECT {a} AS a2"},
        _turn("chained", refs=["a", "b"], question="both, with b as it is now"),
        RESULT_TURN,
    ]


def _write(tmp_path: Path, source: str, turns, n_variants: int = 6, continuing=None, chain=None, **top) -> Path:
    """Six variants of `turns`, vc continuing v0 and vd continuing vc: one history (the layout: session 1
    the twin, then the history's three sessions one apart, last the returning session)."""
    directory = tmp_path / "extended"
    directory.mkdir(exist_ok=True)
    doc = {
        "source": source,
        "profile": "p",
        "sessions": 5,
        "returning": 1,
        "histories": 1,
        "variants": [{"id": f"v{i}", "turns": turns} for i in range(n_variants)]
        + [{"id": "vc", "continues": "v0", "turns": continuing or _continuing_turns()}]
        + [{"id": "vd", "continues": "vc", "turns": chain or _chain_turns()}],
        **top,
    }
    (directory / f"{source}.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return directory


PROFILES = {"p": [{"a0": 1, "b0": 2, "a1": 3, "b1": 4, "z": 5}, {"a0": 6, "b0": 7, "a1": 8, "b1": 9, "z": 10}]}


def test_each_phenomenon_on_a_hand_built_session(tmp_path):
    template = load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns()))
    sessions = generate_extended_source(template, PROFILES)
    first, twin = sessions[4], sessions[0]  # the returning session (profile 0), and its twin four before
    by_tag = {t.tag: t for t in first.turns}
    assert set(by_tag) == set(PHENOMENA) - set(CROSS_SESSION_TAGS)
    assert not by_tag["baseline"].memory_critical and not by_tag["detour"].memory_critical
    # long range: a and b were last stated at turn 1, three turns back (the detours do not restate them)
    assert by_tag["long_range"].recall_distance == 3 and by_tag["long_range"].memory_critical
    assert by_tag["long_range"].gt_sql == "SELECT 1 AS a, 2 AS b"
    # entity switch: the new entity is used from then on
    assert by_tag["entity_switch"].state_updates == {"a": 3, "r": by_tag["entity_switch"].gt_sql}
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
    assert [t.tag for s in sessions[:4] for t in s.turns].count("distractor") == 0


def test_each_cross_session_tag_on_a_hand_built_history(tmp_path):
    """Sessions 2, 3 and 4 are one analyst's history (v0, vc, vd; profile 0: v0 without its distractor
    ends with a=a1=3, b=b1=4); vc changes b to b0=2, and vd's chained turn needs v0's a with vc's b: its
    stale ground truth is the one with the b that vc's update replaced."""
    directory = _write(tmp_path, "sec_edgar", _session_turns())
    sessions = generate_extended_source(load_extended_template("sec_edgar", directory), PROFILES)
    first, second, third = sessions[1:4]
    assert [s.variant_id for s in sessions] == ["v0", "v0", "vc", "vd", "v0"]
    assert first.analyst == second.analyst == third.analyst != sessions[0].analyst != sessions[4].analyst
    assert {t.continues_session_id for t in second.turns} == {first.session_id}
    assert {t.continues_session_id for t in third.turns} == {second.session_id}
    cross, update = second.turns
    assert (cross.tag, update.tag) == ("taught_convention", "knowledge_update")
    # turn 1 needs memory: its value was bound only by the first session
    assert cross.memory_critical and cross.gt_sql == "SELECT 3 AS a"
    assert cross.fallback_sql == "SELECT 8 AS a"  # the neighbouring profile's continuation
    # v0's own correction (b0=2 to b1=4) reaches it: the stale ground truth keeps b0
    assert update.gt_sql == "SELECT 4 AS was, 2 AS b" and update.stale_gt_sql == "SELECT 2 AS was, 2 AS b"
    resume, chained, result = third.turns
    assert resume.gt_sql == "SELECT 3 AS a" and resume.stale_gt_sql is None
    assert chained.tag == "chained" and chained.memory_critical
    assert chained.gt_sql == "SELECT 3 AS a, 2 AS b" and chained.stale_gt_sql == "SELECT 3 AS a, 4 AS b"
    # earlier_result: v0's switch (turn 5, before v0's correction of b) returned its query as r; the ground
    # truth re-uses that query as written, and no later correction or update changes what it returned
    switch = first.turns[4]
    assert switch.state_updates == {"a": 3, "r": "SELECT 3 AS a, 2 AS b, 0 AS s"} and switch.gt_sql == "SELECT 3 AS a, 2 AS b, 0 AS s"
    assert result.memory_critical and result.referenced_context_keys == ["r"]
    assert result.gt_sql == "SELECT a FROM (SELECT 3 AS a, 2 AS b, 0 AS s)" and result.stale_gt_sql is None
    assert result.paraphrase_sql == "WITH x AS (SELECT 3 AS a, 2 AS b, 0 AS s) SELECT x.a AS a2 FROM x"
    assert result.fallback_sql == "SELECT a FROM (SELECT 8 AS a, 7 AS b, 0 AS s)"  # the neighbouring profile's
    assert extended_violations([dict(t.__dict__) for s in sessions for t in s.turns]) == []


def test_a_continuation_of_a_later_session_or_another_analyst_fails(tmp_path):
    template = load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns()))
    slots = layout(template)
    later = [slots[0], replace(slots[3], continues=2), slots[2], slots[1], slots[4]]
    with pytest.raises(TemplateError, match=r"sec_edgar.yaml: variant vd, turn 1: SEC-X-002 refers to SEC-X-003, which comes later"):
        generate_extended_source(template, PROFILES, later)
    stranger = [*slots[:3], replace(slots[3], analyst=99), slots[4]]
    with pytest.raises(TemplateError, match=r"variant vd, turn 1: SEC-X-004 \(SEC-A099\) refers to SEC-X-003 of another analyst"):
        generate_extended_source(template, PROFILES, stranger)


def test_a_cross_session_turn_its_own_session_answers_fails_loading(tmp_path):
    """vd's turn 2 needs only a, which its turn 1 already states: nothing across sessions is measured."""
    chain = [_chain_turns()[0], {**_chain_turns()[0], "tag": "chained", "phrasings": ["a again", "a once more", "a, again"]}]
    with pytest.raises(TemplateError) as err:
        load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns(), chain=chain))
    message = str(err.value)
    assert "\n" not in message and "sec_edgar.yaml: variant vd, turn 2.refs: a chained turn answerable inside its own session" in message


def test_a_history_that_branches_fails_loading(tmp_path):
    """Two variants continuing v0 would give one analyst two next sessions: a history is one chain."""
    directory = _write(tmp_path, "sec_edgar", _session_turns())
    path = directory / "sec_edgar.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["variants"].append({"id": "ve", "continues": "v0", "turns": _continuing_turns()})
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(TemplateError, match=r"variants\[8\].continues: 'v0' is not a variant listed before it that no other continues"):
        load_extended_template("sec_edgar", directory)


def test_the_built_turns_are_checked_value_by_value(tmp_path):
    """history_violations reads values, not templates: a cross-session turn whose own session came to state
    its value, or whose value no earlier session of its analyst states, is reported by session and turn."""
    from memsql_assets.lib.benchmark.extended.checks import history_violations

    sessions = generate_extended_source(load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns())), PROFILES)
    by_session = {s.session_id: [dict(t.__dict__) for t in s.turns] for s in sessions}
    assert history_violations(by_session) == {}
    third = by_session["SEC-X-004"]
    third[0]["question"] = "picking up from last time: a is 3, and b is 2"  # now it states b (2) itself
    assert history_violations(by_session) == {("SEC-X-004", 2): "a chained turn answerable inside its own session"}
    for turn in by_session["SEC-X-002"] + by_session["SEC-X-003"]:  # the history no longer holds a=3
        turn["state_updates"] = {}
        turn["gt_sql"] = turn["question"] = "SELECT 0"
    assert history_violations(by_session)[("SEC-X-003", 1)] == "no earlier turn of its analyst states ['a']"


def test_an_earlier_result_is_checked_value_by_value(tmp_path):
    """An earlier result is answered only by the turn that ran its query (SEC-X-002's switch returned r)
    and re-used by a ground truth that holds that query: a returning turn whose SQL is not the query, a
    ground truth without it, and an own earlier turn that re-used it are reported by session and turn."""
    from memsql_assets.lib.benchmark.extended.checks import history_violations

    sessions = generate_extended_source(load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns())), PROFILES)
    by_session = {s.session_id: [dict(t.__dict__) for t in s.turns] for s in sessions}
    switch, result = by_session["SEC-X-002"][4], by_session["SEC-X-004"][2]
    assert (switch["state_updates"]["r"], result["tag"]) == (switch["gt_sql"], "earlier_result")
    result["gt_sql"] = "SELECT a FROM (SELECT 3 AS a)"
    assert history_violations(by_session) == {("SEC-X-004", 3): "its ground truth does not re-use the earlier query ['r']"}
    result["gt_sql"] = f"SELECT a FROM ({switch['gt_sql']})"
    by_session["SEC-X-004"][0]["gt_sql"] = f"SELECT 3 AS a FROM ({switch['gt_sql']})"  # its own session re-used it
    assert history_violations(by_session)[("SEC-X-004", 3)] == "a earlier_result turn answerable inside its own session"
    by_session["SEC-X-004"][0]["gt_sql"] = "SELECT 3 AS a"
    switch["gt_sql"] = "SELECT 3 AS a, 2 AS b"  # the turn that returned r ran another query
    assert history_violations(by_session) == {("SEC-X-004", 3): "no earlier turn of its analyst states ['r']"}


def _loading_fails(tmp_path, chain) -> str:
    with pytest.raises(TemplateError) as err:
        load_extended_template("sec_edgar", _write(tmp_path, "sec_edgar", _session_turns(), chain=chain))
    assert "\n" not in str(err.value)
    return str(err.value)


def test_an_earlier_result_its_own_session_re_uses_fails_loading(tmp_path):
    """vd's turn 4 re-uses r, which its turn 3 already re-used: its own session answers it."""
    chain = [*_chain_turns(), {**RESULT_TURN, "phrasings": ["r again", "r once more", "r, again"]}]
    assert "sec_edgar.yaml: variant vd, turn 4.refs: a earlier_result turn answerable inside its own session" in (
        _loading_fails(tmp_path, chain)
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"sql": "SELECT {r} AS a", "paraphrase": "SELECT {r} AS a2"}, "variant vd, turn 3.sql: 'r' must be a result an earlier session returns, used as a query"),
        ({"refs": ["a"], "sql": "SELECT x FROM ({a})", "paraphrase": "WITH y AS ({a}) SELECT 1"}, "variant vd, turn 3.sql: 'a' must be"),
        ({"paraphrase": "SELECT {r} AS a2"}, "variant vd, turn 3.paraphrase: uses [] as a query; the ground truth uses ['r']"),
        ({"tag": "chained"}, "variant vd, turn 3.tag: a turn re-uses an earlier session's result"),
        ({"refs": ["a"], "sql": "SELECT {a} AS a", "paraphrase": "SELECT {a} AS a2"}, "variant vd, turn 3.tag: a turn re-uses"),
        ({"returns": "a"}, "variant vd, turn 3.returns: returns its result as 'a', a key already bound"),
        ({"phrasings": ["what came out on top before", "x", "y"]}, "variant vd, turn 3.phrasings[0]: relative wording 'before'"),
    ],
)
def test_an_earlier_result_used_otherwise_fails_loading(tmp_path, change, expected):
    """A result is a query an earlier session returned, re-used as a query (FROM ({r})) by ground truth and
    paraphrase alike, in exactly the turns tagged earlier_result, under a new key and in evaluable wording."""
    assert expected in _loading_fails(tmp_path, [*_chain_turns()[:2], {**RESULT_TURN, **change}])


@pytest.mark.parametrize("position", ["later", "stranger"])
def test_an_earlier_result_of_a_later_session_or_another_analyst_fails(tmp_path, position):
    """A session opening on an earlier result that would read a later session, or another analyst's,
    fails naming that turn (its first)."""
    directory = _write(tmp_path, "sec_edgar", _session_turns(), chain=[RESULT_TURN, *_chain_turns()[:2]])
    template = load_extended_template("sec_edgar", directory)
    assert template.variants[-1].turns[0].claims[0] == (Claim("r", "carried"),)  # "last time" names r
    slots = layout(template)
    if position == "later":
        slots, expected = [slots[0], replace(slots[3], continues=2), slots[2], slots[1], slots[4]], "which comes later"
    else:
        slots, expected = [*slots[:3], replace(slots[3], analyst=99), slots[4]], "of another analyst"
    with pytest.raises(TemplateError, match=rf"sec_edgar.yaml: variant vd, turn 1: SEC-X-00\d .*{expected}"):
        generate_extended_source(template, PROFILES, slots)


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
    """Per shipped (variant, turn), the sessions using each phrasing differ in number by at most one (a
    returning session, worded as its twin by design, counted with it)."""
    for source in ("sec_edgar", "northwind", "bird_financial"):
        cells: dict[tuple[str, int], Counter] = {}
        for slot in (s for s in layout(load_extended_template(source, EXTENDED_DIR)) if s.twin is None):
            for index, turn in enumerate(slot.variant.turns, start=1):
                phrasing = phrasing_index(slot.wording, turn, index)
                cells.setdefault((slot.variant.id, index), Counter({p: 0 for p in range(len(turn.phrasings))}))[
                    phrasing
                ] += 1
        assert all(max(c.values()) - min(c.values()) <= 1 for c in cells.values()), source


def _slot_turns(slots, field):
    """Per slot, a turn row naming the earlier session `field` ("twin" or "continues") points to."""
    return [
        {
            "session_id": f"S-X-{i + 1:03d}",
            "source": "S",
            "twin_session_id": None if getattr(slot, field) is None else f"S-X-{getattr(slot, field) + 1:03d}",
        }
        for i, slot in enumerate(slots)
    ]


def test_every_distractor_turn_reaches_its_twin_up_to_w_32():
    """The shipped layout: each returning session's twin is `sessions - returning` positions earlier, in
    an earlier wave at W = 1, 4, 8 and 32 (the runner's own waves), and only returning sessions ask a
    distractor turn."""
    from memsql_assets.lib.harness.schedule import twins_reachable_pct

    for source in ("sec_edgar", "northwind", "bird_financial"):
        template = load_extended_template(source, EXTENDED_DIR)
        slots = layout(template)
        turns = _slot_turns(slots, "twin")
        assert sum(slot.variant.turns[-1].tag == "distractor" for slot in slots) == template.returning
        gap = template.sessions - template.returning
        assert [t for t in turns if t["twin_session_id"]] == turns[gap:]
        for w in (1, 4, 8, 32):
            assert twins_reachable_pct(turns, w) == 100.0, (source, w)


def test_every_history_session_reaches_the_one_before_up_to_its_stride():
    """The shipped histories: an analyst's sessions lie `stride` (11) positions apart, so at every W up to
    it each ran in a later wave than the one it continues (the runner's waves), and at W = 12 some do not;
    at least a third of the sessions belong to a history of 3 to 6 sessions, interleaved with other
    analysts' sessions of the same variants."""
    from memsql_assets.lib.harness.schedule import twins_reachable_pct

    for source in ("sec_edgar", "northwind", "bird_financial"):
        template = load_extended_template(source, EXTENDED_DIR)
        slots = layout(template)
        assert stride(template) == 11
        turns = _slot_turns(slots, "continues")
        for w in (1, 4, 8, 11):
            assert twins_reachable_pct(turns, w) == 100.0, (source, w)
        assert twins_reachable_pct(turns, 12) < 100.0
        sizes = Counter(slot.analyst for slot in slots)
        in_history = [slot for slot in slots if sizes[slot.analyst] > 1]
        assert all(3 <= sizes[slot.analyst] <= 6 for slot in in_history)
        assert 3 * len(in_history) >= len(slots)
        mine = [i for i, slot in enumerate(slots) if slot.analyst == in_history[0].analyst]
        between = {slots[i].analyst for i in range(mine[0] + 1, mine[1])}
        assert len(between) >= 3 and in_history[0].analyst not in between


def test_shipped_templates_load_and_cover_every_phenomenon(tmp_path):
    for source in ("sec_edgar", "northwind", "bird_financial"):
        template = load_extended_template(source, EXTENDED_DIR)
        assert len(template.variants) >= 6
        assert {t.tag for v in template.variants for t in v.turns} == set(PHENOMENA)
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.slow
def test_extended_benchmark_on_embedded_data(embedded_dbs, history_checks):
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
    # a history's sessions mark every aside ("Separately: ..."); elsewhere most detours are unmarked
    sessions_of = Counter(a for _, a in {(t["session_id"], t["analyst"]) for t in turns})
    detours = [t for t in turns if t["tag"] == "detour" and sessions_of[t["analyst"]] == 1]
    assert 0 < sum(t["explicit_marker"] for t in detours) < len(detours) / 2
    assert all(t["explicit_marker"] for t in turns if t["tag"] == "detour" and sessions_of[t["analyst"]] > 1)
    history_checks(turns)
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
    continued, other, later = sessions[1], sessions[0], sessions[2]
    walked = {r["session_id"]: r["sql"] for r in table if r["variant_id"] == "vc" and r["turn_index"] == 1}
    assert walked[continued.session_id] == later.turns[0].gt_sql
    assert walked[other.session_id] == "SELECT 8 AS a" != later.turns[0].gt_sql
    assert other.analyst != later.analyst
