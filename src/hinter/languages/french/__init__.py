"""Everything French (`--language fr`): the inflection and the agreement a change of gender carries (grammar.py,
mutation), the agreement features and check the invariant compares (agreement.py), masking's gendered words and
determiners (masking.py) and the audit's renderings (audit.py). Only hinter.languages imports this package (an
import-linter contract, pyproject.toml): every other module learns about French through its `Language` record,
`hinter.languages.get_language("fr")`. The modules load lazily: an English run imports none of them."""
