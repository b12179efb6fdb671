"""Output folders that tcplab writes whole or not at all, and never over a user's files.

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
from pathlib import Path
from typing import Callable

from tcplab.errors import UserError

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


def check_output_dir(out: str | Path, option: str = "--out") -> Path:
    """Refuse (UserError) an output folder tcplab may not replace; return it resolved.
    Allowed: a missing path (its parent may be created), an empty folder, or a
    folder holding a previous tcplab output and nothing else."""
    given = str(out)
    p = Path(out).expanduser().absolute()
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
    tcplab output: `check_output_dir`). Returns the output path."""
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
