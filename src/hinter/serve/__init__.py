"""`hinter serve` (issue 16): a local web application over one or more runs: the report, a findings browser with
triage, and "try a sentence" (one text through the campaign's own stages, live).

`app.py`: the Starlette application (routes, token, limits, JSON errors); `try_text.py`: one text through
mutation, validity, the model and the oracle; `explain.py`: why the invariant discarded a mutant, aligned.
"""
