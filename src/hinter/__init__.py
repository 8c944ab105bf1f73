"""hinter: find hidden intersectional bias in language models.

Pipeline, one module per stage: dictionary -> mutation -> validity -> models -> oracle -> store -> measures/report,
wired by `engine.execute`; `hinter.run` and `hinter.build_suite` (api.py) take every option by name.
"""
from .api import build_suite, run
# the function, which shadows the subpackage's name here: `from hinter.audit.tables import ...` still works
from .audit import audit
from .dictionary import Dictionary, Pair, load_dictionary
from .engine import MutantRecord, Run
from .records import TextRecord
from .errors import HinterError, InputError, ModelError
from .suite import load_suite
from .version import __version__

__all__ = ["Dictionary", "HinterError", "InputError", "ModelError", "MutantRecord", "Pair", "Run", "TextRecord",
           "audit", "build_suite", "load_dictionary", "load_suite", "run"]
