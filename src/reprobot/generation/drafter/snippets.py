"""An issue's reproducer as runnable Python: code blocks and sessions turned into statements.

Real snippets mix prose into code, carry prompt markers and comments like ``<--- wrong``, and
put imports anywhere; everything here repairs such text in general ways, and gives up (returns
nothing) rather than guess when the text does not become valid Python.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

from reprobot.generation.drafter.output_comments import statement_output
from reprobot.generation.drafter.printed_output import block_output
from reprobot.generation.drafter.snippet_names import bound_names, undefined_names
from reprobot.generation.drafter.sources import OUT_PROMPT, stated_value
from reprobot.generation.issue.expectations import Expectation
from reprobot.generation.issue.report import CodeBlock, IssueReport, Session
from reprobot.generation.issue.shown_output import output_after
from reprobot.validation import UNPARSABLE, UNREADABLE

_MAX_REPAIRS = 12
_MAX_SOURCE_CHARS = 20_000
# A session line annotated by the reporter: "f(x)  <--- this is wrong", "f(x)  # <- bug".
_MARKER = re.compile(r"\s+(?:<-+|#\s*<-+|←)\s*.*$")
# The same, where it would still parse ("f(3)  <--- wrong" is "f(3) < ---wrong"): an arrow of
# two or more dashes, or a bare one before words.
_ARROW = re.compile(r"\s+(?:<-{2,}|←)(?:\s.*)?$|\s+<-+\s+[A-Za-z].*$")
_PROMPT_LEFTOVER = re.compile(r"^(?:>>>|\.\.\.|In \[\d+\]:|\s+\.\.\.:)\s?")
# "print res", "print 'a', x": not "print >>f, x" nor a trailing comma's special meaning.
_PY2_PRINT = re.compile(r"^(\s*)print[ \t]+(?![(>])([^#\n]*?[^,\s#])[ \t]*$")
_VERSION_QUERY = re.compile(r"(__version__|\bversion\b|sys\.version|platform\.)")


@dataclass(frozen=True)
class Step:
    """One top-level statement, and what the issue shows it printed (sessions only)."""

    source: str
    output: str = ""
    marked: bool = False  # the reporter pointed at this line ("<--- not handled correctly")
    # What an "Expected" section right after the statement's block says it should show.
    expected: str = ""

    @property
    def is_expression(self) -> bool:
        try:
            ast.parse(self.source, mode="eval")
        except UNPARSABLE:
            return False
        return True


@dataclass(frozen=True)
class Program:
    """Imports (hoisted to module level) and statements of one reproducer."""

    origin: str  # "code" or "session"
    imports: tuple[str, ...]
    steps: tuple[Step, ...]
    # The body line of the code block its last statement came from, or where the session
    # starts (0: not known).
    last_block_line: int = field(default=0, compare=False)

    @property
    def source(self) -> str:
        return "\n".join((*self.imports, *(s.source for s in self.steps)))


def repair(text: str) -> str | None:
    """``text`` as valid Python: dedented, prompt leftovers removed, lines of prose commented out;
    None when it cannot be made to parse."""
    text = textwrap.dedent(text.replace("\r\n", "\n").replace("\t", "    "))[:_MAX_SOURCE_CHARS]
    lines = [_cut_arrow(_PROMPT_LEFTOVER.sub("", line)) for line in text.split("\n")]
    for _ in range(_MAX_REPAIRS):
        source = "\n".join(lines).strip("\n")
        try:
            ast.parse(source)
        except UNREADABLE:
            return None
        except SyntaxError as exc:
            index = (exc.lineno or 0) - 1 + _leading_blank(lines)
            if not 0 <= index < len(lines) or lines[index].lstrip().startswith("#"):
                return None
            line = lines[index]
            cut = _MARKER.sub("", line)
            old_print = _PY2_PRINT.match(line)
            if cut != line:
                lines[index] = cut
            elif old_print:
                # Python 2's print statement, in reports older than Python 3.
                lines[index] = f"{old_print.group(1)}print({old_print.group(2)})"
            else:
                # A line of prose (or output) in the middle of code: keep it, as a comment.
                indent = len(line) - len(line.lstrip())
                lines[index] = " " * indent + "# " + line.lstrip()
            continue
        return source if source.strip() else None
    return None


def _cut_arrow(line: str) -> str:
    """The line without a reporter's arrow marker, unless the arrow sits in a comment."""
    match = _ARROW.search(line)
    if match is None or "#" in line[: match.start()]:
        return line
    return line[: match.start()]


def _leading_blank(lines: list[str]) -> int:
    count = 0
    for line in lines:
        if line.strip():
            break
        count += 1
    return count


def split_statements(source: str) -> tuple[list[str], list[str]]:
    """(import statements, other top-level statements) of valid ``source``; the body of an
    ``if __name__ == "__main__":`` block counts as top level."""
    imports, body = _split(source)
    return imports, [text for text, _ in body]


def _split(source: str) -> tuple[list[str], list[tuple[str, ast.stmt]]]:
    """``split_statements``, each statement other than an import with its node."""
    tree = ast.parse(source)
    imports: list[str] = []
    body: list[tuple[str, ast.stmt]] = []
    lines = source.split("\n")

    def segment(node: ast.stmt) -> str:
        decorators: list[ast.expr] = getattr(node, "decorator_list", [])
        if not decorators:
            # Column-exact, so "import a; a.f()" gives two statements, not one line twice.
            text = ast.get_source_segment(source, node)
            if text is not None:
                first, _, rest = text.partition("\n")
                indent = " " * node.col_offset
                return textwrap.dedent(indent + first + ("\n" + rest if rest else ""))
        start = min([node.lineno - 1] + [d.lineno - 1 for d in decorators])
        end = node.end_lineno or node.lineno
        return textwrap.dedent("\n".join(lines[start:end]))

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                    continue
                imports.append(segment(node))
            elif _is_main_guard(node):
                assert isinstance(node, ast.If)
                visit(node.body)
            else:
                body.append((segment(node), node))

    visit(tree.body)
    return imports, body


def _is_main_guard(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def _program(blocks: list[CodeBlock], issue: IssueReport | None = None) -> Program | None:
    """The statements of ``blocks``; with ``issue``, each carrying what the issue shows it
    printed (a comment next to it, the output block after its block, or an "Actual result"
    section after it), and the last statement of a block the value an "Expected" section right
    after the block states."""
    imports: list[str] = []
    steps: list[Step] = []
    last_line = 0
    sections = _sections(issue) if issue is not None else {}
    for block in blocks:
        fixed = repair(block.text)
        if fixed is None:
            continue
        block_imports, body = _split(fixed)
        imports.extend(block_imports)
        lines = fixed.split("\n")
        shown = block_output(issue, block, [text for text, _ in body]) if issue else {}
        for k, (text, node) in enumerate(body):
            # A comment showing what the line printed makes it a session step in all but form.
            output, wrong = statement_output(lines, node)
            steps.append(Step(text, output or shown.get(k, ""), wrong))
        if body and block.line in sections:
            steps[-1] = _with_section(steps[-1], sections[block.line])
        last_line = block.line if body else last_line
    if not steps:
        return None
    return Program("code", tuple(dict.fromkeys(imports)), tuple(steps), last_line)


def _sections(issue: IssueReport) -> dict[int, list[Expectation]]:
    """By the line of a code block, the expected/actual sections that follow it before any other
    code ("#### Expected result: ... #### Actual result: <class 'Symbol'>")."""
    lines = sorted(b.line for b in code_blocks(issue))
    out: dict[int, list[Expectation]] = {}
    for expectation in issue.expectations:
        at = issue.line_of(expectation.source)
        before = [n for n in lines if at is not None and n < at]
        if before:
            out.setdefault(before[-1], []).append(expectation)
    return out


def _with_section(step: Step, sections: list[Expectation]) -> Step:
    """``step``, the last statement of its block, with what the sections after the block say of
    it: the actual value as its output when the issue shows none, and the expected value."""
    if not step.is_expression or _is_constant(step.source):
        return step
    output, expected = step.output, ""
    for section in sections:
        # "... but instead I get `'F(2, x)'`": the value in the words, not the words.
        actual = stated_value(section.actual or "")
        if not output and actual:
            output = actual
        if not expected and section.expected:
            expected = stated_value(section.expected, output) or section.expected.strip("` \n")
    return Step(step.source, output, step.marked, expected)


def _is_constant(statement: str) -> bool:
    """A literal on its own (a docstring): it shows nothing the code computed."""
    try:
        return isinstance(ast.parse(statement.strip(), mode="eval").body, ast.Constant)
    except UNPARSABLE:
        return False


def code_blocks(issue: IssueReport) -> list[CodeBlock]:
    """The issue's blocks of Python code, without those that only read as Python: a value the
    code before it showed ("returns ```OrderedDict()```"), or the value an expected or actual
    section states (an untagged one-line block under "#### Expected Output")."""
    shown = {
        id(b)
        for prev in issue.code_blocks
        if prev.is_python and not prev.is_session and (b := output_after(issue, prev)) is not None
    }
    stated = {
        "".join(value.split())
        for e in issue.expectations
        for value in (e.expected, e.actual)
        if value
    }
    return [
        block
        for block in issue.code_blocks
        if block.is_python
        and not block.is_session
        and not block.is_traceback
        and (block.language or "") not in ("diff", "patch")
        and id(block) not in shown
        # An IPython output alone ("Out[2]: 'F(x, 2)'" under "Expected behavior") is a value.
        and not all(OUT_PROMPT.match(line) for line in block.text.strip().split("\n"))
        and not (
            block.language is None
            and "\n" not in block.text.strip()
            and "".join(block.text.split()) in stated
        )
    ]


def code_programs(issue: IssueReport) -> list[Program]:
    """Programs from the issue's code blocks, most complete first: every block before the first
    traceback (all blocks when there is none), then the last of those alone."""
    blocks = code_blocks(issue)
    traceback_lines = [b.line for b in issue.code_blocks if b.is_traceback and not b.is_python]
    if traceback_lines:
        before = [b for b in blocks if b.line < traceback_lines[0]]
        blocks = before or blocks
    programs: list[Program] = []
    whole = _program(blocks, issue)
    if whole is not None:
        programs.append(whole)
    if len(blocks) > 1:
        last = _program(blocks[-1:], issue)
        if last is not None and last != whole:
            programs.append(last)
    return programs


def _session_step(source: str, output: str) -> Step | None:
    marked = _MARKER.search(source) is not None
    fixed = repair(_MARKER.sub("", source) if marked else source)
    if fixed is None:
        return None
    return Step(fixed, output.strip("\n"), marked)


def session_programs(issue: IssueReport) -> list[Program]:
    """One program per interactive session, its steps carrying what they printed. A session
    that uses names the issue's earlier code defined ("cm = ..." in a block, then
    ``>>> separability_matrix(m.Pix2Sky_TAN() & cm)`` in the next) starts with that code."""
    programs: list[Program] = []
    earlier: list[Program] = []
    for session in issue.sessions:
        program = _session_program(session)
        if program is None:
            continue
        setup = _earlier_setup(issue, session, program, earlier)
        earlier.append(program)
        if setup is not None:
            program = Program(
                "session",
                tuple(dict.fromkeys((*setup.imports, *program.imports))),
                (*setup.steps, *program.steps),
                program.last_block_line,
            )
        programs.append(program)
    return programs


def _earlier_setup(
    issue: IssueReport, session: Session, program: Program, before: list[Program]
) -> Program | None:
    """The issue's code before ``session`` (its code blocks, then the statements of earlier
    sessions that printed no error), when it binds a name the session uses and does not bind
    itself; None otherwise. Outputs are dropped: only the session's own are shown values."""
    free = set(undefined_names(program.source))
    if not free or not session.line:
        return None
    code = _program([b for b in code_blocks(issue) if b.line < session.line])
    steps = [Step(s.source) for s in code.steps] if code else []
    imports = list(code.imports) if code else []
    for earlier in before:
        imports.extend(earlier.imports)
        steps.extend(Step(s.source) for s in earlier.steps if not _shows_error(s))
    setup = Program("session", tuple(dict.fromkeys(imports)), tuple(steps))
    return setup if free & bound_names(setup.source) else None


def shown_values(program: Program) -> list[int]:
    """Indices of the steps showing a value (an expression, or one printed), last first:
    neither an error nor a version query."""
    return [
        k
        for k in range(len(program.steps) - 1, -1, -1)
        if (step := program.steps[k]).output.strip()
        and step.is_expression
        and not _shows_error(step)
        and not _VERSION_QUERY.search(step.source)
    ]


def _shows_error(step: Step) -> bool:
    """Whether a step's output is a traceback or an exception line."""
    return "Traceback (most recent call last)" in step.output or bool(_EXC_LINE.search(step.output))


def _session_program(session: Session) -> Program | None:
    imports: list[str] = []
    steps: list[Step] = []
    for statement in session.statements:
        step = _session_step(statement.source, statement.output)
        if step is None:
            continue
        step_imports, body = split_statements(step.source)
        imports.extend(step_imports)
        if body:
            steps.append(Step("\n".join(body), step.output, step.marked))
    if not steps:
        return None
    return Program("session", tuple(dict.fromkeys(imports)), tuple(steps), session.line)


def raising_steps(program: Program) -> list[int]:
    """Indices of the session steps whose output is a traceback or an exception line."""
    return [k for k, step in enumerate(program.steps) if _shows_error(step)]


def raising_step(program: Program) -> int | None:
    """Index of the first session step whose output is a traceback or an exception line."""
    found = raising_steps(program)
    return found[0] if found else None


def raised_exception(step: Step) -> str | None:
    """The exception a session step printed ("NotImplementedError: ..."): the last such line."""
    found = _EXC_LINE.findall(step.output) if step.output else []
    name = found[-1].rstrip(":") if found else None
    return name if name and name.isidentifier() else None


def shown_value_step(program: Program) -> int | None:
    """The session step whose printed value the issue is about: the one the reporter marked,
    else the last statement (trailing version queries aside) when it printed a value. Values
    printed earlier are context: the reporter shows the surprise last."""
    for k, step in enumerate(program.steps):
        if step.marked and step.output and step.is_expression:
            return k
    k = len(program.steps) - 1
    while k > 0 and _VERSION_QUERY.search(program.steps[k].source):
        k -= 1
    step = program.steps[k]
    raised = "Traceback" in step.output or _EXC_LINE.search(step.output)
    if step.output and step.is_expression and not raised:
        return k
    return None


_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt)\b(?::|$)", re.M)
