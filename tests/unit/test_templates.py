"""Template loading: the shipped templates are valid; each broken rule names file, variant and turn."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from memsql_assets.lib.benchmark.templates import TEMPLATES_DIR, check_profile_columns, load_tier_template
from memsql_assets.lib.errors import TemplateError
from memsql_assets.lib.sources.config import SOURCE_NAMES


@pytest.mark.parametrize("source", SOURCE_NAMES)
@pytest.mark.parametrize("tier", [1, 2, 3])
def test_shipped_templates_load(source, tier):
    template = load_tier_template(source, tier)
    assert template.variants
    for variant in template.variants:
        assert len(variant.turns) == {1: 1, 2: 4, 3: 10}[tier]
        assert not variant.turns[0].refs
        assert all(turn.refs for turn in variant.turns[1:])


def _copy_with(tmp_path: Path, name: str, mutate) -> Path:
    directory = tmp_path / "templates"
    shutil.copytree(TEMPLATES_DIR, directory)
    path = directory / name
    data = yaml.safe_load(path.read_text())
    mutate(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return directory


def test_unbound_reference_names_file_variant_and_turn(tmp_path):
    def mutate(d):
        d["variants"][0]["turns"][2]["refs"] = ["ticker", "fiscal_quarter"]

    directory = _copy_with(tmp_path, "sec_edgar.t2.yaml", mutate)
    with pytest.raises(TemplateError) as err:
        load_tier_template("sec_edgar", 2, directory)
    msg = str(err.value)
    assert "sec_edgar.t2.yaml" in msg
    assert "variant sec-t2-higher-year, turn 3" in msg
    assert "fiscal_quarter" in msg and "no earlier turn binds" in msg


def test_turn_after_first_without_refs_is_rejected(tmp_path):
    directory = _copy_with(tmp_path, "northwind.t2.yaml", lambda d: d["variants"][1]["turns"][3].pop("refs"))
    with pytest.raises(TemplateError, match=r"northwind.t2.yaml: variant nw-t2-order-profile, turn 4.refs"):
        load_tier_template("northwind", 2, directory)


def test_question_stating_a_referenced_key_is_rejected(tmp_path):
    def mutate(d):
        d["variants"][0]["turns"][1]["question"] = "How many did {region} have?"

    directory = _copy_with(tmp_path, "bird_financial.t2.yaml", mutate)
    with pytest.raises(TemplateError, match="states referenced key 'region'"):
        load_tier_template("bird_financial", 2, directory)


def test_sql_placeholder_neither_referenced_nor_stated(tmp_path):
    def mutate(d):
        d["variants"][0]["turns"][1]["sql"] += " AND 1 = {newer_year}"

    directory = _copy_with(tmp_path, "bird_financial.t3.yaml", mutate)
    with pytest.raises(TemplateError, match="placeholder 'newer_year' is neither referenced"):
        load_tier_template("bird_financial", 3, directory)


def test_wrong_turn_count_for_tier(tmp_path):
    directory = _copy_with(tmp_path, "sec_edgar.t3.yaml", lambda d: d["variants"][0]["turns"].pop())
    with pytest.raises(TemplateError, match="has 9 turns; tier 3 needs 10"):
        load_tier_template("sec_edgar", 3, directory)


def test_unknown_profile_column_is_rejected():
    template = load_tier_template("sec_edgar", 1)
    with pytest.raises(TemplateError, match="unknown name 'company_name'"):
        check_profile_columns(template, {"ticker", "metric", "metric_label", "older_year", "newer_year"})


def test_malformed_yaml_names_file(tmp_path):
    directory = tmp_path / "templates"
    shutil.copytree(TEMPLATES_DIR, directory)
    (directory / "northwind.t1.yaml").write_text("source: northwind\ntier: [1\n")
    with pytest.raises(TemplateError, match=r"northwind.t1.yaml: <file>: not valid YAML"):
        load_tier_template("northwind", 1, directory)


@pytest.mark.parametrize("field", ["output_requirements", "paraphrase"])
def test_turn_without_requirement_or_paraphrase_names_file_variant_and_turn(tmp_path, field):
    directory = _copy_with(tmp_path, "northwind.t3.yaml", lambda d: d["variants"][0]["turns"][6].pop(field))
    with pytest.raises(TemplateError) as err:
        load_tier_template("northwind", 3, directory)
    assert (
        f"northwind.t3.yaml: variant nw-t3-account-review, turn 7.{field}: expected a non-empty string"
        in str(err.value)
    )


@pytest.mark.parametrize("text", ["Return the count for {region}.", "Return one column {"])
def test_requirement_with_a_placeholder_is_rejected(tmp_path, text):
    def mutate(d):
        d["variants"][0]["turns"][1]["output_requirements"] = text

    directory = _copy_with(tmp_path, "bird_financial.t2.yaml", mutate)
    with pytest.raises(
        TemplateError, match=r"variant bird-t2-aggregates, turn 2.output_requirements: must not"
    ):
        load_tier_template("bird_financial", 2, directory)


def test_paraphrase_must_use_the_ground_truths_values(tmp_path):
    def mutate(d):
        d["variants"][1]["turns"][1]["paraphrase"] = (
            "SELECT ROUND(af.value_billions, 2) FROM annual_financials af"
        )

    directory = _copy_with(tmp_path, "sec_edgar.t2.yaml", mutate)
    with pytest.raises(
        TemplateError, match=r"variant sec-t2-change, turn 2.paraphrase: uses placeholders \[\]"
    ):
        load_tier_template("sec_edgar", 2, directory)


def test_every_shipped_turn_carries_a_requirement_and_a_paraphrase():
    turns = [
        turn
        for source in SOURCE_NAMES
        for tier in (1, 2, 3)
        for variant in load_tier_template(source, tier).variants
        for turn in variant.turns
    ]
    assert len(turns) == 60
    assert all(t.output_requirements.startswith("Return ") for t in turns)
    assert all(t.paraphrase and t.paraphrase != t.sql for t in turns)
