"""Every `tcplab` command the documentation shows runs, as the text says it does.

The commands are read from the ```sh/```bash blocks of README.md and docs/*.md, from
inline code (`tcplab run scenarios/… --set …`: a whole command, no placeholder) and
from the comments of the example scenarios (`# tcplab predict …`). Each is run with
bash, as a user would type it, in one temporary working directory where `scenarios/`
and `sweeps/` are the repository's (nothing lands in the repository), after the
commands that come before it on the same page (a page reads top to bottom: a
`tcplab plot runs/c` needs the `tcplab run … --out runs/c` above it). A command
passes when it exits as its text says — 0, or 2 when its comment says "exit 2" or
"refused", with what the comment names in the output — and prints no traceback.

Each page has its own working directory.
tests/doc_commands.toml lists the exceptions, each with its reason: commands that
take minutes (`slow`), need the linux engine (`linux`: root, TUN, namespaces; run
as root, without `sudo`), start a server (`serve`: the URL it prints answers, then
Ctrl-C stops it), or are not tcplab's to run here (`skip`: set-up and CI itself,
which are what runs these tests). A command found in the docs and not in the
table must run in the default tier: a new documented command cannot escape.

    pytest -q tests/test_doc_commands.py --durations=20        # the default tier
    pytest -q -m slow tests/test_doc_commands.py               # the minutes-long ones
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import tomllib
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TABLE = Path(__file__).with_name("doc_commands.toml")
VENV_BIN = Path(sys.executable).parent
TRACEBACK = "Traceback (most recent call last)"
DEFAULT_TIMEOUT = 300


def doc_pages() -> list[Path]:
    # docs/index.md is README.md for the site (python -m tcplab.docs; tests/test_docs.py
    # checks the copy): its commands are the README's, run once
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs").glob("*/*.md"))]
    return [p for p in pages if p != ROOT / "docs" / "index.md"]


@dataclass
class Step:
    page: str  # relative path
    line: int
    text: str  # the line as written (with its comment)
    cmd: str  # what bash runs (the comment dropped)
    comment: str = ""
    is_tcplab: bool = True
    setup_only: bool = False  # a shell step (a heredoc) the page's later commands need

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


_TCPLAB = re.compile(r"(^|[\s;&|(])(sudo\s+)?(\S*/)?tcplab(\s|$)|python3?\s+-m\s+tcplab|python3?\s+-c\s+.*tcplab")
_PLACEHOLDER = re.compile(r"…|\.\.\.|\b[A-Z][A-Z_]{1,}\b(?!\.toml)|\bN\b|\bP\b|FILE\.toml")


def _split_comment(line: str) -> tuple[str, str]:
    """The command and its trailing `# comment` (a # inside quotes is the command's)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def _block_steps(page: str, lines: list[str], first: int) -> list[Step]:
    steps: list[Step] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        lineno = first + i
        i += 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", raw)
        if heredoc:  # a file the following commands read: a shell step, body included
            end = heredoc.group(1)
            body = [raw]
            while i < len(lines):
                body.append(lines[i])
                i += 1
                if lines[i - 1].strip() == end:
                    break
            steps.append(Step(page, lineno, raw, "\n".join(body), is_tcplab=False, setup_only=True))
            continue
        while raw.rstrip().endswith("\\") and i < len(lines):  # a continued line
            raw = raw.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
        cmd, comment = _split_comment(raw)
        steps.append(Step(page, lineno, raw.strip(), cmd.strip(), comment, is_tcplab=bool(_TCPLAB.search(cmd))))
    return steps


def _inline_commands(page: str, text: str) -> list[Step]:
    """Whole commands quoted inline: `tcplab SUB ARG…` with at least one argument and
    no placeholder (FILE.toml, DIR, N, …); a bare `tcplab run` names the command."""
    out = []
    prose = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    for n, line in enumerate(prose.splitlines(), 1):
        for m in re.finditer(r"`(tcplab [^`]+)`", line):
            cmd = m.group(1).strip()
            words = cmd.split()
            if len(words) < 3 or _PLACEHOLDER.search(cmd) or words[1].startswith("-") or words[2].startswith("-"):
                continue  # a mention: `tcplab reproduce --engine linux`, `tcplab fluid --trace/--histogram`
            if words[1:] == ["predict", "scenario"]:
                continue  # the subcommand named, without its file
            out.append(Step(page, n, cmd, cmd))
    return out


def _scenario_comment_commands() -> list[Step]:
    out = []
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        lines = path.read_text().splitlines()
        for n, line in enumerate(lines, 1):
            m = re.match(r"#\s*(tcplab\s.*)$", line.strip())
            if m:
                text, k = m.group(1), n
                while text.rstrip().endswith("\\") and k < len(lines):  # a continued line
                    text = text.rstrip()[:-1] + " " + lines[k].lstrip("# ").strip()
                    k += 1
                cmd, comment = _split_comment(text)
                out.append(Step(f"scenarios/{path.name}", n, text, cmd, comment))
    return out


def page_steps() -> dict[str, list[Step]]:
    """Every page's steps in reading order: fenced sh/bash blocks, then inline commands."""
    pages: dict[str, list[Step]] = {}
    for path in doc_pages():
        page = str(path.relative_to(ROOT))
        text = path.read_text()
        steps: list[Step] = []
        for m in re.finditer(r"^```(\w*)[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
            if m.group(1) not in ("sh", "bash", "shell", "console"):
                continue
            first = text[:m.start(2)].count("\n") + 1
            steps += _block_steps(page, m.group(2).splitlines(), first)
        steps += _inline_commands(page, text)
        steps.sort(key=lambda s: s.line)
        pages[page] = steps
    for st in _scenario_comment_commands():
        pages.setdefault(st.page, []).append(st)
    return pages


PAGES = page_steps()
COMMANDS = [s for steps in PAGES.values() for s in steps if s.is_tcplab]


def load_table() -> dict[str, dict]:
    table = tomllib.loads(TABLE.read_text())
    out = {}
    for entry in table["command"]:
        assert entry["cmd"] not in out, f"doc_commands.toml lists {entry['cmd']!r} twice"
        assert entry.get("reason"), f"doc_commands.toml: {entry['cmd']!r} has no reason"
        out[entry["cmd"]] = entry
    return out


TABLE_ENTRIES = load_table()


def expected_exit(step: Step) -> tuple[int, list[str]]:
    """2 and the named fragments when the text says the command is refused, else 0."""
    entry = TABLE_ENTRIES.get(step.cmd, {})
    if "exit" in entry:
        return entry["exit"], list(entry.get("expect", []))
    c = step.comment
    m = re.search(r"(exit 2|refused)\s*:?\s*(.*)", c)
    if not m:
        return 0, list(entry.get("expect", []))
    said = re.sub(r"(…|\.\.\.)\s+\(.*\)\s*$", "", m.group(2))  # "… (an aside)" is the doc's, not the output's
    named = [p.strip(" ;,") for p in re.split(r"…|\.\.\.", said) if p.strip(" ;,")]
    return 2, list(entry.get("expect", named))


def _tier(step: Step) -> str:
    return TABLE_ENTRIES.get(step.cmd, {}).get("tier", "default")


def step_line(step: Step) -> str:
    """The line as bash runs it here: CI is root (no sudo), the virtualenv is the test's."""
    cmd = step.cmd
    cmd = re.sub(r"(^|(?<=[\s;&|(]))sudo\s+", "", cmd)  # CI runs as root
    return re.sub(r"(^|(?<=[\s;&|(=]))\.venv/bin/", str(VENV_BIN) + "/", cmd)


def _bash_command(step: Step) -> str:
    cmd = step_line(step)
    # a `cmd &` on the line finishes before the step does; the status is the line's own
    return cmd + "\nrc=$?; wait; exit $rc"


@pytest.fixture(scope="session")
def workdirs(tmp_path_factory):
    return tmp_path_factory.mktemp("doc-commands")


@pytest.fixture
def workdir(workdirs, step):
    """The page's own working directory (a page's runs/c is not another page's)."""
    d = workdirs / re.sub(r"[^\w.-]+", "_", step.page)
    if not d.exists():
        d.mkdir()
        for name in ("scenarios", "sweeps", "bench"):
            (d / name).symlink_to((ROOT / name).resolve())
    return d


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["BROWSER"] = "true"  # `tcplab lab` opens "the browser": here a command that does nothing
    env["COLUMNS"] = "200"
    env.pop("VIRTUAL_ENV", None)
    return env


@dataclass
class Outcome:
    rc: int
    out: str
    seconds: float
    notes: list = field(default_factory=list)


_DONE: dict[str, Outcome] = {}


def _run(step: Step, cwd: Path) -> Outcome:
    entry = TABLE_ENTRIES.get(step.cmd, {})
    if entry.get("setup"):
        subprocess.run(["bash", "-c", entry["setup"]], cwd=cwd, check=True, env=_env())
    t0 = time.monotonic()
    try:
        if entry.get("serve"):
            return _serve(step, cwd)
        if entry.get("interrupt_after"):
            return _interrupt(step, cwd, entry["interrupt_after"])
        p = subprocess.run(["bash", "-c", _bash_command(step)], cwd=cwd, env=_env(), capture_output=True,
                           text=True, timeout=entry.get("timeout", DEFAULT_TIMEOUT), stdin=subprocess.DEVNULL)
        return Outcome(p.returncode, p.stdout + p.stderr, time.monotonic() - t0)
    finally:
        if entry.get("teardown"):
            subprocess.run(["bash", "-c", entry["teardown"]], cwd=cwd, env=_env())


def _serve(step: Step, cwd: Path) -> Outcome:
    """A server (`tcplab lab`): the URL it prints answers 200, then Ctrl-C stops it cleanly."""
    t0 = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", "exec " + step_line(step)], cwd=cwd,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL)
    lines, url = [], None
    try:
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            # the URL to open: the one with the access token, when the server prints one
            m = re.search(r"http://127\.0\.0\.1:\d+/\S*token=\S+", line)
            url = m.group(0) if m else None
        assert url, "the server printed no URL:\n" + "".join(lines)
        # a browser keeps the cookie the URL's token is exchanged for
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=30) as r:
            status = r.status
            page = r.read().decode(errors="replace")
        assert status == 200 and "<html" in page.lower(), (status, page[:300])
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            rest, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, _ = proc.communicate()
    return Outcome(proc.returncode, "".join(lines) + rest, time.monotonic() - t0, notes=[url])


def _interrupt(step: Step, cwd: Path, seconds: float) -> Outcome:
    """A run the text says goes on until Ctrl-C: still running after `seconds`, then Ctrl-C
    (SIGINT to its process group, as a terminal sends it) stops it."""
    t0 = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", "exec " + step_line(step)], cwd=cwd,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=seconds)
        return Outcome(proc.returncode, out + "\n(it ended before Ctrl-C)", time.monotonic() - t0)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            return Outcome(-9, out + "\n(Ctrl-C did not stop it within 30 s)", time.monotonic() - t0)
    return Outcome(proc.returncode, out, time.monotonic() - t0)


def _ensure_before(step: Step, cwd: Path) -> None:
    """Run what the page shows before this command (once per session), in order."""
    for prior in PAGES[step.page]:
        if prior is step:
            return
        if prior.id in _DONE or not (prior.is_tcplab or prior.setup_only):
            continue
        if prior.is_tcplab and _tier(prior) not in ("default",):
            continue  # a slow/linux/skip step is not a prerequisite of the default tier
        _DONE[prior.id] = _run(prior, cwd)


def _params():
    out = []
    for step in COMMANDS:
        entry = TABLE_ENTRIES.get(step.cmd, {})
        tier = entry.get("tier", "default")
        marks = []
        if tier == "slow":
            marks.append(pytest.mark.slow)
        elif tier == "linux":
            marks.append(pytest.mark.slow)
            from tcplab.backends.linux import available

            why = available()
            if why:
                marks.append(pytest.mark.skip(reason=f"needs the linux engine: {why}"))
        elif tier == "skip":
            marks.append(pytest.mark.skip(reason=entry["reason"]))
        if entry.get("root") and os.geteuid() != 0:
            marks.append(pytest.mark.skip(reason="needs root: " + entry["reason"]))
        if entry.get("requires"):
            import importlib.util

            if importlib.util.find_spec(entry["requires"]) is None:
                marks.append(pytest.mark.skip(reason=f"needs the Python package {entry['requires']}"))
        if re.search(r"--engine\s+ns2|--engines\s+\S*ns2|export-ns2", step.cmd) and "export-ns2" not in step.cmd:
            marks.append(pytest.mark.ns2)
        out.append(pytest.param(step, id=f"{step.id} {step.cmd[:70]}", marks=marks))
    return out


@pytest.mark.parametrize("step", _params())
def test_documented_command_runs_as_the_text_says(step: Step, workdir: Path):
    if "sudo" in step.cmd.split() and os.geteuid() != 0:
        pytest.skip("the text runs it with sudo: needs root")
    _ensure_before(step, workdir)
    outcome = _DONE.get(step.id) or _run(step, workdir)
    _DONE[step.id] = outcome
    want, named = expected_exit(step)
    where = f"{step.id}: {step.text}\n--- output (last 3000 characters) ---\n{outcome.out[-3000:]}"
    assert TRACEBACK not in outcome.out, f"a traceback:\n{where}"
    if want == 0:
        assert outcome.rc == 0, f"exit {outcome.rc}, the text expects it to run:\n{where}"
    else:
        assert outcome.rc == want, f"exit {outcome.rc}, the text says {want}:\n{where}"
        flat = " ".join(outcome.out.split())
        for fragment in named:
            assert " ".join(fragment.split()) in flat, f"the text says the output names {fragment!r}:\n{where}"
    for pattern in TABLE_ENTRIES.get(step.cmd, {}).get("output", []):
        assert re.search(pattern, outcome.out), f"the output does not show {pattern!r}:\n{where}"


def test_the_extractor_finds_the_documented_commands():
    # a floor, not a count to keep in step: the docs had ~110 tcplab commands when this was written
    assert len(COMMANDS) >= 100, len(COMMANDS)
    pages = {s.page for s in COMMANDS}
    assert {"README.md", "docs/engines.md", "docs/sweeps.md", "docs/hostile-input.md"} <= pages
    assert any("predict scenario scenarios/dctcp.toml" in s.cmd for s in COMMANDS)


def test_every_table_entry_is_a_documented_command():
    # an entry whose command left the docs would excuse nothing and hide a typo
    found = {s.cmd for s in COMMANDS}
    stale = sorted(set(TABLE_ENTRIES) - found)
    assert not stale, f"tests/doc_commands.toml lists commands the docs no longer show: {stale}"
