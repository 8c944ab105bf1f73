"""Stage 3: the dependency invariant (paper Algorithms 3 and 4)."""
from hinter.validity.invariant import (DISCARD_REASONS, ReferenceValidator, Validator, changed_sentence_pairs, changed_sentences, invariant_check,
                        tolerant_compare)
from hinter.validity.grammar import grammar_score, grammar_scores
from hinter.validity.parsers import Parse, Parser, SpacyParser
from hinter.validity.sentences import sentence_spans, split_sentences

__all__ = ["DISCARD_REASONS", "Parse", "Parser", "ReferenceValidator", "SpacyParser", "Validator", "changed_sentence_pairs", "changed_sentences",
           "grammar_score", "grammar_scores", "invariant_check", "sentence_spans", "split_sentences", "tolerant_compare"]
