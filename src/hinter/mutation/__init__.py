"""Stage 2, mutation: the bias dictionary and its matcher, atomic and intersectional mutants, the edits that follow a replacement, --person-only, and the dictionary's own tools (lint, extract)."""
