"""hinter: find hidden intersectional bias in language models.

Pipeline, one module per stage: dictionary -> mutation -> validity -> models -> oracle -> store -> measures/report,
wired by `engine.execute`; `hinter.run` and `hinter.build_suite` (api.py) take every option by name.
"""
from hinter.api import build_suite, run
# the function, which shadows the subpackage's name here: `from hinter.audit.tables import ...` still works
from hinter.audit import audit
from hinter.mutation.dictionary import Dictionary, Pair, load_dictionary
from hinter.pipeline.engine import MutantRecord, Run
from hinter.records import TextRecord
from hinter.errors import HinterError, InputError, ModelError
from hinter.pipeline.suite import load_suite
from hinter.version import __version__

__all__ = ["Dictionary", "HinterError", "InputError", "ModelError", "MutantRecord", "Pair", "Run", "TextRecord",
           "audit", "build_suite", "load_dictionary", "load_suite", "run"]
