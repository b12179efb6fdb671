"""Every file and folder tcplab writes: checked before the work, whole or not at all,
never over a user's files, and every failure a one-paragraph error naming the path.

The layer has three parts:

- `check_output_dir` / `check_output_file` refuse a target before any work starts:
  one that exists as the wrong kind (a file where a folder goes, a folder or a
  dangling link where a file goes), a folder that is not tcplab's to replace, a
  place that is not writable (a read-only mount, a missing permission), or a file
  system with less free space than the output is estimated to take.
- `write_output_dir` (folders) and `atomic_file` (single files) write into a
  temporary sibling that is renamed into place only once complete, and removed on
  any failure: no partial output that looks complete is ever left.
- `command` wraps a subcommand's `main`: any `OSError` while it reads or writes
  becomes a `OutputError` (a `UserError`: exit 2, no traceback) naming the path,
  the option it came from and the cause ("No space left on device"); Ctrl-C and
  SIGTERM end it with exit 130 or 143 (`tcplab.interrupts`).

Output folders:

`tcplab run --out DIR` (and `Result.save`) follow one contract:

- DIR may be missing, an empty folder, or a folder tcplab wrote before: it holds
  the manifest `.tcplab-output.json` and nothing that the manifest does not list.
  Anything else (a file, a folder with other contents, `.`, `..`) is refused
  before the run starts (`check_output_dir`), and nothing is written.
- The new output is written into a temporary sibling `.<name>.tcplab-tmp-<pid>-<random>`
  (the manifest first, so that the folder is recognisably tcplab's from the
  start) and swapped in with one atomic rename (`renameat2(RENAME_EXCHANGE)`
  when DIR exists), so after a kill at any instant DIR is the previous output
  or the new one, complete, never a mix.
- The previous output, now under the temporary name, is removed; a kill before
  that leaves it behind, and the next save into the same parent removes such
  leftovers: folders with the temporary name whose writer is gone and which hold
  a whole manifest, or nothing but the manifest being written.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from tcplab.errors import UserError


class OutputError(UserError):
    """An output that cannot be written: the message names the path and the cause."""

MANIFEST = ".tcplab-output.json"
_TMP_TAG = ".tcplab-tmp-"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _listing(folder: Path) -> set[str]:
    """Every file and folder under `folder`, as relative POSIX paths (the manifest excluded)."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(folder):
        rel = Path(dirpath).relative_to(folder)
        for name in dirnames + filenames:
            out.add((rel / name).as_posix())
    out.discard(MANIFEST)
    return out


def _manifest(folder: Path) -> dict | None:
    """The manifest of a folder tcplab wrote, or None."""
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("written_by") != "tcplab" or not isinstance(data.get("files"), list):
        return None
    return data


def check_output_dir(out: str | Path, option: str = "--out", need_bytes: int = 0) -> Path:
    """Refuse (UserError) an output folder tcplab may not replace; return it resolved.
    Allowed: a missing path (its parent may be created), an empty folder, or a
    folder holding a previous tcplab output and nothing else — on a writable file
    system with at least `need_bytes` (and `MIN_FREE_BYTES`) free."""
    given = str(out)
    p = Path(out).expanduser().absolute()
    if p.is_symlink() and not p.exists():
        raise OutputError(f"{option} {given}: is a symbolic link to {os.readlink(p)!r}, which does not exist; "
                          "give a folder (tcplab does not create a link's target)")
    try:
        p = p.resolve()
    except (OSError, RuntimeError) as exc:
        raise UserError(f"{option} {given}: cannot resolve the path: {exc}") from None
    if p.parent == p:
        raise UserError(f"{option} {given}: is the file system root; give a folder for the output")
    if p.is_symlink() or (p.exists() and not p.is_dir()):
        raise UserError(f"{option} {given}: exists and is not a folder; give a new or empty folder "
                        "(tcplab never replaces a file it did not write)")
    ancestor = p.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UserError(f"{option} {given}: {ancestor} is a file, not a folder")
    # the new output is made beside the old one: in its parent
    _check_writable(ancestor if not p.exists() else p.parent, option, given, need_bytes)
    if not p.exists():
        return p
    try:
        entries = _listing(p)
    except OSError as exc:
        raise UserError(f"{option} {given}: cannot list the folder: {exc.strerror}") from None
    if not entries and not (p / MANIFEST).exists():
        return p  # empty
    manifest = _manifest(p)
    if manifest is None:
        raise UserError(f"{option} {given}: the folder is not empty and was not written by tcplab "
                        f"(no {MANIFEST}); tcplab never deletes files it did not write: "
                        "give a new or empty folder")
    foreign = sorted(entries - set(manifest["files"]))
    if foreign:
        more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
        raise UserError(f"{option} {given}: holds a previous tcplab output plus files tcplab did not write "
                        f"({foreign[0]}{more}); move them away or give another folder")
    return p


#: free space below which no output is attempted (a summary, a manifest, a table)
MIN_FREE_BYTES = 64 << 10


def _check_writable(folder: Path, option: str, given: str, need_bytes: int = 0) -> None:
    """UserError unless files can be created in the existing folder `folder` and its
    file system has `need_bytes` (at least `MIN_FREE_BYTES`) free."""
    from tcplab.limits import human_bytes

    if not os.access(folder, os.W_OK | os.X_OK):
        try:
            ro = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
        except OSError:
            ro = False
        why = "is on a read-only file system" if ro else "is not writable (permission denied)"
        raise OutputError(f"{option} {given}: {folder} {why}; give a folder tcplab can write to")
    try:
        st = os.statvfs(folder)
    except OSError:
        return
    free = st.f_bavail * st.f_frsize
    need = max(int(need_bytes), MIN_FREE_BYTES)
    if free < need:
        what = (f"the output is estimated at {human_bytes(need_bytes)}" if need_bytes > MIN_FREE_BYTES
                else f"tcplab needs at least {human_bytes(MIN_FREE_BYTES)} to write anything")
        raise OutputError(f"{option} {given}: not enough free space on the file system of {folder}: "
                          f"{human_bytes(free)} free, {what}; free some space or give another folder")


def check_output_file(path: str | Path, option: str = "--out", need_bytes: int = 0) -> Path:
    """Refuse (UserError) a file output before any work: a folder or a dangling
    link at its place, a missing or unwritable folder, too little free space.
    Returns the path to write (a link to an existing file: that file)."""
    given = str(path)
    p = Path(path).expanduser().absolute()
    if p.is_symlink():
        try:
            target = p.resolve(strict=True)
        except (OSError, RuntimeError):
            raise OutputError(f"{option} {given}: is a symbolic link to {os.readlink(p)!r}, which does not "
                              "exist; give a plain path") from None
        p = target
    if p.is_dir():
        raise OutputError(f"{option} {given}: is a folder; give a file name")
    if p.exists() and not p.is_file():
        raise OutputError(f"{option} {given}: exists and is not a regular file")
    parent = p.parent
    if not parent.is_dir():
        what = "is a file, not a folder" if parent.exists() else "does not exist"
        raise OutputError(f"{option} {given}: the folder {str(parent)!r} {what}")
    _check_writable(parent, option, given, need_bytes)
    return p


def check_folder_target(out: str | Path, option: str = "--out", what: str = "a new or empty folder") -> Path:
    """Refuse (OutputError), before any work, a place for a folder a command fills as it
    goes (compare's, reproduce's reports): a file or a dangling link in its place, a file
    on the way to it, a read-only or full file system. `what`: what to give instead."""
    out = Path(out)
    given = str(out)
    if out.is_symlink() and not out.exists():
        raise OutputError(f"{option} {given}: is a symbolic link to {str(out.readlink())!r}, which does not "
                          "exist; give a folder")
    if out.exists() and not out.is_dir():
        raise OutputError(f"{option} {given}: exists and is not a folder; give {what}")
    ancestor = out.absolute()
    while not ancestor.exists() and not ancestor.is_symlink():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(f"{option} {given}: {ancestor} is a file, not a folder")
    _check_writable(ancestor, option, given)
    return out


def _sibling(final: Path, suffix: str = "") -> Path:
    """A temporary sibling of `final` that no other writer picks (pid and random)."""
    return final.with_name(f".{final.name}{_TMP_TAG}{os.getpid()}-{secrets.token_hex(4)}{suffix}")


def _discard(tmp: Path) -> None:
    """Remove a temporary file if it is still there (renamed away on success); a file
    system that refuses leaves it for `clean_leftovers`, never an error of its own."""
    try:
        tmp.unlink(missing_ok=True)
    except OSError:
        pass


@contextmanager
def atomic_file(path: str | Path, mode: str = "w", option: str = "--out", **kwargs):
    """Open a temporary sibling of `path` for writing; on success it is flushed to
    disk and renamed to `path`, on any failure removed (and an OSError becomes an
    `OutputError` naming `path`): `path` is the old file or the whole new one."""
    final = Path(path)
    tmp = _sibling(final)
    try:
        with open(tmp, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except OSError as exc:
        raise output_error(exc, option, str(path)) from None
    finally:
        _discard(tmp)


def atomic_path(path: str | Path, write: Callable[[Path], None], option: str = "--out") -> Path:
    """`write(tmp)` writes a file at a temporary sibling path (matplotlib's savefig,
    pandas' to_csv), renamed to `path` once complete, removed on failure."""
    final = Path(path)
    tmp = _sibling(final, final.suffix)  # the writer may pick its format by the suffix
    try:
        write(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except OSError as exc:
        raise output_error(exc, option, str(path)) from None
    finally:
        _discard(tmp)
    return final


def output_error(exc: OSError, option: str | None, given: str | None, verb: str = "cannot write") -> OutputError:
    """An `OutputError` for an OSError met while writing `given` (the `option`'s value)."""
    cause = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno is None and str(exc):
        cause = str(exc)
    where = exc.filename if exc.filename is not None else None
    head = f"{option} {given}" if option and given else (given or option or "output")
    detail = f"{verb} {where}" if where is not None and str(where) != str(given) else verb
    if exc.errno == errno.ENOSPC or "No space left" in cause:
        hint = "free some space or give another place"
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        hint = "give a place tcplab can write to"
    elif exc.errno in (errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
        hint = "a file stands where a folder goes, or a folder where a file goes: move it away or give another place"
    else:
        hint = ""
    return OutputError(f"{head}: {detail}: {cause}" + (f"; {hint}" if hint else ""))


def command(*options: str, inputs: tuple[str, ...] = (), resumable: bool = False):
    """Decorate a subcommand's `main(args)`: SIGTERM raises (`tcplab.interrupts`);
    Ctrl-C or SIGTERM end it with a one-line message and exit 130 or 143; an
    `OSError` becomes an `OutputError` naming the path, the option among
    `options` (attribute names of `args`, such as "out") it belongs to, and the
    cause. `resumable`: the command stores what it computed (sweep, reproduce), and
    the message says the same command resumes."""
    import functools
    import sys

    from tcplab.interrupts import exit_code, handle_sigterm, signal_name

    def deco(main):
        @functools.wraps(main)
        def wrapped(args):
            with handle_sigterm():
                try:
                    return main(args)
                except KeyboardInterrupt as exc:
                    print(f"tcplab: interrupted ({signal_name(exc)}): stopped before the end; nothing was "
                          "written from partial results"
                          + ("; what was computed is stored: the same command resumes from it" if resumable
                             else ""), file=sys.stderr)
                    return exit_code(exc)
                except UserError:
                    raise
                except OSError as exc:
                    attr, given = _option_of(exc, args, options + inputs)
                    if attr is None:
                        writing = exc.errno in (errno.EROFS, errno.ENOSPC, errno.EDQUOT)
                        option, verb = None, "cannot write" if writing else "cannot read or write"
                    elif attr in inputs:  # a positional argument: named as --help names it
                        option, verb = attr.upper().replace("_", "-"), "cannot read"
                    else:
                        option, verb = "--" + attr.replace("_", "-"), "cannot write"
                    raise output_error(exc, option, given, verb) from None
        return wrapped
    return deco


def _option_of(exc: OSError, args, options) -> tuple[str | None, str | None]:
    """The attribute of `args` (and its value) whose path an OSError concerns: the
    one the failing file lies under, else (no file named) the first given."""
    given = [(o, getattr(args, o, None)) for o in options]
    given = [(o, str(v)) for o, v in given if v]
    target = os.path.abspath(exc.filename) if isinstance(exc.filename, str) else None
    for o, v in given:
        full = os.path.abspath(v)
        # the output itself, a file in it, or in the temporary sibling it is written into first
        tmp = os.path.join(os.path.dirname(full), f".{os.path.basename(full)}{_TMP_TAG}")
        if target and (target == full or target.startswith(full + os.sep) or target.startswith(tmp)):
            return o, v
    if target:
        return None, exc.filename
    if given:
        return given[0]
    return None, None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_leftovers(out: Path) -> int:
    """Remove temporary folders of earlier saves into `out` whose writer is gone:
    named `.<name>.tcplab-tmp-<pid>-<hex>` and holding tcplab's manifest (or
    nothing but the manifest being written: killed at its first write).
    Returns how many were removed."""
    removed = 0
    prefix = f".{out.name}{_TMP_TAG}"
    if not out.parent.is_dir():
        return 0
    for cand in out.parent.iterdir():
        if not cand.name.startswith(prefix) or cand.is_symlink() or not cand.is_dir():
            continue
        pid_text = cand.name[len(prefix):].split("-", 1)[0]
        if not pid_text.isdigit() or (int(pid_text) != os.getpid() and _pid_alive(int(pid_text))):
            continue
        try:
            entries = {e.name for e in cand.iterdir()}
        except OSError:
            continue
        # ours: the manifest is whole, or nothing but the manifest being written is there
        if _manifest(cand) is None and not entries <= {MANIFEST, MANIFEST + ".part"}:
            continue
        shutil.rmtree(cand, ignore_errors=True)
        removed += 1
    return removed


def write_output_dir(out: str | Path, write: Callable[[Path], None], option: str = "--out") -> Path:
    """Write an output folder atomically: `write(tmp)` fills a temporary sibling,
    which then replaces `out` (only if `out` is missing, empty or a previous
    tcplab output: `check_output_dir`). Returns the output path. An OSError on the
    way (a full disk) removes the temporary folder and is raised as it came (the
    CLI's `command` turns it into an error naming the option and the path)."""
    final = check_output_dir(out, option)
    final.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(final)
    tmp = final.parent / f".{final.name}{_TMP_TAG}{os.getpid()}-{secrets.token_hex(4)}"
    tmp.mkdir()
    try:
        manifest = {"written_by": "tcplab", "files": []}
        (tmp / MANIFEST).write_text(json.dumps(manifest) + "\n")  # recognisably ours from here on
        write(tmp)
        manifest["files"] = sorted(_listing(tmp))
        (tmp / (MANIFEST + ".part")).write_text(json.dumps(manifest, indent=1) + "\n")
        os.replace(tmp / (MANIFEST + ".part"), tmp / MANIFEST)  # the manifest is never seen half-written
        _fsync_tree(tmp)
        check_output_dir(final, option)  # still ours to replace (nothing added meanwhile)
        if final.exists():
            if not _exchange(tmp, final):
                # no atomic exchange on this file system: an empty folder or our previous
                # output is moved aside first (a kill in between leaves it under tmp's name)
                old = final.parent / f".{final.name}{_TMP_TAG}{os.getpid()}-{secrets.token_hex(4)}"
                os.rename(final, old)
                os.rename(tmp, final)
                tmp = old
        else:
            os.rename(tmp, final)
            tmp = None
        _fsync_dir(final.parent)
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    if tmp is not None:  # the previous output, now under the temporary name
        if _manifest(tmp) is not None or not any(tmp.iterdir()):
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(folder: Path) -> None:
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            with open(os.path.join(dirpath, name), "rb") as fh:
                os.fsync(fh.fileno())
        _fsync_dir(Path(dirpath))


def record_written(path: str | Path) -> None:
    """Add a file tcplab wrote inside an output folder (a plot into a run's folder)
    to that folder's manifest, so that a later `--out` into the folder may replace it."""
    path = Path(path).absolute()
    folder = path.parent
    manifest = _manifest(folder)
    if manifest is None:
        return
    name = path.relative_to(folder).as_posix()
    if name in manifest["files"]:
        return
    manifest["files"] = sorted(manifest["files"] + [name])
    part = folder / (MANIFEST + ".part")
    part.write_text(json.dumps(manifest, indent=1) + "\n")
    os.replace(part, folder / MANIFEST)
