"""Stage 3: the dependency invariant (paper Algorithms 3 and 4)."""
from .invariant import ReferenceValidator, Validator, changed_sentences, invariant_check, tolerant_compare
from .parsers import Parse, Parser, SpacyParser
from .sentences import split_sentences

__all__ = ["Parse", "Parser", "ReferenceValidator", "SpacyParser", "Validator", "changed_sentences",
           "invariant_check", "split_sentences", "tolerant_compare"]
