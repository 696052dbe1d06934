"""reader-probe: values read from the prompt's text as build_messages assembles it, never from templates."""

from memsql_assets.lib.agent.prompts import PromptParts, build_messages
from memsql_assets.lib.memory.facts import FACTS_HEADER, facts_block
from memsql_assets.lib.models.replies import message_text
from memsql_assets.lib.reference.builtins import parse_resolved_block, recall_probe_sql
from memsql_assets.lib.reference.reader_probe import SqlFragment, read_prompt
from memsql_assets.lib.sql.filters import filters

SEC_T1_SQL = (
    "SELECT af.fiscal_year, ROUND(af.value_billions, 2) AS value_billions FROM annual_financials af "
    "JOIN companies c ON c.ticker = af.ticker WHERE c.company_name = 'O''Neil Corp' AND af.metric = 'cash' "
    "AND af.fiscal_year IN (2021, 2022) ORDER BY af.fiscal_year"
)
NET_INCOME_SQL = (
    "SELECT ROUND(af.value_billions, 2) AS value_billions FROM annual_financials af "
    "WHERE af.ticker = 'ONC' AND af.metric = 'net_income' AND af.fiscal_year = 2022"
)
PAIR_TEMPLATE = (
    "SELECT af.fiscal_year, af.value_billions FROM annual_financials af WHERE af.ticker = {ticker} "
    "AND af.metric = {metric} AND af.fiscal_year IN ({older_year}, {newer_year})"
)
FOCUS_TEMPLATE = "SELECT af.value_billions FROM annual_financials af WHERE af.ticker = {ticker} AND af.fiscal_year = {focus_year}"


def _texts(**parts):
    base = dict(source="SEC", schema="t(x)", question="q?", output_requirements="one row")
    return [message_text(m) for m in build_messages(PromptParts(**{**base, **parts}))]


def _turn(question, sql):
    return {"question": question, "sql": sql, "result_summary": "(2 rows)"}


def test_filters_read_literals_and_the_table_an_alias_names():
    by_label = {f.label: f for f in filters(SEC_T1_SQL)}
    assert by_label["fiscal_year"].values == (2021, 2022)
    name = by_label["company_name"]
    assert (name.values, name.table, "ticker" in name.siblings) == (("O'Neil Corp",), "companies", True)
    assert filters("this is not SQL (") == () and filters(None) == ()


def test_the_most_recent_sql_wins_and_the_resolved_block_first():
    recent = [  # most recent first, as working memory arrives
        _turn("Now focus on the newer year. What was net income?", NET_INCOME_SQL),
        _turn("Show O'Neil Corp cash for 2021 and 2022.", SEC_T1_SQL),
    ]
    texts = _texts(working=recent)
    got = read_prompt(texts, ["ticker", "metric", "older_year", "newer_year"], {}, PAIR_TEMPLATE)
    # The newest SQL states the ticker and the metric; only the first states the pair.
    assert got == {"ticker": "ONC", "metric": "net_income", "older_year": 2021, "newer_year": 2022}
    assert read_prompt(texts, ["ticker", "focus_year"], {}, FOCUS_TEMPLATE) == {"ticker": "ONC", "focus_year": 2022}
    resolved = _texts(working=recent, resolved={"ticker": "RES"})
    messages = [{"content": t} for t in resolved]
    assert read_prompt(resolved, ["ticker"], parse_resolved_block(messages), FOCUS_TEMPLATE) == {"ticker": "RES"}
    assert read_prompt(_texts(), ["ticker"], {}, FOCUS_TEMPLATE) == {}


def test_an_entity_named_by_another_column_becomes_a_lookup():
    texts = _texts(working=[_turn("Show O'Neil Corp cash for 2021 and 2022.", SEC_T1_SQL)])
    got = read_prompt(texts, ["ticker"], {}, FOCUS_TEMPLATE)
    assert isinstance(got["ticker"], SqlFragment)
    sql = recall_probe_sql(FOCUS_TEMPLATE, ["ticker"], {"focus_year": 2021}, got)
    assert "(SELECT ticker FROM companies WHERE company_name = 'O''Neil Corp')" in sql
    # The lookup it wrote is read again by a later turn (an unqualified column of a one-table SELECT).
    later = read_prompt(_texts(working=[_turn("Its cash in 2021?", sql)]), ["ticker"], {}, FOCUS_TEMPLATE)
    assert later == got


def test_first_keys_read_the_oldest_turn_and_side_questions_are_skipped():
    template = "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = {first_customer}"
    recent = [
        _turn("Separately: how many orders has Zed Ltd placed?", "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = 'ZED'"),
        _turn("Now the same for Bee Co.", "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = 'BEE'"),
        _turn("Show Ant Inc.'s orders.", "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = 'ANT'"),
    ]
    texts = _texts(working=recent)
    assert read_prompt(texts, ["first_customer"], {}, template) == {"first_customer": "ANT"}
    current = template.replace("first_customer", "customer_id")
    assert read_prompt(texts, ["customer_id"], {}, current) == {"customer_id": "BEE"}, "the aside is not the focus"


def test_year_pairs_the_older_of_two_and_the_adjacent_year():
    pair_sql = "SELECT 1 FROM Orders o WHERE strftime('%Y', o.OrderDate) IN ('2019', '2021')"
    older = "SELECT 1 FROM Orders o WHERE strftime('%Y', o.OrderDate) = {older_year}"
    texts = _texts(working=[_turn("Its orders in 2019 and 2021?", pair_sql)])
    assert read_prompt(texts, ["older_year"], {}, older) == {"older_year": "2019"}
    one = _texts(working=[_turn("Now focus on the newer year.", NET_INCOME_SQL)])
    assert read_prompt(one, ["older_year", "newer_year"], {}, PAIR_TEMPLATE) == {"newer_year": 2022, "older_year": 2021}


def test_the_memorys_facts_block_says_it_is_the_memorys_reading():
    block = facts_block([{"session_id": "SEC-1-001", "turn_index": 1, "sql": SEC_T1_SQL}])
    assert block is not None and block.header == FACTS_HEADER and "memory" in block.header
    assert "c.company_name = 'O''Neil Corp' (session SEC-1-001, turn 1)" in block.text
    assert facts_block([{"sql": "(none)"}]) is None


def test_a_value_the_question_names_wins_over_the_most_recent_sql():
    recent = [
        _turn("Actually, make that 2019: its revenue for 2019 and 2022?", SEC_T1_SQL.replace("'cash'", "'revenue'")),
        _turn("Show O'Neil Corp cash for 2021 and 2022.", SEC_T1_SQL),
    ]
    metric = "SELECT af.value_billions FROM annual_financials af WHERE af.metric = {metric}"
    assert read_prompt(_texts(working=recent, question="Switch to Zed Ltd. Its cash then?"), ["metric"], {}, metric) == {
        "metric": "cash"
    }
    # Unnamed, the most recent statement holds; a one-letter code is never read from the article "a".
    assert read_prompt(_texts(working=recent), ["metric"], {}, metric) == {"metric": "revenue"}
    status = "SELECT COUNT(*) FROM loan l WHERE l.status = {loan_status}"
    loans = [
        _turn("Actually, I meant status C.", "SELECT COUNT(*) FROM loan l WHERE l.status = 'C'"),
        _turn("How many loans with status A?", "SELECT COUNT(*) FROM loan l WHERE l.status = 'A'"),
    ]
    asked = _texts(working=loans, question="And a count of those loans?")
    assert read_prompt(asked, ["loan_status"], {}, status) == {"loan_status": "C"}


def test_a_return_cue_reads_past_an_unmarked_detour():
    template = "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = {customer_id}"
    recent = [  # most recent first: two detours that name everything they compare, unmarked
        _turn("Count every order of Zed Ltd.", "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = 'Zed Ltd'"),
        _turn("What is Zed Ltd's largest order?", "SELECT MAX(x) FROM Orders o WHERE o.CustomerID = 'Zed Ltd'"),
        _turn("And its orders since then?", "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = 'ANT'"),
        _turn("Show Ant Inc.'s orders.", "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = 'ANT'"),
    ]
    back = _texts(working=recent, question="Back to its orders: how many shipped?")
    assert read_prompt(back, ["customer_id"], {}, template) == {"customer_id": "ANT"}
    plain = _texts(working=recent, question="And how many shipped?")
    assert read_prompt(plain, ["customer_id"], {}, template) == {"customer_id": "Zed Ltd"}, "no cue: the detour"
    # Only detours shown: the oldest turn shown is kept (it may have opened the conversation).
    detours = _texts(working=recent[:2], question="Returning to that customer, how many shipped?")
    assert read_prompt(detours, ["customer_id"], {}, template) == {"customer_id": "Zed Ltd"}


def test_a_first_key_reads_a_turn_that_pointed_to_the_start_before_the_oldest_shown():
    template = "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = {first_customer}"
    window = [  # most recent first; the session's first turn is no longer shown
        _turn("And its freight?", "SELECT SUM(o.Freight) FROM Orders o WHERE o.CustomerID = 'BEE'"),
        _turn("Back to the first customer: its orders?", "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = 'ANT'"),
        _turn("Count every order of Zed Ltd.", "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = 'ZED'"),
    ]
    assert read_prompt(_texts(working=window), ["first_customer"], {}, template) == {"first_customer": "ANT"}
    # Without that turn: BEE, which the newest SQL states though no question shown names it, was carried
    # from before the window (carried_from_before); Zed Ltd is what its own question is about.
    assert read_prompt(_texts(working=window[::2]), ["first_customer"], {}, template) == {"first_customer": "BEE"}


ORDERS_TEMPLATE = "SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = {customer_id}"
YEARS_TEMPLATE = (
    "SELECT SUM(d.UnitPrice) FROM Orders o JOIN [Order Details] d ON d.OrderID = o.OrderID "
    "WHERE strftime('%Y', o.OrderDate) IN ({older_year}, {newer_year})"
)


def _orders(customer, year=None):
    when = f" AND strftime('%Y', o.OrderDate) = '{year}'" if year else ""
    return f"SELECT COUNT(*) FROM Orders o WHERE o.CustomerID = '{customer}'{when}"


def _years_sql(older, newer):
    return YEARS_TEMPLATE.format(older_year=f"'{older}'", newer_year=f"'{newer}'")


def test_a_first_key_with_no_start_phrase_in_view_reads_the_value_carried_from_before_not_an_old_detour():
    template = ORDERS_TEMPLATE.replace("customer_id", "first_customer")
    window = [  # most recent first; the turn that opened the thread (ANT) is no longer shown
        _turn("And its freight?", _orders("BEE")),
        _turn("Now Bee Co. instead: its orders in 1998?", _orders("BEE", 1998)),
        _turn("And in 1998?", _orders("ANT", 1998)),
        _turn("What is Zed Ltd's total order count?", _orders("ZED")),  # an unmarked detour, the oldest shown
    ]
    got = read_prompt(_texts(working=window), ["first_customer"], {}, template)
    assert got == {"first_customer": "ANT"}, "stated without being named, and by no older turn shown"


def test_a_return_cue_skips_a_digression_in_a_summary_too():
    from memsql_assets.lib.memory.protocol import PromptBlock
    from memsql_assets.lib.memory.summary import SUMMARY_HEADER, render_turns

    kept = [  # conversation order, as the summary shows its turns
        {"question": "How many orders did my customer place in 1996?", "sql": _orders("ANT", 1996)},
        {"question": "How many orders did Zed Ltd place in 1998?", "sql": _orders("ZED", 1998)},  # a digression
    ]
    block = PromptBlock(SUMMARY_HEADER, render_turns(kept)).render()
    texts = _texts(blocks=(block,), question="Going back to my customer: how many orders in 1997?")
    assert read_prompt(texts, ["customer_id"], {}, ORDERS_TEMPLATE) == {"customer_id": "ANT"}


def test_as_i_define_them_now_reads_the_similar_turn_that_redefined_them_first():
    similar = [  # retrieval order: the older definition is the closer match
        _turn("What were the sales of my category in my years, 1996 and 1997?", _years_sql(1996, 1997)),
        _turn("By my years I now mean 1997 and the later of those two. Sales in both?", _years_sql(1997, 1998)),
    ]
    question = "Once more, what were the sales of my category in my years as I define them now?"
    got = read_prompt(_texts(episodic=similar, question=question), ["older_year", "newer_year"], {}, YEARS_TEMPLATE)
    assert got == {"older_year": "1997", "newer_year": "1998"}
    plain = read_prompt(_texts(episodic=similar, question="Sales in my years?"), ["older_year"], {}, YEARS_TEMPLATE)
    assert plain == {"older_year": "1996"}, "without the cue, retrieval order"


OLDER_TEMPLATE = "SELECT af.value_billions FROM annual_financials af WHERE af.ticker = {ticker} AND af.fiscal_year = {older_year}"


def test_a_convention_as_it_stands_now_reads_the_turn_that_changed_it_first():
    """Similar past turns come by similarity, not by time: "the earlier of my years as they stand now"
    takes the older year of the turn that said "from now on" (an analyst's knowledge update), not the
    year of a more similar turn from before it; without the cue, the more similar turn is read."""
    before = _turn("What was that company's revenue in the earlier of my years?", NET_INCOME_SQL.replace("2022", "2021"))
    update = _turn(
        "By my years I now mean 2015 and the later of those two. Pull my metric for both.",
        "SELECT af.fiscal_year, af.value_billions FROM annual_financials af WHERE af.ticker = 'ONC' "
        "AND af.metric = 'cash' AND af.fiscal_year IN (2015, 2022) ORDER BY af.fiscal_year",
    )
    now = _texts(episodic=[before, update], question="And its revenue in the earlier of my years as they stand now?")
    assert read_prompt(now, ["ticker", "older_year"], {}, OLDER_TEMPLATE) == {"ticker": "ONC", "older_year": 2015}
    plain = _texts(episodic=[before, update], question="And its revenue in the earlier of my years?")
    assert read_prompt(plain, ["ticker", "older_year"], {}, OLDER_TEMPLATE) == {"ticker": "ONC", "older_year": 2021}


def test_the_later_of_my_years_names_one_year_of_the_pair():
    """A shown turn about "the earlier of my years" that compared one year stated the older one; the
    newer one is inferred as the adjacent year, as for "the older year"."""
    earlier = _turn("What was that company's revenue in the earlier of my years?", NET_INCOME_SQL.replace("2022", "2021"))
    texts = _texts(episodic=[earlier], question="And in the later of my years?")
    newer = OLDER_TEMPLATE.replace("older_year", "newer_year")
    assert read_prompt(texts, ["ticker", "newer_year"], {}, newer) == {"ticker": "ONC", "newer_year": 2022}


def test_a_year_stated_further_back_beats_the_adjacent_guess():
    """After "my years" moved to 2015 and 2022, "the later of my years" reads 2022 where a shown turn
    states it, not 2016, the year after the most recent "earlier of my years"."""
    moved = _turn("And its revenue in the earlier of my years as they stand now?", NET_INCOME_SQL.replace("2022", "2015"))
    update = _turn(
        "By my years I now mean 2015 and the later of those two. Pull my metric for both.",
        "SELECT af.fiscal_year, af.value_billions FROM annual_financials af WHERE af.ticker = 'ONC' "
        "AND af.metric = 'cash' AND af.fiscal_year IN (2015, 2022) ORDER BY af.fiscal_year",
    )
    newer = OLDER_TEMPLATE.replace("older_year", "newer_year")
    texts = _texts(working=[moved], episodic=[update], question="And in the later of my years?")
    assert read_prompt(texts, ["ticker", "newer_year"], {}, newer) == {"ticker": "ONC", "newer_year": 2022}
    alone = _texts(working=[moved], question="And in the later of my years?")
    assert read_prompt(alone, ["ticker", "newer_year"], {}, newer) == {"ticker": "ONC", "newer_year": 2016}


TOP_SQL = (
    "SELECT od.ProductID AS product_id, ROUND(SUM(od.UnitPrice * od.Quantity), 2) AS total_sales FROM Orders o "
    "JOIN [Order Details] od ON od.OrderID = o.OrderID WHERE o.CustomerID = 'ANT' AND strftime('%Y', o.OrderDate) = '1997' "
    "GROUP BY od.ProductID ORDER BY total_sales DESC, od.ProductID LIMIT 3"
)
RESULT_TEMPLATE = (
    "SELECT SUM(od.Quantity) AS units FROM [Order Details] od "
    "WHERE od.ProductID IN (SELECT product_id FROM ({top_products}))"
)


def test_an_earlier_result_reads_the_shown_query_that_kept_the_top_rows():
    """"The products that came out on top last time": the first shown query that kept the top rows of a
    ranking (ORDER BY ... LIMIT n, n >= 2) and returns the column the template reads from the result, as
    written, filled in as a query; not an aside's, not a LIMIT 1 answer, not a ranking of other columns.
    A later turn that re-used it (in a FROM) shows it too, and annotated or guessed text fills as a query."""
    aside = _turn("Separately: which three products did Zed buy the most of?", TOP_SQL.replace("'ANT'", "'ZED'"))
    single = _turn("Which product did it buy the most of?", TOP_SQL.replace("LIMIT 3", "LIMIT 1"))
    years = _turn(
        "Which three years were its best?",
        "SELECT strftime('%Y', o.OrderDate) AS order_year, COUNT(*) AS n FROM Orders o GROUP BY 1 ORDER BY n DESC LIMIT 3",
    )
    top = _turn("Which three products did it buy the most of in 1997?", TOP_SQL)
    question = "How many units of the three products that came out on top last time were sold?"
    texts = _texts(episodic=[aside, single, years, top], question=question)
    assert read_prompt(texts, ["top_products"], {}, RESULT_TEMPLATE) == {"top_products": TOP_SQL}
    filled = RESULT_TEMPLATE.replace("{top_products}", TOP_SQL)
    reused = _turn("And their sales, the three products that came out on top last time?", filled)
    assert read_prompt(_texts(episodic=[reused], question=question), ["top_products"], {}, RESULT_TEMPLATE) == {
        "top_products": TOP_SQL
    }
    assert read_prompt(_texts(episodic=[aside, single, years], question=question), ["top_products"], {}, RESULT_TEMPLATE) == {}
    got = read_prompt(texts, ["top_products"], {}, RESULT_TEMPLATE)
    assert recall_probe_sql(RESULT_TEMPLATE, ["top_products"], {}, got) == filled
    assert recall_probe_sql(RESULT_TEMPLATE, ["top_products"], {}, {"top_products": TOP_SQL}) == filled
