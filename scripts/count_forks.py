"""Count the branch lines that choose between a label task and a free-text task (issue 42, item 2).

    python scripts/count_forks.py [SRC]        # SRC: a checkout's src/hinter (default: this one's)

An AST scan of every module outside the task and judge modules (models/tasks.py, generative/). A fork line is a line
that asks the task's kind, or an `if` (statement, expression, comprehension filter, `while`) whose test reads
the answer. The questions asked: `is_generative(...)`, `getattr(x, "generative", ...)`, `x.generative` (the
backends' copy), `run_aspects(...)`, `free_text(...)` / `x.free_text` (prose, Instance), `generative` settings
(`settings.get("generative")`, `settings["generative"]`), and those of this change: `task_kind` and the
task's own record read as a kind (`task.scored`; `task.generation_settings()` in an `if` test); a name assigned from one of them (`generative = ...`, `free = ...`, `self.generative = ...`)
is followed into the `if` tests that read it. Prints the count per module and the total.
"""
from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

EXCLUDED = ("models/tasks.py", "generative/")
QUESTIONS = {"is_generative", "run_aspects", "free_text", "task_kind", "is_free_text", "generation_settings"}
ATTRIBUTES = {"generative", "free_text", "free_text_task", "scored"}
# a value that differs by kind (what changes a free-text task's answers; "" for a label): a fork only where an `if`
# reads it, not where it is used as it is (openai: added to the prompt's hash)
VALUES = {"generation_settings"}


def _asks(node: ast.AST, tainted: set[str]) -> bool:
    """Whether an expression asks the task's kind (directly, or through a name assigned from an answer)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in QUESTIONS:
                return True
            if name == "getattr" and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) \
                    and n.args[1].value in ATTRIBUTES:
                return True
            if name == "get" and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value == "generative":
                return True
        elif isinstance(n, ast.Attribute) and (n.attr in ATTRIBUTES or "." + n.attr in tainted):
            return True
        elif isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and n.slice.value == "generative":
            return True
        elif isinstance(n, ast.Name) and n.id in tainted:
            return True
    return False


def _answer(value: ast.AST, tainted: set[str]) -> bool:
    """Whether a value is the answer itself, maybe negated, compared with None or passed through bool()."""
    while True:
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
            value = value.operand
        elif isinstance(value, ast.Compare) and len(value.comparators) == 1 \
                and isinstance(value.comparators[0], ast.Constant) and value.comparators[0].value is None:
            value = value.left
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "bool" \
                and len(value.args) == 1:
            value = value.args[0]
        else:
            break
    if isinstance(value, ast.Name):
        return value.id in tainted
    return isinstance(value, (ast.Call, ast.Attribute, ast.Subscript)) and _asks(value, tainted) and _direct(value)


def _direct(value: ast.AST) -> bool:
    """A question asked directly, not an expression that merely contains one (`labels if not generative ...`)."""
    if isinstance(value, ast.Call):
        f = value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        return name in QUESTIONS or name in ("getattr", "get")
    if isinstance(value, ast.Attribute):
        return value.attr in ATTRIBUTES
    return isinstance(value, ast.Subscript)


def fork_lines(source: str) -> set[int]:
    tree = ast.parse(source)
    tainted: set[str] = set()
    for _ in range(3):  # names holding an answer (`free = run_aspects(s) is not None`), and names assigned from those
        for n in ast.walk(tree):
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and _answer(n.value, tainted):
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    for x in (t.elts if isinstance(t, ast.Tuple) else [t]):
                        if isinstance(x, ast.Name):
                            tainted.add(x.id)
                        elif isinstance(x, ast.Attribute):  # self.generative = ...: read as self.generative
                            tainted.add("." + x.attr)
    lines: set[int] = set()
    for n in ast.walk(tree):
        tests = []
        if isinstance(n, (ast.If, ast.IfExp, ast.While)):
            tests = [n.test]
        elif isinstance(n, ast.comprehension):
            tests = list(n.ifs)
        for t in tests:
            if _asks(t, tainted):
                lines.add(t.lineno)
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in QUESTIONS - VALUES or (name == "getattr" and len(n.args) >= 2
                                              and isinstance(n.args[1], ast.Constant) and n.args[1].value in ATTRIBUTES):
                lines.add(n.lineno)  # the question itself, wherever it is asked
    return lines


def count(root: Path) -> Counter:
    out: Counter = Counter()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(EXCLUDED[1]) or rel == EXCLUDED[0]:
            continue
        n = len(fork_lines(path.read_text(encoding="utf-8")))
        if n:
            out[rel] = n
    return out


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "src" / "hinter"
    counts = count(root)
    for rel, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{n:4d}  {rel}")
    print(f"{sum(counts.values()):4d}  total, {len(counts)} modules")


if __name__ == "__main__":
    main()
