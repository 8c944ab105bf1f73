"""The intersectional audit (`hinter audit`, `hinter.audit(...)`): every text that describes a person rendered in
each sex x race/ethnicity category, the model asked about each rendering, and the selection rates and impact
ratios that NYC Local Law 144 and the EEOC's four-fifths rule read. Stages: categories.py (the category file),
render.py (renderings and their validity), run.py (asking, the outputs), tables.py (pure statistics), page.py
(audit.html)."""
from hinter.audit.categories import Categories, load_categories
from hinter.audit.run import audit

__all__ = ["Categories", "audit", "load_categories"]
