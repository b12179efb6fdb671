"""`tcplab lab [SCENARIO]`: a live laboratory in the browser.

Starts a local web server on 127.0.0.1 (a free port unless --port), prints its
URL with a random access token (only who holds it can use the lab), and opens
the browser unless --no-browser. Ctrl-C stops the server and every run it started.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from urllib.parse import quote

from tcplab.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("lab", help="a live laboratory in the browser: every engine side by side, plots, why",
                       description=__doc__)
    p.add_argument("scenario", nargs="?", default=None,
                   help="scenario to open: an example's name (c-parallel-sack) or a TOML file")
    p.add_argument("--port", type=int, default=0, metavar="N", help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser; only print the URL")
    p.add_argument("--report", default=None, metavar="DIR",
                   help="a `tcplab reproduce --out DIR` report whose verdicts and figures the gallery shows "
                        "(default: ./reports if there is one)")
    p.set_defaults(func=main)


def _fragment(scenario: str | None) -> str:
    """The page's address fragment for SCENARIO: an example by its name; another TOML
    file whole (as a pasted one travels in a shared link)."""
    import base64

    from tcplab.lab.worker import MAX_TOML_BYTES
    from tcplab.resources import scenario_files

    if scenario is None:
        return ""
    names = {p.stem for p in scenario_files()}
    path = Path(scenario)
    if scenario in names or (path.stem in names and not path.is_file()) or \
            (path.is_file() and path.stem in names and path.resolve() in {p.resolve() for p in scenario_files()}):
        return f"#scenario={quote(path.stem)}"
    if not path.is_file():
        raise UserError(f"{scenario}: no such file, nor one of the example scenarios ({', '.join(sorted(names))})")
    data = path.read_bytes()
    if len(data) > MAX_TOML_BYTES:
        raise UserError(f"{scenario}: {len(data)} bytes, more than the lab's limit of {MAX_TOML_BYTES} bytes")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{scenario}: not UTF-8 text") from None
    return "#toml=" + base64.urlsafe_b64encode(data).decode().rstrip("=")


def _listen(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1:port (0: a free port), held until the server takes it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise UserError(f"--port {port}: cannot listen on 127.0.0.1:{port} ({exc.strerror})") from None
    sock.listen(128)
    return sock


def main(args) -> int:
    try:
        import uvicorn
    except ImportError:
        raise UserError("the lab needs starlette and uvicorn: pip install starlette uvicorn") from None
    from tcplab.lab.server import Lab, create_app

    fragment = _fragment(args.scenario)
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port: expected 0..65535, got {args.port}")
    report = Path(args.report) if args.report else (Path("reports") if (Path("reports") / "index.html").is_file() else None)
    if report is not None and not report.is_dir():
        raise UserError(f"--report {args.report}: no such folder")
    sock = _listen(args.port)
    port = sock.getsockname()[1]
    lab = Lab(report=report)
    try:  # from here on, whatever happens, the lab's workers and folder go with it
        app = create_app(lab)
        url = f"http://127.0.0.1:{port}/?token={lab.token}{fragment}"
        # open event streams must not hold up Ctrl-C: they get a second to end
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=1)
        server = uvicorn.Server(config)
        print(f"tcplab lab: serving on http://127.0.0.1:{port}/ — open:\n    {url}\n"
              f"(Ctrl-C stops the lab and its runs)\n"
              f"working folder {lab.folder} (removed when the lab stops)", flush=True)
        if not args.no_browser:
            import webbrowser

            webbrowser.open(url)
        server.run(sockets=[sock])
    finally:
        lab.close()
        sock.close()
    print("tcplab lab: stopped", file=sys.stderr)
    return 0
