"""Every fenced example in README.md and docs/*.md runs, and prints what the doc shows.

Blocks, by their info string:

- ```sh / ```bash / ```console: each command (`\\` continuations and quoted strings over
  several lines joined; `# comments` dropped by the shell) runs with the repository as
  its working directory. A leading `arrowfeat` (or `cargo run -p arrowfeat-cli --`) is
  the debug binary (`ARROWFEAT_BIN` overrides), a leading `python` this interpreter.
  A trailing `# exit N` comment is the exit code the command must return (0 otherwise).
  Install and setup commands are not run: `SKIPPED_COMMANDS` lists them by their first
  words, and a command in neither list fails, so a new kind of command is noticed.
- ```python: executed in a fresh namespace; `spark` is the session of the `spark`
  fixture (python/tests/conftest.py) when the block names it.
- ```sql: run by `arrowfeat sql`. Tables come from `<!-- doc-example: tables NAME=PATH
  ... -->` in the document (for the SQL blocks after it), and the document must show
  the reader the same `--table NAME=PATH` flags.
- A ```text block right after a block that runs (only blank lines between) is its
  output: stdout (then stderr) must equal it, trailing whitespace aside.
- docs/functions.md is generated (`make docs`): its ```sql blocks are signatures, and its
  ```text blocks that start with `> ` are SQL examples: the query, then its output.
- ```rust is not compiled here (doctests do that); like any block that must not run, it
  is marked with `<!-- doc-example: skip REASON -->` right above it. A skip without a
  reason, an unknown marker or an unknown info string fails.
- yaml, toml, json, text and mermaid blocks are data, not examples.

Blocks run in a temporary directory that holds a symbolic link to every top-level entry
of the repository: paths such as `examples/data/events.parquet` read the bundled data,
and files the examples write (`-o training.parquet`) stay out of the checkout.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("ARROWFEAT_BIN", REPO / "target" / "debug" / "arrowfeat"))

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# Commands that are not run, keyed by their first words, with the reason.
SKIPPED_COMMANDS: dict[str, str] = {
    "make": "a developer target of this repository (CI runs `make test` itself)",
    "pip install": "installs a package",
    "cargo install": "installs the binary",
    "cargo add": "edits the reader's Cargo.toml",
    "maturin": "builds the wheel",
    "git clone": "clones a repository",
    "git add": "stages the reader's files",
}

# Executed blocks by language.
COMMAND_LANGUAGES = {"sh", "bash", "console"}
RUN_LANGUAGES = COMMAND_LANGUAGES | {"python", "sql"}
# Not examples: data and pictures.
DATA_LANGUAGES = {"text", "yaml", "toml", "json", "mermaid"}
# Marked with a skip (they are compiled as doctests, not here).
MARKED_LANGUAGES = {"rust"}

# Generated documents (`make docs`): their ```sql blocks are signatures and their
# ```text blocks starting with `> ` are SQL examples, run with the tables given here by
# section (the generated text states them).
SQL_EXAMPLE_DOCUMENTS: dict[str, dict[str, list[str]]] = {
    "docs/functions.md": {
        "## `point_in_time`": ["labels=examples/data/labels.csv", "events=examples/data/events.parquet"],
    },
}

# Documents whose blocks are not run, with the reason.
SKIPPED_DOCUMENTS: dict[str, str] = {
    "docs/benchmarks.md": "benchmarks: minutes to hours on a release build (`make bench`), not a CI example",
}

# Blocks another test already runs, by (document, heading of their section).
TESTED_ELSEWHERE: dict[tuple[str, str], str] = {
    ("docs/feast.md", "### As the offline store of a feature repo"): (
        "python/tests/test_feast_offline_store.py::test_the_training_set_examples_in_the_docs_run"
    ),
    ("docs/feast.md", "### As a function"): (
        "python/tests/test_feast_offline_store.py::test_the_training_set_examples_in_the_docs_run"
    ),
}

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*doc-example:\s*(?P<kind>[a-z-]+)\s*(?P<argument>.*?)\s*-->\s*$")
HEADING = re.compile(r"^#{1,6} \S")
EXIT_CODE = re.compile(r"#\s*exit\s+(\d+)\s*$")


@dataclass
class Block:
    document: str  # relative to the repository
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    heading: str = ""
    skip: str | None = None  # the reason, when marked `skip`
    output: str | None = None  # the ```text block shown after it
    tables: list[str] = field(default_factory=list)
    sql_example: bool = False  # a generated `> query` example with its output
    signature: bool = False  # a generated function signature: not an example
    problems: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.document}:{self.line}"


def parse(path: Path, root: Path = REPO) -> list[Block]:
    """The fenced blocks of a Markdown file, with their markers and shown output."""
    document = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
    lines = path.read_text().splitlines()
    blocks: list[Block] = []
    heading = ""
    tables: list[str] = []
    markers: list[tuple[int, str, str]] = []
    previous_end: int | None = None  # index after the previous block's closing fence
    i = 0
    while i < len(lines):
        line = lines[i]
        if HEADING.match(line):
            heading = line.strip()
        marker = MARKER.match(line)
        if marker:
            kind, argument = marker.group("kind"), marker.group("argument")
            if kind == "tables":
                tables = argument.split()
            else:
                markers.append((i + 1, kind, argument))
            i += 1
            continue
        opening = FENCE.match(line)
        if not opening:
            if line.strip():
                markers = []  # a marker belongs to the block right below it
            i += 1
            continue
        indent, fence = opening.group("indent"), opening.group("fence")
        info = opening.group("info").split()
        language = info[0] if info else ""
        end = i + 1
        while end < len(lines) and not re.match(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[end]):
            end += 1
        body = [text[len(indent) :] if text.startswith(indent) else text.lstrip() for text in lines[i + 1 : end]]
        block = Block(document, i + 1, language, "\n".join(body) + "\n", heading, tables=list(tables))
        if info[1:]:
            block.problems.append(
                f"unknown info string attributes {info[1:]}: mark a block that must not run with "
                "`<!-- doc-example: skip REASON -->` above it"
            )
        for marker_line, kind, argument in markers:
            if kind != "skip":
                block.problems.append(f"line {marker_line}: unknown marker `doc-example: {kind}`")
            elif not argument:
                block.problems.append(f"line {marker_line}: `doc-example: skip` needs a reason")
            else:
                block.skip = argument
        markers = []
        if document in SKIPPED_DOCUMENTS:
            block.skip = SKIPPED_DOCUMENTS[document]
        if language not in RUN_LANGUAGES | DATA_LANGUAGES | MARKED_LANGUAGES:
            block.problems.append(f"unknown language {language!r} of a fenced block")
        if language in MARKED_LANGUAGES and block.skip is None:
            block.problems.append(f"{language} blocks are not run here: mark it `<!-- doc-example: skip REASON -->`")
        if document in SQL_EXAMPLE_DOCUMENTS:
            if language == "sql":
                block.signature = True
            elif language == "text" and block.code.startswith("> "):
                block.sql_example = True
                block.tables = SQL_EXAMPLE_DOCUMENTS[document].get(heading, [])
        # A text block right after a block (blank lines between only) is its output.
        follows = previous_end is not None and all(not text.strip() for text in lines[previous_end:i])
        if language == "text" and not block.sql_example and follows and blocks and blocks[-1].language in RUN_LANGUAGES:
            blocks[-1].output = block.code
        else:
            blocks.append(block)
        previous_end = end + 1
        i = end + 1
    return blocks


def normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def commands(code: str, console: bool) -> list[str]:
    """Shell commands of a block: continuations and multi-line quoted strings joined."""
    found: list[str] = []
    pending = ""
    separator = "\n"
    for raw in code.splitlines():
        if not pending and console:
            if not raw.startswith("$ "):
                continue  # output shown in a console block
            raw = raw[2:]
        pending = f"{pending}{separator}{raw}" if pending else raw
        separator = "\n"
        if pending.rstrip().endswith("\\"):
            pending = pending.rstrip()[:-1].rstrip()
            separator = " "
            continue
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # a quoted string continues on the next line
            continue
        if words:
            found.append(pending)
        pending = ""
    assert not pending, f"unterminated command: {pending!r}"
    return found


def skipped_command(command: str) -> str | None:
    words = shlex.split(command, comments=True)
    for prefix in SKIPPED_COMMANDS:
        if words[: len(prefix.split())] == prefix.split():
            return prefix
    return None


def command_line(command: str) -> str:
    """The command as run: the leading program replaced, or an AssertionError."""
    stripped = command.lstrip()
    cargo = re.match(r"cargo run\b[^\n]*?-p arrowfeat-cli(?: [^\n]*?)? --(?=\s)", stripped)
    if cargo:
        return shlex.quote(str(BINARY)) + stripped[cargo.end() :]
    first = stripped.split(maxsplit=1)[0]
    if first == "arrowfeat":
        return shlex.quote(str(BINARY)) + stripped[len(first) :]
    if first == "python" and re.match(r"python -m arrowfeat\b", stripped):
        return shlex.quote(sys.executable) + stripped[len(first) :]
    raise AssertionError(
        f"command of an unknown kind: {command!r}; run it here (see `command_line`), add its first "
        "words to SKIPPED_COMMANDS, or mark the block `<!-- doc-example: skip REASON -->`"
    )


def workdir(tmp_path: Path) -> Path:
    """A directory that reads as the repository's root but keeps what examples write."""
    work = tmp_path / "repo"
    work.mkdir(parents=True)
    for entry in REPO.iterdir():
        if entry.name != ".git":
            (work / entry.name).symlink_to(entry)
    return work


def run_commands(block: Block, cwd: Path) -> str:
    out = []
    env = dict(os.environ, NO_COLOR="1")
    for command in commands(block.code, console=block.language == "console"):
        if skipped_command(command):
            continue
        line = command_line(command)
        expected = EXIT_CODE.search(command.splitlines()[-1])
        done = subprocess.run(
            ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        code = int(expected.group(1)) if expected else 0
        assert done.returncode == code, (
            f"{block.id}: `{command}` exited with {done.returncode}, not {code}:\n{done.stdout[-2000:]}{done.stderr[-4000:]}"
        )
        out.append(done.stdout + done.stderr)
    return "".join(out)


def run_sql(block: Block, query: str, cwd: Path) -> str:
    text = (REPO / block.document).read_text() if (REPO / block.document).exists() else ""
    flags: list[str] = []
    for table in block.tables:
        assert f"--table {table}" in text, (
            f"{block.id}: the SQL reads `--table {table}`, which {block.document} does not show its reader"
        )
        flags += ["--table", table]
    done = subprocess.run(
        [str(BINARY), "sql", query, *flags],
        cwd=cwd,
        env=dict(os.environ, NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{block.id}: arrowfeat sql exited with {done.returncode}:\n{done.stderr[-4000:]}"
    return done.stdout + done.stderr


def run_python(block: Block, cwd: Path, spark: Any) -> str:
    namespace: dict[str, Any] = {"__name__": "__doc_example__"}
    if spark is not None:
        namespace["spark"] = spark
    # Leading newlines make a traceback's line numbers those of the document.
    code = compile("\n" * block.line + block.code, block.document, "exec")
    printed = io.StringIO()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(printed):
            exec(code, namespace)
    finally:
        os.chdir(previous)
    return printed.getvalue()


def uses_spark(block: Block) -> bool:
    return block.language == "python" and re.search(r"\bspark\b|\bpyspark\b", block.code) is not None


def run_block(block: Block, tmp_path: Path, spark: Any = None) -> None:
    """Runs one block; an AssertionError (or the example's own exception) if it fails."""
    assert not block.problems, f"{block.id}: " + "; ".join(block.problems)
    cwd = workdir(tmp_path)
    if block.sql_example:
        query, _, shown = block.code.partition("\n")
        actual = run_sql(block, query.removeprefix("> "), cwd)
        block = Block(block.document, block.line, "sql", query, output=shown)
    elif block.language in COMMAND_LANGUAGES:
        actual = run_commands(block, cwd)
    elif block.language == "sql":
        actual = run_sql(block, block.code, cwd)
    elif block.language == "python":
        actual = run_python(block, cwd, spark)
    elif block.language == "json":
        json.loads(block.code)
        return
    else:
        return
    if block.output is not None:
        assert normalised(actual) == normalised(block.output), (
            f"{block.id}: the output differs from the one shown\n--- shown\n{block.output}\n--- actual\n{actual}"
        )


ALL_BLOCKS = [block for path in DOCUMENTS for block in parse(path)]
EXAMPLES = [
    b
    for b in ALL_BLOCKS
    if (b.language in RUN_LANGUAGES | MARKED_LANGUAGES | {"json"} and not b.signature) or b.sql_example
]


def elsewhere_test(block: Block) -> str | None:
    return TESTED_ELSEWHERE.get((block.document, block.heading)) if block.language == "python" else None


@pytest.mark.parametrize("block", EXAMPLES, ids=[b.id for b in EXAMPLES])
def test_doc_example(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    assert not block.problems, f"{block.id}: " + "; ".join(block.problems)
    if block.skip is not None:
        pytest.skip(f"{block.id}: {block.skip}")
    elsewhere = elsewhere_test(block)
    if elsewhere:
        pytest.skip(f"{block.id}: run by {elsewhere}")
    spark = None
    if uses_spark(block):
        pytest.importorskip("pyspark")
        spark = request.getfixturevalue("spark")
    run_block(block, tmp_path, spark)


def test_every_block_is_well_formed() -> None:
    """Unknown languages, attributes and markers, and skips without a reason, fail."""
    problems = [f"{b.id}: {p}" for b in ALL_BLOCKS for p in b.problems]
    assert not problems, "\n".join(problems)


def test_the_skipped_commands_are_the_listed_ones() -> None:
    """Every command that is not run matches SKIPPED_COMMANDS; any other is one the runner runs."""
    skipped: list[str] = []
    for block in EXAMPLES:
        if block.language not in COMMAND_LANGUAGES or block.skip is not None:
            continue
        for command in commands(block.code, console=block.language == "console"):
            prefix = skipped_command(command)
            if prefix:
                assert command.split()[: len(prefix.split())] == prefix.split(), command
                skipped.append(f"{block.id}: {command.splitlines()[0]}  ({SKIPPED_COMMANDS[prefix]})")
            else:
                command_line(command)  # raises for a command of an unknown kind
    print("commands not run:", *skipped, sep="\n  ")


def test_blocks_tested_elsewhere_exist() -> None:
    """Each entry of TESTED_ELSEWHERE names one block and a test that exists."""
    for (document, heading), test in TESTED_ELSEWHERE.items():
        matched = [b for b in ALL_BLOCKS if b.document == document and b.heading == heading and elsewhere_test(b)]
        assert len(matched) == 1, f"{document} {heading!r}: {len(matched)} python blocks"
        path, _, name = test.partition("::")
        assert f"def {name}(" in (REPO / path).read_text(), test


# ------------------------------------------------------------- the runner can fail


def broken_document(tmp_path: Path, body: str) -> list[Block]:
    path = tmp_path / "broken.md"
    path.write_text(body)
    return parse(path, root=tmp_path)


@pytest.mark.parametrize(
    "body",
    [
        # output that differs from the one shown
        '```sh\narrowfeat sql "SELECT 1 AS x"\n```\n\n```text\n+---+\n| x |\n+---+\n| 2 |\n+---+\n```\n',
        # a command that fails
        "```sh\narrowfeat sql \"SELECT * FROM 'no-such-file.parquet'\"\n```\n",
        # an exit code other than the one shown
        '```sh\narrowfeat sql "SELECT 1"  # exit 2\n```\n',
        # a command of a kind the runner does not know
        "```sh\nrm -rf build\n```\n",
        # SQL that does not run
        "```sql\nSELECT no_such_function(1);\n```\n",
        # Python that raises
        "```python\nimport arrowfeat as af\n\naf.no_such_function()\n```\n",
        # Python that prints something else
        '```python\nprint("a")\n```\n\n```text\nb\n```\n',
        # a skip without a reason, an unknown attribute, an unknown language
        "<!-- doc-example: skip -->\n```python\nprint(1)\n```\n",
        "```python no-run\nprint(1)\n```\n",
        "```ruby\nputs 1\n```\n",
        "```rust\nfn main() {}\n```\n",
    ],
    ids=[
        "wrong-output",
        "failing-command",
        "wrong-exit-code",
        "unknown-command",
        "bad-sql",
        "python-raises",
        "python-prints-else",
        "skip-without-reason",
        "unknown-attribute",
        "unknown-language",
        "unmarked-rust",
    ],
)
def test_a_broken_example_fails(tmp_path: Path, body: str) -> None:
    blocks = broken_document(tmp_path, body)
    assert blocks
    with pytest.raises((AssertionError, AttributeError)) as failure:
        for block in blocks:
            if block.skip is None or block.problems:
                run_block(block, tmp_path / f"run{block.line}")
    assert not isinstance(failure.value, pytest.skip.Exception)


def test_a_correct_example_passes(tmp_path: Path) -> None:
    """The other side of the tests above: the same runner accepts what is right."""
    blocks = broken_document(
        tmp_path,
        "<!-- doc-example: skip a fragment -->\n```python\nundefined_name\n```\n\n"
        '```sh\narrowfeat sql "SELECT 1 AS x"  # prints a table\narrowfeat sql "SELECT * FROM \'nope.parquet\'"  # exit 2\n```\n\n'
        "```text\n+---+\n| x |\n+---+\n| 1 |\n+---+\narrowfeat: error: FROM 'nope.parquet': no such file or directory\n```\n\n"
        '```python\nprint("a")\n```\n\n```text\na\n```\n',
    )
    assert [b.skip for b in blocks] == ["a fragment", None, None]
    for block in blocks[1:]:
        run_block(block, tmp_path / f"run{block.line}")
