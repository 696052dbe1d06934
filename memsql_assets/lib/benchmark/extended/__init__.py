"""The extended benchmark: its templates (templates/extended/<source>.yaml), generation and invariants.

A template turn is a paper turn (templates.py: question, requirement, SQL, paraphrase, refs, binds,
let) with more fields: `tag`, the phenomenon it tests; `phrasings`, the question worded at least
three ways (chosen by index arithmetic, so generation stays byte-identical); `overwrites`, the keys
a correction rebinds; and `returns`, the key a later session names its result by (its SQL, which an
`earlier_result` turn re-uses as a subquery). A turn after a correction also carries the ground
truth built with the overwritten values (`stale_gt_sql`), which the scorer compares with. Every
question's relative wording is checked against the state at its turn (wording.py). A source's last
`returning` sessions each return to a twin `sessions - returning` positions earlier (`layout`): same variant and
wording, the neighbouring profile, so that episodic retrieval can reach the twin, the cross-session
distractor of the returning session's last turn. Memory across sessions: a variant that `continues`
another starts from the state its history left (the chain of variants it continues), with its profile
and analyst; the `histories` analysts of a source each have one session per variant of a chain,
`stride` positions apart (layout), and their turns tagged with a CROSS_SESSION_TAGS tag need values
(or results) only earlier sessions of the history stated (or returned). Every other session has an analyst of its own.

Its modules, one job each: `template` (the template's types and a variant's history), `load` (parsing
and validating a template file), `walk` (rendering a session's turns, and the wording check), `layout`
(the order of a source's sessions: twins and analysts' histories), `build` (the sessions and their
turns) and `checks` (the invariants of the built turns, the histories' value by value).
"""
